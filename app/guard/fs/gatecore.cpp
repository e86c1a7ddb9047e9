#include "gatecore.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>

namespace leasehold::fsgate::detail {

FileHandle::~FileHandle()
{
    if (fd >= 0)
        ::close(fd);
    if (pinnedIn)
        pinnedIn->unpin(*inode);
}

DirHandle::~DirHandle()
{
    if (fd >= 0)
        ::close(fd);
}

FdPath::FdPath(int fd)
{
    std::snprintf(m_text, sizeof m_text, "/proc/self/fd/%d", fd);
}

DataFd::DataFd(GateCore &gate, fuse_ino_t ino, const fuse_file_info *fi, int flags)
    : m_handle(handleOf(fi))
{
    if (m_handle) {
        m_fd = m_handle->fd;
        return;
    }
    // An open file keeps its inode known to the kernel: `ino` is valid for the whole request.
    const InodeFd pathFd(gate.inodes(), gate.inodes().at(ino));
    if ((m_error = pathFd.error()))
        return;
    m_fd = retryEintr([&] { return ::open(FdPath(pathFd.fd()).c_str(), flags | O_CLOEXEC); });
    if (m_fd == -1)
        m_error = errno;
}

DataFd::~DataFd()
{
    if (!m_handle && m_fd >= 0)
        ::close(m_fd);
}

int writeFlags(const fuse_file_info *fi)
{
    return O_WRONLY | (fi ? fi->flags & (O_APPEND | O_SYNC | O_DSYNC) : 0);
}

Invalidation &Invalidation::inode(const InodeKey &key)
{
    if (m_count < m_items.size())
        m_items[m_count++] = BusItem{BusItem::InodeItem, key, {}};
    return *this;
}

Invalidation &Invalidation::entry(const InodeKey &parent, std::string_view name)
{
    if (m_count < m_items.size())
        m_items[m_count++] = BusItem{BusItem::EntryItem, parent, name};
    return *this;
}

GateCore::GateCore(const GateSettings &settings, GatePolicy &policy, int rootFd)
    : m_settings(settings)
    , m_policy(policy)
    , m_inodes(rootFd, settings.fdBudget)
    , m_watch(m_inodes, settings.maxWatches)
    , m_namer(rootFd)
{
    m_inodes.onUnwatch = [this](int wd) { m_watch.forgotten(wd); };
}

GateCore::~GateCore()
{
    m_watch.stop();
    stopInvalidator();
    releaseAll();
}

void GateCore::adopt(FileHandle *handle)
{
    std::lock_guard lock(m_handlesMutex);
    m_files.insert(handle);
}

void GateCore::disown(FileHandle *handle)
{
    std::lock_guard lock(m_handlesMutex);
    m_files.erase(handle);
}

void GateCore::adopt(DirHandle *handle)
{
    std::lock_guard lock(m_handlesMutex);
    m_dirs.insert(handle);
}

void GateCore::disown(DirHandle *handle)
{
    std::lock_guard lock(m_handlesMutex);
    m_dirs.erase(handle);
}

void GateCore::releaseAll()
{
    std::unordered_set<FileHandle *> files;
    std::unordered_set<DirHandle *> dirs;
    {
        std::lock_guard lock(m_handlesMutex);
        files.swap(m_files);
        dirs.swap(m_dirs);
    }
    for (FileHandle *handle : files) {
        const bool gated = handle->gated;
        const std::uint64_t id = handle->id;
        delete handle;
        if (gated)
            closed(id);
    }
    for (DirHandle *handle : dirs)
        delete handle;
}

bool GateCore::joinBus(const std::string &directory, int ackTimeoutMs, std::string *error)
{
    auto bus = std::make_unique<CoherenceBus>();
    if (!bus->join(directory, std::chrono::milliseconds(ackTimeoutMs), error))
        return false;
    m_bus = std::move(bus);
    return true;
}

int GateCore::admit(fuse_req_t req, Change &change)
{
    const fuse_ctx *ctx = fuse_req_ctx(req);
    change.pid = ctx->pid;
    change.command = command(ctx->pid);
    int verdict = 0;
    try {
        verdict = m_policy.admit(change);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "leasehold gate: policy failed: %s\n", e.what());
        verdict = EIO;
    } catch (...) {
        verdict = EIO;
    }
    if (verdict != 0 && m_settings.debug)
        std::fprintf(stderr, "leasehold gate: %s %s refused (%d) for %s[%d]\n",
                     std::string(changeOpName(change.op)).c_str(), change.path.c_str(), verdict,
                     change.command.c_str(), change.pid);
    return verdict;
}

void GateCore::done(const Change &change, int error)
{
    try {
        m_policy.done(change, error);
    } catch (...) {
        std::fprintf(stderr, "leasehold gate: policy done() threw\n");
    }
}

void GateCore::closed(std::uint64_t handle)
{
    try {
        m_policy.closed(handle);
    } catch (...) {
        std::fprintf(stderr, "leasehold gate: policy closed() threw\n");
    }
}

int GateCore::lookupEntry(Inode &parent, const char *name, fuse_entry_param &e)
{
    e = fuse_entry_param{};
    const int error = m_inodes.lookup(parent, name, e.attr, e.ino);
    if (error)
        return error;
    Inode &child = m_inodes.at(e.ino); // the kernel's reference is ours until the reply
    const bool watched = BackingWatch::watched(parent);
    child.covered.store(watched, std::memory_order_relaxed);
    if (S_ISDIR(e.attr.st_mode) && child.watch.load(std::memory_order_relaxed) == 0) {
        const InodeFd fd(m_inodes, child);
        if (!fd.error())
            m_watch.add(child, fd.fd());
    }
    e.attr_timeout = attrTimeout(child, e.attr);
    e.entry_timeout = watched ? m_settings.watchedTimeout : m_settings.entryTimeout;
    return 0;
}

// A file with another name elsewhere can change through it unseen: its folder's watch would
// not hear of it.
double GateCore::attrTimeout(const Inode &inode, const struct stat &st) const
{
    const bool seen =
        inode.covered.load(std::memory_order_relaxed) && (S_ISDIR(st.st_mode) || st.st_nlink <= 1);
    return seen ? m_settings.watchedTimeout : m_settings.attrTimeout;
}

double GateCore::negativeTimeout(const Inode &parent) const
{
    return BackingWatch::watched(parent) ? m_settings.watchedTimeout : m_settings.negativeTimeout;
}

void GateCore::startWatch()
{
    m_watch.start(m_session, [this] { namesMoved(); });
}

void GateCore::replyNewEntry(fuse_req_t req, Inode &parent, const char *name)
{
    fuse_entry_param e;
    if (const int error = lookupEntry(parent, name, e)) {
        fuse_reply_err(req, error);
        return;
    }
    if (fuse_reply_entry(req, &e) != 0)
        m_inodes.forget(e.ino, 1); // interrupted: the kernel never took the reference
}

int GateCore::pinFor(FileHandle &handle, Inode &inode, int &fd)
{
    const int error = m_inodes.pin(inode, fd);
    if (!error) {
        handle.inode = &inode;
        handle.pinnedIn = &m_inodes;
    }
    return error;
}

void GateCore::fixOwner(fuse_req_t req, int parentFd, const char *name)
{
    if (!m_settings.fixOwners)
        return;
    const fuse_ctx *ctx = fuse_req_ctx(req);
    if (ctx->uid == 0 && ctx->gid == 0)
        return;
    struct stat dir = {};
    // In a set-group-ID folder the new file already has the folder's group.
    const bool inherit = ::fstat(parentFd, &dir) == 0 && (dir.st_mode & S_ISGID);
    (void)::fchownat(parentFd, name, ctx->uid, inherit ? static_cast<gid_t>(-1) : ctx->gid,
                     AT_SYMLINK_NOFOLLOW);
}

} // namespace leasehold::fsgate::detail

#include "gatecore.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>

namespace leasehold::fsgate::detail {

namespace {

std::int64_t steadyMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

} // namespace

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

// /proc/<pid>/comm costs three system calls: remember it for a little while. A command that
// execs another program under the same pid is renamed within two seconds.
std::string GateCore::command(int pid)
{
    const std::int64_t now = steadyMs();
    {
        std::lock_guard lock(m_commandMutex);
        auto it = m_commands.find(pid);
        if (it != m_commands.end() && now - it->second.at < 2000)
            return it->second.name;
    }
    char path[40];
    std::snprintf(path, sizeof path, "/proc/%d/comm", pid);
    std::string name;
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[64];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        ::close(fd);
        if (n > 0)
            name.assign(buf, static_cast<std::size_t>(buf[n - 1] == '\n' ? n - 1 : n));
    }
    std::lock_guard lock(m_commandMutex);
    if (m_commands.size() > 4096)
        m_commands.clear();
    m_commands[pid] = Command{name, now};
    return name;
}

int GateCore::nameOf(Inode &inode, std::string &out)
{
    const InodeFd fd(m_inodes, inode);
    return fd.error() ? fd.error() : nameVia(inode, fd.fd(), out);
}

// `fd` is open on `inode`: its O_PATH fd or an open handle's.
int GateCore::nameVia(Inode &inode, int fd, std::string &out)
{
    switch (m_namer.name(fd, out)) {
    case PathNamer::Result::Named:
        return 0;
    case PathNamer::Result::LinkedElsewhere:
        return nameLinked(inode, out);
    case PathNamer::Result::Outside:
    case PathNamer::Result::Failed:
        break;
    }
    // What cannot be named cannot be judged: refuse rather than guess.
    if (m_settings.debug)
        std::fprintf(stderr, "leasehold gate: cannot name fd %d\n", fd);
    return EACCES;
}

// The fd's own name was removed but another link remains: use the last name the file was
// reached by, once checked to still be this file.
int GateCore::nameLinked(Inode &inode, std::string &out)
{
    std::string child;
    const int parentFd = m_inodes.lastName(inode, child);
    if (parentFd < 0)
        return EACCES;
    struct stat st = {};
    int error = EACCES;
    if (::fstatat(parentFd, child.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        keyOf(st) == inode.key &&
        m_namer.childName(parentFd, child, out) == PathNamer::Result::Named)
        error = 0;
    ::close(parentFd);
    return error;
}

int GateCore::nameOfChild(Inode &parent, const char *name, std::string &out)
{
    const int error = nameOf(parent, out);
    if (error == 0)
        PathNamer::join(out, name);
    return error;
}

int GateCore::handlePath(FileHandle &handle, std::string &out)
{
    const std::uint64_t epoch = m_nameEpoch.load(std::memory_order_acquire);
    std::lock_guard lock(handle.mutex);
    if (handle.pathEpoch != epoch) {
        const int error = handle.fd >= 0 ? nameVia(*handle.inode, handle.fd, handle.path)
                                         : nameOf(*handle.inode, handle.path);
        if (error)
            return error;
        handle.pathEpoch = epoch;
    }
    out = handle.path;
    return 0;
}

void GateCore::publish(const Invalidation &what)
{
    m_watch.own(what.items());
    if (m_bus)
        m_bus->publish(what.items());
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

// Attributes are dropped here, synchronously, before the acknowledgement: that never waits
// (the kernel only bumps a version). Names take their folder's lock in the kernel, which an
// operation of ours may hold while it waits for the very gate we are answering: two gates
// changing one folder at once would each wait for the other. So names go to the invalidator,
// and the acknowledgement waits for them at most kNameWait, and not at all while the
// invalidator is already stuck on a lock. Normally they are done in microseconds and the ack is
// strict; in that one case it is not, and the name is dropped the moment the folder's own
// operation ends.
void GateCore::applyRemote(std::span<const BusItem> items)
{
    constexpr auto kNameWait = std::chrono::milliseconds(5);
    if (!m_session)
        return;
    m_watch.own(items); // invalidated here: the watch need not do it again
    std::vector<Job> names, pages;
    for (const BusItem &item : items) {
        if (item.kind == BusItem::InodeItem) {
            const fuse_ino_t ino = m_inodes.noteRemoteChange(item.key);
            if (ino == 0)
                continue;
            fuse_lowlevel_notify_inval_inode(m_session, ino, -1, 0);
            pages.push_back(Job{ino, {}});
        } else {
            namesMoved();
            if (const fuse_ino_t parent = m_inodes.find(item.key))
                names.push_back(Job{parent, std::string(item.name)});
        }
    }
    if (names.empty() && pages.empty())
        return;
    std::unique_lock lock(m_queueMutex);
    if (m_queue.size() > 65536)
        return; // a stuck invalidator: the timeouts still bound staleness
    for (Job &job : names)
        m_queue.push_back(std::move(job));
    const std::uint64_t namesDone = m_queued += names.size();
    for (Job &job : pages)
        m_queue.push_back(std::move(job));
    m_queued += pages.size();
    m_queueWake.notify_one();
    const auto now = std::chrono::steady_clock::now();
    const bool stuck = m_busySince != decltype(m_busySince){} && now - m_busySince > kNameWait;
    if (!names.empty() && !stuck)
        m_doneWake.wait_until(lock, now + kNameWait,
                              [&] { return m_finished >= namesDone || m_stopInvalidator; });
}

void GateCore::dropPages(fuse_ino_t ino)
{
    std::lock_guard lock(m_queueMutex);
    m_queue.push_back(Job{ino, {}});
    ++m_queued;
    m_queueWake.notify_one();
}

void GateCore::startInvalidator()
{
    m_stopInvalidator = false;
    m_invalidator = std::thread([this] { invalidatorLoop(); });
}

void GateCore::stopInvalidator()
{
    if (!m_invalidator.joinable())
        return;
    {
        std::lock_guard lock(m_queueMutex);
        m_stopInvalidator = true;
    }
    m_queueWake.notify_one();
    m_doneWake.notify_all();
    m_invalidator.join();
}

void GateCore::invalidatorLoop()
{
    std::vector<Job> batch;
    for (;;) {
        {
            std::unique_lock lock(m_queueMutex);
            m_busySince = {};
            m_queueWake.wait(lock, [this] { return m_stopInvalidator || !m_queue.empty(); });
            if (m_stopInvalidator)
                return;
            batch.swap(m_queue);
            m_busySince = std::chrono::steady_clock::now();
        }
        // A number forgotten meanwhile is unknown to the kernel (ENOENT) or, reused, loses
        // some cache it did not need to: harmless either way.
        for (const Job &job : batch) {
            if (job.name.empty())
                fuse_lowlevel_notify_inval_inode(m_session, job.ino, 0, 0);
            else // libfuse sends the terminating NUL too: name is a std::string
                fuse_lowlevel_notify_inval_entry(m_session, job.ino, job.name.c_str(),
                                                 job.name.size());
            std::lock_guard lock(m_queueMutex);
            ++m_finished;
            m_doneWake.notify_all();
        }
        batch.clear();
    }
}

} // namespace leasehold::fsgate::detail

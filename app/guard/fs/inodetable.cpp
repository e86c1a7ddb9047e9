#include "inodetable.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace leasehold::fsgate::detail {

namespace {

bool sameTime(const struct timespec &a, const struct timespec &b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// Reopening climbs parked folders; a tree deeper than this answers ESTALE.
constexpr int kMaxReopenDepth = 256;

} // namespace

Inode::~Inode()
{
    if (const int f = fd.load(); f >= 0)
        ::close(f);
}

InodeTable::InodeTable(int rootFd, std::size_t fdBudget)
{
    struct stat st = {};
    ::fstat(rootFd, &st);
    auto [it, inserted] = m_inodes.try_emplace(keyOf(st));
    (void)inserted;
    m_root = &it->second;
    m_root->fd = rootFd;
    m_root->key = keyOf(st);
    m_root->type = S_IFDIR;
    m_root->nlookup = 1; // the kernel's implicit reference, never forgotten
    if (fdBudget == 0) {
        struct rlimit limit = {};
        ::getrlimit(RLIMIT_NOFILE, &limit);
        const std::size_t cur = limit.rlim_cur == RLIM_INFINITY ? 1u << 20 : limit.rlim_cur;
        fdBudget = std::max<std::size_t>(64, std::min(cur * 3 / 4, cur > 512 ? cur - 512 : 64));
    }
    m_budget = fdBudget;
}

InodeTable::~InodeTable() = default;

int InodeTable::lookup(Inode &parent, const char *name, struct stat &st, fuse_ino_t &ino)
{
    const InodeFd parentFd(*this, parent);
    if (parentFd.error())
        return parentFd.error();
    // Stat first: most lookups are revalidations of inodes the table already holds, which then
    // cost one system call instead of open + stat + close.
    if (::fstatat(parentFd.fd(), name, &st, AT_SYMLINK_NOFOLLOW) == -1)
        return errno;
    {
        std::lock_guard lock(m_mutex);
        auto it = m_inodes.find(keyOf(st));
        if (it != m_inodes.end()) {
            Inode &known = it->second;
            if (&known != m_root)
                ++known.nlookup;
            nameLocked(known, parent, name);
            known.used.store(true, std::memory_order_relaxed);
            ino = nodeId(known);
            return 0;
        }
    }
    const int fd = ::openat(parentFd.fd(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd == -1)
        return errno;
    // The name may have been replaced between the stat and the open: the fd is the truth.
    if (::fstat(fd, &st) == -1) {
        const int error = errno;
        ::close(fd);
        return error;
    }
    std::unique_lock lock(m_mutex);
    auto [it, inserted] = m_inodes.try_emplace(keyOf(st));
    Inode &inode = it->second;
    if (inserted) {
        inode.key = keyOf(st);
        inode.type = st.st_mode & S_IFMT;
        makeRoomLocked();
        inode.fd.store(fd);
        linkLocked(inode);
    }
    if (&inode != m_root)
        ++inode.nlookup;
    nameLocked(inode, parent, name);
    ino = nodeId(inode);
    lock.unlock();
    if (!inserted)
        ::close(fd); // another thread looked the same inode up meanwhile
    return 0;
}

void InodeTable::addRef(Inode &inode, const Inode &parent, const char *name)
{
    std::lock_guard lock(m_mutex);
    if (&inode != m_root)
        ++inode.nlookup;
    nameLocked(inode, parent, name);
}

void InodeTable::forget(fuse_ino_t ino, std::uint64_t n)
{
    Inode &inode = at(ino);
    decltype(m_inodes)::node_type gone;
    int watch = 0;
    {
        std::lock_guard lock(m_mutex);
        if (&inode == m_root)
            return;
        if (n > inode.nlookup) {
            std::fprintf(stderr, "leasehold gate: forget(%llu) below zero\n",
                         static_cast<unsigned long long>(n));
            n = inode.nlookup;
        }
        inode.nlookup -= n;
        if (inode.nlookup == 0) {
            if (inode.fd.load() >= 0)
                unlinkLocked(inode);
            watch = inode.watch.load();
            gone = m_inodes.extract(inode.key);
        }
    }
    if (watch > 0 && onUnwatch)
        onUnwatch(watch);
    // `gone` closes the fd here, outside the lock: the last close of a deleted file frees it.
}

void InodeTable::renamed(const InodeKey &key, const InodeKey &parent, const char *name)
{
    std::lock_guard lock(m_mutex);
    auto it = m_inodes.find(key);
    if (it == m_inodes.end() || &it->second == m_root)
        return;
    it->second.parent = parent;
    it->second.name = name;
}

void InodeTable::keepResident(const InodeKey &key)
{
    std::lock_guard lock(m_mutex);
    auto it = m_inodes.find(key);
    if (it == m_inodes.end() || it->second.kept || &it->second == m_root)
        return;
    Inode &inode = it->second;
    inode.kept = true;
    inode.pins.fetch_add(1);      // a pin parking always respects; forget erases regardless
    (void)reopenLocked(inode, 0); // parked: while its name still leads to it
}

// The pin and the parking each write one atomic and then read the other's (sequentially
// consistent): either the pinner sees the fd gone and reopens, or the parker sees the pin and
// puts the fd back. So a pinned fd is never closed under a handler.
int InodeTable::pin(Inode &inode, int &fd)
{
    inode.used.store(true, std::memory_order_relaxed);
    inode.pins.fetch_add(1);
    fd = inode.fd.load();
    if (fd >= 0)
        return 0;
    std::lock_guard lock(m_mutex);
    const int error = reopenLocked(inode, 0);
    if (error) {
        inode.pins.fetch_sub(1);
        return error;
    }
    fd = inode.fd.load();
    return 0;
}

// Requires: m_mutex held, `inode` pinned.
int InodeTable::reopenLocked(Inode &inode, int depth)
{
    if (inode.fd.load() >= 0)
        return 0;
    auto it = inode.name.empty() ? m_inodes.end() : m_inodes.find(inode.parent);
    if (it == m_inodes.end() || depth > kMaxReopenDepth)
        return ESTALE;
    Inode &parent = it->second;
    parent.pins.fetch_add(1);
    int error = reopenLocked(parent, depth + 1);
    int fd = -1;
    if (!error) {
        fd = ::openat(parent.fd.load(), inode.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st = {};
        if (fd == -1) {
            error = errno == ENOENT ? ESTALE : errno;
        } else if (::fstat(fd, &st) == -1 || !(keyOf(st) == inode.key)) {
            ::close(fd);
            error = ESTALE; // renamed or replaced meanwhile: the kernel looks it up again
        }
    }
    parent.pins.fetch_sub(1);
    if (error)
        return error;
    makeRoomLocked();
    inode.fd.store(fd);
    linkLocked(inode);
    return 0;
}

// Requires: m_mutex held. Parks cold inodes until one more fd fits in the budget; gives up
// (the budget is soft) after two turns of the clock when everything is pinned or hot.
void InodeTable::makeRoomLocked()
{
    for (std::size_t steps = 0; m_resident >= m_budget && m_hand && steps < 2 * m_resident + 2;
         ++steps) {
        Inode &candidate = *m_hand;
        m_hand = m_hand->next;
        if (&candidate == m_root)
            continue;
        if (candidate.used.exchange(false, std::memory_order_relaxed))
            continue;
        parkLocked(candidate);
    }
}

// Requires: m_mutex held.
bool InodeTable::parkLocked(Inode &inode)
{
    if (inode.name.empty() || inode.pins.load() != 0)
        return false;
    const int fd = inode.fd.exchange(-1);
    if (fd < 0)
        return false;
    if (inode.pins.load() != 0) {
        inode.fd.store(fd); // a handler pinned it meanwhile and may be using fd
        return false;
    }
    unlinkLocked(inode);
    ::close(fd);
    return true;
}

// Requires: m_mutex held; `inode` resident, not in the ring yet.
void InodeTable::linkLocked(Inode &inode)
{
    if (!m_hand) {
        inode.prev = inode.next = &inode;
        m_hand = &inode;
    } else {
        // Just behind the hand: the newest is the last the clock reaches.
        inode.next = m_hand;
        inode.prev = m_hand->prev;
        m_hand->prev->next = &inode;
        m_hand->prev = &inode;
    }
    ++m_resident;
}

// Requires: m_mutex held; `inode` in the ring.
void InodeTable::unlinkLocked(Inode &inode)
{
    if (!inode.next)
        return;
    if (inode.next == &inode) {
        m_hand = nullptr;
    } else {
        if (m_hand == &inode)
            m_hand = inode.next;
        inode.prev->next = inode.next;
        inode.next->prev = inode.prev;
    }
    inode.prev = inode.next = nullptr;
    --m_resident;
}

// Requires: m_mutex held.
void InodeTable::nameLocked(Inode &inode, const Inode &parent, const char *name)
{
    if (&inode == m_root || (inode.parent == parent.key && inode.name == name))
        return;
    inode.parent = parent.key;
    inode.name = name;
}

bool InodeTable::keepCache(Inode &inode, const struct stat &st)
{
    CacheStamp now;
    now.mtime = st.st_mtim;
    now.ctime = st.st_ctim;
    now.size = st.st_size;
    now.remoteChanges = inode.remoteChanges.load(std::memory_order_acquire);
    std::lock_guard lock(m_mutex);
    const CacheStamp &was = inode.stamp;
    const bool keep = was.size == now.size && sameTime(was.mtime, now.mtime) &&
                      sameTime(was.ctime, now.ctime) && was.remoteChanges == now.remoteChanges;
    inode.stamp = now;
    return keep;
}

fuse_ino_t InodeTable::noteRemoteChange(const InodeKey &key)
{
    std::lock_guard lock(m_mutex);
    auto it = m_inodes.find(key);
    if (it == m_inodes.end())
        return 0;
    it->second.remoteChanges.fetch_add(1, std::memory_order_release);
    return nodeId(it->second);
}

fuse_ino_t InodeTable::find(const InodeKey &key)
{
    std::lock_guard lock(m_mutex);
    auto it = m_inodes.find(key);
    return it == m_inodes.end() ? 0 : nodeId(it->second);
}

int InodeTable::lastName(const Inode &inode, std::string &name)
{
    std::lock_guard lock(m_mutex);
    auto it = inode.name.empty() ? m_inodes.end() : m_inodes.find(inode.parent);
    if (it == m_inodes.end())
        return -1;
    Inode &parent = it->second;
    parent.pins.fetch_add(1);
    int fd = -1;
    if (reopenLocked(parent, 0) == 0)
        fd = ::fcntl(parent.fd.load(), F_DUPFD_CLOEXEC, 0); // outlives the lock and the parent
    parent.pins.fetch_sub(1);
    name = inode.name;
    return fd;
}

int InodeTable::dupFd(const InodeKey &key)
{
    std::lock_guard lock(m_mutex);
    auto it = m_inodes.find(key);
    if (it == m_inodes.end())
        return -1;
    Inode &inode = it->second;
    inode.pins.fetch_add(1);
    int fd = -1;
    if (reopenLocked(inode, 0) == 0)
        fd = ::fcntl(inode.fd.load(), F_DUPFD_CLOEXEC, 0);
    inode.pins.fetch_sub(1);
    return fd;
}

void InodeTable::unwatched(const InodeKey &key, int wd)
{
    std::lock_guard lock(m_mutex);
    if (auto it = m_inodes.find(key); it != m_inodes.end())
        it->second.watch.compare_exchange_strong(wd, -1);
}

std::vector<InodeTable::Known> InodeTable::known()
{
    std::vector<Known> out;
    std::lock_guard lock(m_mutex);
    out.reserve(m_inodes.size());
    for (auto &[key, inode] : m_inodes) {
        if (&inode == m_root)
            continue;
        auto parent = inode.name.empty() ? m_inodes.end() : m_inodes.find(inode.parent);
        out.push_back(Known{nodeId(inode), parent == m_inodes.end() ? 0 : nodeId(parent->second),
                            inode.name});
    }
    return out;
}

std::size_t InodeTable::size()
{
    std::lock_guard lock(m_mutex);
    return m_inodes.size();
}

std::size_t InodeTable::residentFds()
{
    std::lock_guard lock(m_mutex);
    return m_resident;
}

} // namespace leasehold::fsgate::detail

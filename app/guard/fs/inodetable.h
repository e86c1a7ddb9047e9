#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#endif
#include <fuse_lowlevel.h>

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// The gate's inode table: every file the kernel knows through the gate, keyed by its backing
// (st_dev, st_ino), with the kernel's lookup count and an O_PATH file descriptor on it. The FUSE
// inode number handed out is the address of the Inode, so it stays valid exactly as long as the
// kernel may use it: until forget brings the count to zero. Every operation works with *at()
// calls relative to these descriptors and never walks a path again.
//
// Descriptors are budgeted (RLIMIT_NOFILE may be far below the number of inodes the kernel
// caches: 20 000 where CAP_SYS_RESOURCE is missing). Past the budget, the coldest inodes (a
// clock sweep) are parked: their fd is closed, and reopened on next use from the parent's fd
// and the name the inode was last seen by, checked to still be the same (dev, ino). A parked
// inode whose name went elsewhere answers ESTALE, on which the kernel looks the name up again.
// Handlers use descriptors only through InodeFd, which pins them: a pinned fd is never closed.
//
// Thread-safety: all members may be called from any worker thread at once. One mutex guards the
// map, lookup counts, names, stamps and the clock; pinning is lock-free unless it must reopen.
//
// Invariants: one Inode per backing (dev, ino); nlookup > 0 for every Inode but the root; the
// root is never erased nor parked; a resident fd refers to the inode's key.
namespace leasehold::fsgate::detail {

struct InodeKey
{
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    bool operator==(const InodeKey &) const = default;
};

inline InodeKey keyOf(const struct stat &st)
{
    return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

struct InodeKeyHash
{
    std::size_t operator()(const InodeKey &k) const noexcept
    {
        return static_cast<std::size_t>((k.ino * 0x9E3779B97F4A7C15ull) ^ k.dev);
    }
};

// What the backing file looked like when the gate last let the kernel fill its page cache for
// it: close-to-open coherence compares it on every open.
struct CacheStamp
{
    struct timespec mtime = {};
    struct timespec ctime = {};
    off_t size = -1;
    std::uint32_t remoteChanges = 0;
};

struct Inode
{
    std::atomic<int> fd{-1}; // O_PATH | O_NOFOLLOW, owned; -1 while parked
    std::atomic<std::uint32_t> pins{0};
    std::atomic<bool> used{false};               // the clock's second chance
    std::atomic<std::uint32_t> remoteChanges{0}; // changes other gates reported
    std::atomic<int> watch{0};        // folders: the inotify watch (> 0), none yet (0), none (< 0)
    std::atomic<bool> covered{false}; // its folder was watched when the kernel was last given it
    InodeKey key;
    mode_t type = 0;           // S_IFMT bits
    std::uint64_t nlookup = 0; // table mutex
    CacheStamp stamp;          // table mutex
    InodeKey parent;           // table mutex: where it was last seen, to reopen and to name
    std::string name;          // table mutex
    bool kept = false;         // table mutex: see InodeTable::keepResident
    Inode *prev = nullptr;     // table mutex: the clock's ring of resident inodes
    Inode *next = nullptr;

    Inode() = default;
    Inode(const Inode &) = delete;
    Inode &operator=(const Inode &) = delete;
    ~Inode();

    bool isDir() const { return S_ISDIR(type); }
};

class InodeTable
{
public:
    // Takes ownership of `rootFd` (O_PATH, a directory). `fdBudget` 0: three quarters of
    // RLIMIT_NOFILE, the rest left for open files, folders and sockets.
    explicit InodeTable(int rootFd, std::size_t fdBudget = 0);
    InodeTable(const InodeTable &) = delete;
    InodeTable &operator=(const InodeTable &) = delete;
    ~InodeTable();

    Inode &root() { return *m_root; }
    // Requires: `ino` is FUSE_ROOT_ID or a number this table handed out and not yet forgot.
    Inode &at(fuse_ino_t ino)
    {
        return ino == FUSE_ROOT_ID ? *m_root : *reinterpret_cast<Inode *>(ino);
    }
    fuse_ino_t nodeId(const Inode &inode) const
    {
        return &inode == m_root ? FUSE_ROOT_ID : reinterpret_cast<fuse_ino_t>(&inode);
    }

    // Looks `name` up below `parent`: 0 with `st` and `ino` filled and the lookup count raised
    // by one (the kernel now holds that reference), or the errno.
    int lookup(Inode &parent, const char *name, struct stat &st, fuse_ino_t &ino);
    // One more kernel reference on an inode already known (link replies with its entry).
    void addRef(Inode &inode, const Inode &parent, const char *name);
    // The kernel dropped `n` references.
    void forget(fuse_ino_t ino, std::uint64_t n);
    // `key` (if known) now goes by `name` in `parent`.
    void renamed(const InodeKey &key, const InodeKey &parent, const char *name);
    // A name of `key` (if known) is about to be removed: its fd is reopened if parked and never
    // parked again, until forget. It could not be reopened by that name, and a file the kernel
    // opened without asking (zero-open) has no handle of its own to go on reading or writing
    // through once unlinked.
    void keepResident(const InodeKey &key);

    // Pinning (see InodeFd): 0 with `fd` set, or an errno (ESTALE: its name went elsewhere).
    int pin(Inode &inode, int &fd);
    void unpin(Inode &inode) { inode.pins.fetch_sub(1); }

    // Close-to-open: whether the kernel may keep the cached pages of `inode` given what its
    // backing file looks like now (`st`); records `st` as the new stamp.
    bool keepCache(Inode &inode, const struct stat &st);
    // Another gate changed `key`: 0 when the kernel cannot have it cached, else its number.
    fuse_ino_t noteRemoteChange(const InodeKey &key);
    // The FUSE number of `key` if known, else 0.
    fuse_ino_t find(const InodeKey &key);
    // Where `inode` was last seen: a dup of its parent's fd (the caller closes it) and the
    // name; -1 if not known.
    int lastName(const Inode &inode, std::string &name);

    // A dup of the fd of `key` (the caller closes it), or -1 if not known.
    int dupFd(const InodeKey &key);
    // `key` (if known) lost its watch `wd`.
    void unwatched(const InodeKey &key, int wd);
    // Every known inode but the root, with its FUSE number, its last parent's and its name.
    struct Known
    {
        fuse_ino_t ino = 0;
        fuse_ino_t parent = 0;
        std::string name;
    };
    std::vector<Known> known();
    // Called with the watch of a folder forgotten (outside the table's lock).
    std::function<void(int)> onUnwatch;

    std::size_t size();
    std::size_t residentFds();

private:
    int reopenLocked(Inode &inode, int depth);
    void makeRoomLocked();
    bool parkLocked(Inode &inode);
    void linkLocked(Inode &inode);
    void unlinkLocked(Inode &inode);
    void nameLocked(Inode &inode, const Inode &parent, const char *name);

    std::mutex m_mutex;
    // Values are stable in memory across rehashing: their addresses are the FUSE numbers.
    std::unordered_map<InodeKey, Inode, InodeKeyHash> m_inodes;
    Inode *m_root = nullptr;
    Inode *m_hand = nullptr; // the clock's hand in the ring
    std::size_t m_resident = 0;
    std::size_t m_budget = 0;
};

// A pinned descriptor of an inode, for one handler's use: reopened if it was parked.
// Requires: it goes out of scope before the handler replies. A reply may hand the kernel's last
// reference back, and the forget that follows on another worker erases the Inode.
class InodeFd
{
public:
    InodeFd(InodeTable &table, Inode &inode)
        : m_table(table)
        , m_inode(inode)
        , m_error(table.pin(inode, m_fd))
    {}
    InodeFd(const InodeFd &) = delete;
    InodeFd &operator=(const InodeFd &) = delete;
    ~InodeFd()
    {
        if (m_error == 0)
            m_table.unpin(m_inode);
    }

    int fd() const { return m_fd; }
    int error() const { return m_error; } // 0, or the errno to reply

private:
    InodeTable &m_table;
    Inode &m_inode;
    int m_fd = -1;
    int m_error;
};

} // namespace leasehold::fsgate::detail

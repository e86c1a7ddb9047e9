#pragma once

#include "backingwatch.h"
#include "coherencebus.h"
#include "gatepolicy.h"
#include "inodetable.h"
#include "pathnamer.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// What every FUSE handler of the gate shares: the inode table, the namer, the policy, the
// coherence bus and the session; plus the few steps every gated handler takes in the same order:
//
//   name the change → admit (reply its errno, having changed nothing) → system call →
//   publish to the other gates (they invalidate before we reply) → done → reply, once.
//
// Nothing of an Inode is touched after the reply (pins included): see InodeFd.
//
// Thread-safety: all members may be called from any worker thread at once, except applyRemote()
// (the control thread only) and the session/bus setters (before serving starts).
namespace leasehold::fsgate::detail {

struct GateSettings
{
    double attrTimeout = 1.0;
    double entryTimeout = 1.0;
    double negativeTimeout = 1.0;
    // Entry, negative and attribute timeouts where a watch sees every change (BackingWatch).
    double watchedTimeout = 30.0;
    long maxWatches = -1; // inotify watches at most (-1: as many as the kernel gives; 0: none)
    bool cacheReaddir = true;
    bool readdirPlus = true;
    bool readdirPlusAuto = true;
    bool readXattrs = false;
    bool splice = false;
    bool zeroOpen = true; // see GateFs::Options::zeroOpen
    bool parallelDirops = false;
    bool debug = false;
    bool fixOwners = false;   // the gate runs as root: new files are given to their creator
    std::size_t fdBudget = 0; // O_PATH descriptors kept open at most (0: from RLIMIT_NOFILE)
};

// An open file: fi->fh points to one from open/create until release. In zero-open mode only
// create makes them; files the kernel opened without asking carry fh 0 (see DataFd).
struct FileHandle
{
    int fd = -1;
    std::uint64_t id = 0;           // the policy's handle, never reused
    Inode *inode = nullptr;         // valid while open: an open file pins its inode in the kernel
    InodeTable *pinnedIn = nullptr; // the inode's fd stays resident while the file is open
    bool gated = false;             // an admitted Open/Truncate/Create: closed() is owed at release
    std::mutex mutex;               // guards the cached name below
    std::string path;
    std::uint64_t pathEpoch = ~0ull;

    ~FileHandle();
};

// An open folder: fi->fh points to one from opendir until releasedir.
struct DirHandle
{
    int fd = -1;
    std::mutex mutex;                        // readdir calls on one handle are serialised
    std::unique_ptr<std::uint64_t[]> buffer; // getdents64 output, 8-aligned
    std::size_t capacity = 0;
    std::size_t pos = 0; // next unread byte in buffer
    std::size_t end = 0;
    off_t offset = 0; // the readdir offset of the entry at `pos`
    bool eof = false;

    ~DirHandle();
};

// The few things one change invalidates in other gates: a fixed list, no allocation.
class Invalidation
{
public:
    Invalidation &inode(const InodeKey &key);
    Invalidation &entry(const InodeKey &parent, std::string_view name);
    std::span<const BusItem> items() const { return {m_items.data(), m_count}; }

private:
    std::array<BusItem, 8> m_items;
    std::size_t m_count = 0;
};

class GateCore
{
public:
    // Takes ownership of `rootFd` (an O_PATH dup of the backing folder).
    GateCore(const GateSettings &settings, GatePolicy &policy, int rootFd);
    GateCore(const GateCore &) = delete;
    GateCore &operator=(const GateCore &) = delete;
    ~GateCore();

    const GateSettings &settings() const { return m_settings; }
    InodeTable &inodes() { return m_inodes; }
    const PathNamer &namer() const { return m_namer; }
    void setSession(fuse_session *session) { m_session = session; }
    bool joinBus(const std::string &directory, int ackTimeoutMs, std::string *error);
    CoherenceBus *bus() { return m_bus.get(); }

    // Fills in the caller and asks the policy: 0, or the errno to reply.
    int admit(fuse_req_t req, Change &change);
    void done(const Change &change, int error);
    void closed(std::uint64_t handle);

    // Names for the policy: 0, or the errno to reply when the file cannot be named.
    int nameOf(Inode &inode, std::string &out);
    int nameOfChild(Inode &parent, const char *name, std::string &out);
    // A handle's name, recomputed only after something was renamed or removed.
    int handlePath(FileHandle &handle, std::string &out);
    void namesMoved() { m_nameEpoch.fetch_add(1, std::memory_order_acq_rel); }

    // Tells the other gates, and waits for them (see CoherenceBus).
    void publish(const Invalidation &what);

    std::uint64_t newHandleId() { return m_nextHandle.fetch_add(1, std::memory_order_relaxed); }

    // Looks up `name` and fills `e` for a reply (timeouts included): 0 or an errno. A folder
    // the kernel is given is watched from then on.
    int lookupEntry(Inode &parent, const char *name, fuse_entry_param &e);
    // The timeouts a reply gives: long where the backing watch sees every change.
    double attrTimeout(const Inode &inode, const struct stat &st) const;
    double negativeTimeout(const Inode &parent) const;
    BackingWatch &watch() { return m_watch; }
    void startWatch();
    // Replies with the entry of a name just made; the lookup is undone if the reply fails.
    void replyNewEntry(fuse_req_t req, Inode &parent, const char *name);
    // Pins `inode` for the handle's lifetime: 0 with `fd` set to the inode's O_PATH fd.
    int pinFor(FileHandle &handle, Inode &inode, int &fd);
    // Root gate, non-root caller: the new `name` below `parentFd` becomes the caller's.
    void fixOwner(fuse_req_t req, int parentFd, const char *name);

    // Called from the INIT request, on a worker, before its reply.
    std::function<void(fuse_conn_info *)> onInit;
    // The kernel opens folders without asking (FUSE_CAP_NO_OPENDIR_SUPPORT): set at INIT.
    std::atomic<bool> zeroOpendir{false};
    // The kernel opens files without asking (FUSE_CAP_NO_OPEN_SUPPORT): set at INIT.
    std::atomic<bool> zeroOpen{false};

    // Handles the kernel holds, tracked from just before the reply that gives them to it until
    // their release: those whose release never comes (the connection ended first) are closed,
    // and the policy told, by releaseAll() once serving has ended.
    void adopt(FileHandle *handle);
    void disown(FileHandle *handle);
    void adopt(DirHandle *handle);
    void disown(DirHandle *handle);
    // Requires: no worker is running.
    void releaseAll();

    // Drops the kernel's cached pages of `ino` soon, off this thread: a refused write-back of a
    // shared mapping left the refused bytes there (the kernel keeps the folio up to date).
    void dropPages(fuse_ino_t ino);

    // Control thread: another gate changed something.
    void applyRemote(std::span<const BusItem> items);
    void startInvalidator();
    void stopInvalidator();

private:
    std::string command(int pid);
    int nameVia(Inode &inode, int fd, std::string &out);
    int nameLinked(Inode &inode, std::string &out);
    void invalidatorLoop();

    GateSettings m_settings;
    GatePolicy &m_policy;
    InodeTable m_inodes;
    BackingWatch m_watch;
    PathNamer m_namer;
    std::unique_ptr<CoherenceBus> m_bus;
    fuse_session *m_session = nullptr;
    std::atomic<std::uint64_t> m_nameEpoch{0};
    std::atomic<std::uint64_t> m_nextHandle{1};

    struct Command
    {
        std::string name;
        std::int64_t at = 0; // steady milliseconds
    };
    std::mutex m_handlesMutex;
    std::unordered_set<FileHandle *> m_files; // m_handlesMutex
    std::unordered_set<DirHandle *> m_dirs;   // m_handlesMutex

    std::mutex m_commandMutex;
    std::unordered_map<int, Command> m_commands;

    // Invalidations that may wait on a kernel lock, off the control thread: dropping pages
    // waits for page locks, and dropping a name for its folder's lock, which an operation of
    // ours may hold while it waits on another gate's acknowledgement. Kept in order; the control
    // thread waits a little for the names (see applyRemote).
    struct Job
    {
        fuse_ino_t ino = 0;
        std::string name; // empty: drop the inode's pages
    };
    std::mutex m_queueMutex;
    std::condition_variable m_queueWake;
    std::condition_variable m_doneWake;
    std::vector<Job> m_queue;
    std::uint64_t m_queued = 0;                          // jobs ever queued
    std::uint64_t m_finished = 0;                        // jobs ever done, in order
    std::chrono::steady_clock::time_point m_busySince{}; // the batch in hand began; {} idle
    bool m_stopInvalidator = false;
    std::thread m_invalidator;
};

inline GateCore &gateOf(fuse_req_t req)
{
    return *static_cast<GateCore *>(fuse_req_userdata(req));
}
inline FileHandle &fileOf(const fuse_file_info *fi)
{
    return *reinterpret_cast<FileHandle *>(fi->fh);
}
// The request's open handle, or null: no fi, or a file opened without asking (fh 0).
inline FileHandle *handleOf(const fuse_file_info *fi)
{
    return fi && fi->fh ? reinterpret_cast<FileHandle *>(fi->fh) : nullptr;
}

// The descriptor one data request (read, write, lseek, fsync, ...) works on: the open handle's,
// or for a file the kernel opened without asking (zero-open, fh 0) one opened from the inode's
// O_PATH fd with `flags` for this request alone, and closed with this object. It holds nothing
// of the Inode, so it may live past the reply (fuse_reply_data reads from it).
class DataFd
{
public:
    DataFd(GateCore &gate, fuse_ino_t ino, const fuse_file_info *fi, int flags);
    DataFd(const DataFd &) = delete;
    DataFd &operator=(const DataFd &) = delete;
    ~DataFd();

    int fd() const { return m_fd; }
    int error() const { return m_error; } // 0, or the errno to reply
    FileHandle *handle() const { return m_handle; }

private:
    FileHandle *m_handle = nullptr;
    int m_fd = -1;
    int m_error = 0;
};
// What a file opened without asking is reopened with to write (fi->flags: the file's own flags,
// which the kernel sends with every write): appends stay appends at the backing file's end,
// whoever grew it, and synchronous writes stay synchronous. Reads reopen with O_RDONLY.
int writeFlags(const fuse_file_info *fi);
inline DirHandle &dirOf(const fuse_file_info *fi)
{
    return *reinterpret_cast<DirHandle *>(fi->fh);
}
// "/proc/self/fd/N": how an O_PATH descriptor is opened or passed to path-only calls.
struct FdPath
{
    explicit FdPath(int fd);
    const char *c_str() const { return m_text; }

private:
    char m_text[40];
};

// Retries a system call interrupted by a signal.
template<typename Call> auto retryEintr(Call call)
{
    for (;;) {
        auto r = call();
        if (r != -1 || errno != EINTR)
            return r;
    }
}

void addEntryOperations(fuse_lowlevel_ops &ops); // gateops_entries.cpp
void addFileOperations(fuse_lowlevel_ops &ops);  // gateops_files.cpp
void addDirOperations(fuse_lowlevel_ops &ops);   // gateops_dirs.cpp

} // namespace leasehold::fsgate::detail

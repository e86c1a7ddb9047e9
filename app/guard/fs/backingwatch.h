#pragma once

#include "coherencebus.h"
#include "inodetable.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>

// Changes made outside every gate (the backing folder written directly), pushed into the
// kernel's caches as they happen: an inotify watch on each backing folder the kernel was given,
// read by a thread of its own (never a FUSE handler: a notification sent from inside one can
// wait on the very folder lock the kernel holds for that request).
//
//   a name made, removed or moved in a watched folder → its entry (positive or negative) and
//     the folder's listing dropped;
//   a known file's contents changed → its attributes and cached pages dropped;
//   its attributes changed → its attributes dropped.
//
// So a folder with a watch may be given long entry, negative and attribute timeouts
// (GateSettings::watchedTimeout): the timeout only bounds what inotify cannot see. What it
// cannot see: a file with another hard link changed through that name (the event goes to the
// other folder's watchers: such files keep the short attribute timeout), a folder past the watch
// limit (fs.inotify.max_user_watches, or GateSettings::maxWatches: it keeps the short
// timeouts), and changes made by other machines on a network file system underneath. A lost
// queue (IN_Q_OVERFLOW) drops every attribute and known name.
//
// The gate's own changes produce events too. GateCore::publish() records what each one changed;
// an event on a name the gate changed within the last kOwnWindow is not replayed (the kernel
// already knows), and a content event on a file the gate wrote drops attributes only, not
// pages, so the gate's own writes never empty its page cache. Events are read in bursts, a few
// milliseconds apart, and each name is handled once per burst.
//
// Thread-safety: add(), own() and forgotten() from any worker at once; start() and stop() from
// the owning thread.
namespace leasehold::fsgate::detail {

class BackingWatch
{
public:
    // `limit` < 0: as many watches as the kernel gives.
    BackingWatch(InodeTable &inodes, long limit);
    BackingWatch(const BackingWatch &) = delete;
    BackingWatch &operator=(const BackingWatch &) = delete;
    ~BackingWatch();

    // Opens the inotify descriptor, watches the root and starts the thread.
    void start(fuse_session *session, std::function<void()> namesMoved);
    void stop();

    // Watches folder `dir` unless tried already; its fd is pinned by the caller.
    void add(Inode &dir, int fd);
    static bool watched(const Inode &dir) { return dir.watch.load(std::memory_order_relaxed) > 0; }
    // A watched folder was forgotten by the kernel: its watch goes.
    void forgotten(int wd);
    // The gate changed these (called before the change's reply).
    void own(std::span<const BusItem> items);

    std::size_t watches();

private:
    using Clock = std::chrono::steady_clock;
    struct NameKey
    {
        InodeKey dir;
        std::string name;
        bool operator==(const NameKey &) const = default;
    };
    struct NameKeyHash
    {
        std::size_t operator()(const NameKey &k) const noexcept
        {
            return InodeKeyHash()(k.dir) ^ std::hash<std::string>()(k.name);
        }
    };
    struct Pending
    {
        std::uint32_t mask = 0;
        Clock::time_point seen;
    };

    void loop();
    void readEvents(std::unordered_map<NameKey, Pending, NameKeyHash> &pending, bool &overflow);
    void apply(const NameKey &what, const Pending &event);
    void dropEverything();
    bool ownName(const NameKey &what, Clock::time_point seen);
    bool ownInode(const InodeKey &key, Clock::time_point seen);

    InodeTable &m_inodes;
    long m_limit;
    int m_fd = -1;
    int m_stopFd = -1;
    fuse_session *m_session = nullptr;
    std::function<void()> m_namesMoved;
    std::thread m_thread;
    std::atomic<long> m_count{0};

    std::mutex m_mutex;
    std::unordered_map<int, InodeKey> m_folders; // wd → folder; m_mutex

    std::mutex m_ownMutex;
    std::unordered_map<NameKey, Clock::time_point, NameKeyHash> m_ownNames;    // m_ownMutex
    std::unordered_map<InodeKey, Clock::time_point, InodeKeyHash> m_ownInodes; // m_ownMutex
};

} // namespace leasehold::fsgate::detail

#pragma once

#include "inodetable.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// The invalidation bus between the gates mounted over one backing folder. Two agents are two
// gates, two FUSE mounts, two sets of kernel caches over the same files: a change completed
// through one must not leave the other serving a stale stat, read or name.
//
// Each gate binds a unix datagram socket in a folder per backing root (under /run/leasehold when
// root, else $XDG_RUNTIME_DIR). After a change, and before its reply, the gate sends what it
// changed — backing (dev, ino) of inodes, (parent dev, ino, name) of entries — to every other
// gate and waits until each has invalidated its kernel cache and acknowledged. So by the time
// the writer's system call returns, no other gate can answer from a stale cache.
//
// Who is there: a shared counter (a mapped file in the folder) is bumped by every gate that
// joins or leaves, after binding and before mounting. A sender reads it after its change and
// rescans the folder when it moved; if it missed a joiner, that joiner bound only after the
// change was made, so it can hold nothing older. A gate killed without leaving is found out by
// the first sender that gets ECONNREFUSED, which removes its socket.
//
// A peer that does not acknowledge within the timeout (stopped, swapped out) is marked lagging
// and not waited for, for a while that doubles while it stays slow: a slow gate never stalls the
// others for long. Two gates changing one folder at once must not wait on each other through
// the kernel's folder lock: the receiver never blocks on it before acknowledging (see
// GateCore::applyRemote), so that cycle cannot form.
//
// Thread-safety: publish() is called by many worker threads at once; drain() by one thread (the
// gate's control thread) only.
namespace leasehold::fsgate::detail {

struct BusItem
{
    enum Kind : std::uint8_t { InodeItem = 1, EntryItem = 2 };
    Kind kind = InodeItem;
    InodeKey key;          // the inode, or the entry's parent folder
    std::string_view name; // EntryItem only
};

class CoherenceBus
{
public:
    CoherenceBus() = default;
    CoherenceBus(const CoherenceBus &) = delete;
    CoherenceBus &operator=(const CoherenceBus &) = delete;
    ~CoherenceBus();

    // The folder the gates of the root (dev, ino) meet in, by default.
    static std::string defaultDirectory(const InodeKey &root);

    // Binds this gate's socket in `directory` (created if missing) and announces it.
    bool join(const std::string &directory, std::chrono::milliseconds ackTimeout,
              std::string *error);
    void leave();

    int fd() const { return m_socket; } // readable when another gate sent something

    // Sends `items` to every other gate and waits (bounded) until each applied them.
    void publish(std::span<const BusItem> items);
    // Reads every pending message, passes each to `apply`, then acknowledges it.
    void drain(const std::function<void(std::span<const BusItem>)> &apply);

private:
    struct Peer
    {
        std::string name;
        std::uint64_t id = 0;
        std::chrono::steady_clock::time_point laggingUntil{};
        std::chrono::milliseconds backoff{0};
        bool dead = false;
    };

    std::uint64_t epoch() const;
    void bumpEpoch();
    void rescan(); // m_mutex held
    int takeReplySocket();
    void giveReplySocket(int fd);
    std::size_t sendAll(const char *data, std::size_t size, int from,
                        std::vector<std::uint64_t> &waitFor, bool &probing);
    void waitForAcks(int fd, std::uint64_t seq, std::vector<std::uint64_t> &waitFor);
    void markLagging(const std::vector<std::uint64_t> &ids);
    void forgiveLagging(const std::vector<std::uint64_t> &asked,
                        const std::vector<std::uint64_t> &silent);
    std::string peerAddress(const std::string &name) const;

    int m_dirFd = -1;
    int m_socket = -1;
    void *m_map = nullptr;
    std::string m_ownName;
    std::uint64_t m_id = 0;
    std::chrono::milliseconds m_ackTimeout{100};

    std::mutex m_mutex;
    std::vector<Peer> m_peers; // m_mutex
    std::uint64_t m_seenEpoch = ~0ull;
    std::vector<int> m_replySockets; // m_mutex: a pool, one per concurrent publisher
    std::uint64_t m_seq = 0;         // m_mutex
};

} // namespace leasehold::fsgate::detail

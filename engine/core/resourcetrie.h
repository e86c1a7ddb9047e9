#pragma once

#include "functionref.h"
#include "records.h"

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace leasehold {

// A path segment looked up with the hash its ResourceName computed at parse time.
struct SegmentKey
{
    std::string_view text;
    std::size_t hash;
};

struct SegmentHash
{
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    std::size_t operator()(const SegmentKey &k) const { return k.hash; }
};

struct SegmentEqual
{
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
    bool operator()(const SegmentKey &a, std::string_view b) const { return a.text == b; }
    bool operator()(std::string_view a, const SegmentKey &b) const { return a == b.text; }
};

// One node per name prefix: the scheme, then each path segment. A node lists the leases,
// parked waiters and wants on exactly its name (a pattern's: its literal prefix), and counts
// those in its whole subtree, so a conflict check visits the ancestors of a name plus only the
// parts of its subtree where something conflicting lives: the cost follows the depth of the
// name, not the number of leases. Entries of plain names on the way are conflicts by position
// alone; where a pattern is involved (an entry's or the question's) the two names are tested
// exactly (ResourceName::overlaps), so patterns cost in proportion to the patterns met. A
// pattern's own question walks the subtree of its literal prefix with its automaton and skips
// every branch it cannot reach (no name there or below matches it, so nothing there collides),
// and reads only the one child a literal segment names, or the children with the extension a
// glob fixes.
struct TrieNode
{
    TrieNode *parent = nullptr;
    std::string segment;
    std::unordered_map<std::string, std::unique_ptr<TrieNode>, SegmentHash, SegmentEqual> children;
    // The children with a '.' in their segment, by what follows the last one, so that a glob
    // that fixes it (`*.ts`) reads only the children it can match, not every file of a folder.
    std::unordered_map<std::string, std::vector<TrieNode *>, SegmentHash, SegmentEqual> byExtension;
    std::size_t extensionSlot = 0; // this node's place in its parent's byExtension list
    std::vector<LeaseRecord *> leases;
    // By (ticket, index of the waiter's resource): FIFO order. One waiter may park twice on a
    // node, for two patterns with the same literal prefix.
    std::map<std::pair<std::uint64_t, std::size_t>, Waiter *> parked;
    std::vector<WantRecord *> wants;
    // Subtree totals, this node included; index 0 shared, 1 exclusive.
    std::array<std::uint32_t, 2> subLeases{};
    std::array<std::uint32_t, 2> subParked{};
    std::uint32_t subWants = 0;
    bool idleQueued = false; // in ResourceTrie's queue of emptied nodes

    bool idle() const
    {
        return leases.empty() && parked.empty() && wants.empty() && children.empty();
    }
};

// The index behind every conflict question. Owns nodes, not records: callers add and remove
// records and keep them alive while indexed. Emptied nodes are removed after a short delay.
//
// Two claims conflict when their names overlap (one covers the other) and at least one of them
// is exclusive. A lease never conflicts with its own holder's request unless it is pending
// release; parked waiters conflict with later requests whoever made them (FIFO).
//
// Not thread-safe: owned by the engine thread.
class ResourceTrie
{
public:
    ResourceTrie() = default;
    ResourceTrie(const ResourceTrie &) = delete;
    ResourceTrie &operator=(const ResourceTrie &) = delete;

    void addLease(LeaseRecord *lease);
    void removeLease(LeaseRecord *lease);
    void addParked(Waiter *waiter, std::size_t index);
    void removeParked(Waiter *waiter, std::size_t index);
    void addWant(WantRecord *want);
    void removeWant(WantRecord *want);

    // Visits leases that conflict with a request of `self` for `name`. `visit` returns false to
    // stop. Ancestors (nearest last) and the node come first, then the subtree.
    void forEachLeaseConflict(const ResourceName &name, bool exclusive, const AgentRecord *self,
                              FunctionRef<bool(LeaseRecord *)> visit) const;
    LeaseRecord *firstLeaseConflict(const ResourceName &name, bool exclusive,
                                    const AgentRecord *self) const;

    // Visits parked waiters with a ticket below `beforeTicket` whose claims conflict with
    // `name`/`exclusive`. A waiter may be visited once per conflicting entry.
    void forEachParkedConflict(const ResourceName &name, bool exclusive, std::uint64_t beforeTicket,
                               FunctionRef<bool(Waiter *)> visit) const;
    Waiter *firstParkedConflict(const ResourceName &name, bool exclusive,
                                std::uint64_t beforeTicket) const;

    // The leases on exactly `name`, or nullptr when there are none.
    const std::vector<LeaseRecord *> *leasesAt(const ResourceName &name) const;

    // The parked waiters a claim queues behind directly, for the wait-for graph: at each node
    // that overlaps `name`, the latest earlier exclusive entry and, for an exclusive claim, the
    // shared entries after it. Everything earlier at that node is reachable through those (an
    // exclusive entry waits for all before it), so the graph stays linear in the queue length.
    // Entries of `self` are looked through: they cannot stand for others in self's own search.
    void forEachParkedBlocker(const ResourceName &name, bool exclusive, std::uint64_t beforeTicket,
                              const AgentRecord *self, FunctionRef<bool(Waiter *)> visit) const;

    // True when a want of an agent other than `self` conflicts with `name`/`exclusive`.
    bool anyWantConflict(const ResourceName &name, bool exclusive, const AgentRecord *self) const;

    // Parked waiters and wants on exactly `name` (the stampede count).
    int waitersAt(const ResourceName &name) const;

    // Every node on the path of `name`, plus every node below it holding parked waiters: the
    // places whose queues may move when something on `name` is freed.
    void collectQueues(const ResourceName &name, std::vector<TrieNode *> &out) const;

    std::size_t nodeCount() const;
    // Recomputes every subtree count and compares; false on a broken invariant.
    bool isConsistent() const;

private:
    TrieNode *ensure(const ResourceName &name);
    TrieNode *find(const ResourceName &name) const;
    void prune(TrieNode *node);

    static constexpr std::size_t kIdleCap = 1024;
    TrieNode m_root;
    std::size_t m_nodeCount = 0;
    std::deque<TrieNode *> m_idle; // emptied nodes, oldest first; removed beyond kIdleCap
};

} // namespace leasehold

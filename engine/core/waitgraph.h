#pragma once

#include "resourcetrie.h"
#include "snapshot.h"

#include <optional>
#include <string>
#include <vector>

namespace leasehold {

// A claim an agent would wait on: a resource in a class (exclusive or shared).
struct Claim
{
    const ResourceName *resource = nullptr;
    bool exclusive = true;
};

// A wait cycle: agents[0] is the requester; agents[i] waits for waitingOn[i], which
// agents[i + 1] (or agents[0], for the last) holds.
struct WaitCycle
{
    std::vector<const AgentRecord *> agents;
    std::vector<std::string> waitingOn;
};

// The wait-for graph over agents, derived on demand from the trie: an agent points at the
// holders of what its parked waits and wants conflict with, and at earlier parked waiters that
// queue ahead of it. Nothing is cached, so the graph can never disagree with the table.
//
// Not thread-safe: used on the engine thread only.
class WaitGraph
{
public:
    explicit WaitGraph(const ResourceTrie &trie)
        : m_trie(trie)
    {}

    // Would `requester`, waiting on `claims`, close a cycle? Searches every path from the
    // agents blocking the claims back to the requester; cost follows the reachable part of the
    // graph only.
    std::optional<WaitCycle> findCycle(const AgentRecord *requester,
                                       const std::vector<Claim> &claims) const;

    // The live cycles among `agents` (the queue view's deadlock list): one per strongly
    // connected part of the wait-for graph, the shortest through its smallest DID. Linear in
    // the graph's size (Tarjan), then a breadth-first search inside each part.
    std::vector<DeadlockCycle> cycles(const std::vector<AgentRecord *> &agents) const;

    struct Edge
    {
        const AgentRecord *to = nullptr;
        const ResourceName *waitingOn = nullptr; // what the source waits for (owned by its claim)
    };
    // The agents `from` waits for, once each.
    std::vector<Edge> edgesOf(const AgentRecord *from) const;

private:
    // Whether anyone waits on what `agent` holds or queues for: without such an edge into it,
    // no cycle can pass through it.
    bool hasWaitersOn(const AgentRecord *agent) const;
    void blockersOf(const AgentRecord *from, const ResourceName &name, bool exclusive,
                    std::uint64_t beforeTicket, std::vector<Edge> &out) const;

    const ResourceTrie &m_trie;
    mutable std::uint64_t m_search = 0; // numbers searches, so visited marks need no clearing
};

} // namespace leasehold

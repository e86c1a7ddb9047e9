#include "waitgraph.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace leasehold {

namespace {

constexpr std::uint64_t kAnyTicket = std::numeric_limits<std::uint64_t>::max();

void addEdge(std::vector<WaitGraph::Edge> &out, const AgentRecord *from, const AgentRecord *to,
             const ResourceName *waitingOn)
{
    if (to == from)
        return;
    for (const auto &e : out) {
        if (e.to == to)
            return;
    }
    out.push_back({to, waitingOn});
}

} // namespace

void WaitGraph::blockersOf(const AgentRecord *from, const ResourceName &name, bool exclusive,
                           std::uint64_t beforeTicket, std::vector<Edge> &out) const
{
    m_trie.forEachLeaseConflict(name, exclusive, from, [&](LeaseRecord *l) {
        addEdge(out, from, l->agent, &name);
        return true;
    });
    if (beforeTicket == 0)
        return;
    m_trie.forEachParkedBlocker(name, exclusive, beforeTicket, from, [&](Waiter *w) {
        addEdge(out, from, w->agent, &name);
        return true;
    });
}

bool WaitGraph::hasWaitersOn(const AgentRecord *agent) const
{
    bool found = false;
    auto otherAgent = [&](Waiter *w) { return !(found = w->agent != agent); };
    for (const LeaseRecord *l : agent->held) {
        // Parked waiters and wants blocked by this lease (a lease conflicts with its own
        // holder only while pending, and then no edge is drawn to oneself).
        m_trie.forEachParkedConflict(l->resource, l->exclusive, kAnyTicket, otherAgent);
        if (found || m_trie.anyWantConflict(l->resource, l->exclusive, agent))
            return true;
    }
    for (const Waiter *mine : agent->parked) {
        for (std::size_t i = 0; i < mine->resources.size() && !found; ++i) {
            m_trie.forEachParkedConflict(mine->resources[i], mine->exclusive[i], kAnyTicket,
                                         [&](Waiter *w) {
                                             found = w->agent != agent && w->ticket > mine->ticket;
                                             return !found;
                                         });
        }
        if (found)
            return true;
    }
    return false;
}

std::vector<WaitGraph::Edge> WaitGraph::edgesOf(const AgentRecord *from) const
{
    std::vector<Edge> out;
    for (const Waiter *w : from->parked) {
        for (std::size_t i = 0; i < w->resources.size(); ++i)
            blockersOf(from, w->resources[i], w->exclusive[i], w->ticket, out);
    }
    for (const auto &[canonical, want] : from->wants)
        blockersOf(from, want->resource, want->exclusive, 0, out);
    return out;
}

std::optional<WaitCycle> WaitGraph::findCycle(const AgentRecord *requester,
                                              const std::vector<Claim> &claims) const
{
    // Edges into an agent come only from claims on what it holds or queues for: an agent with
    // neither cannot be on a cycle, whatever the rest of the graph looks like.
    if (!hasWaitersOn(requester))
        return std::nullopt;
    std::vector<Edge> first;
    for (const Claim &c : claims)
        blockersOf(requester, *c.resource, c.exclusive, kAnyTicket, first);
    if (first.empty())
        return std::nullopt;

    // Iterative depth-first search; the stack is the current path.
    struct Frame
    {
        const AgentRecord *agent;
        const ResourceName *waitingOn; // what the previous agent waits for, held by this one
        std::vector<Edge> edges;
        std::size_t next = 0;
    };
    // Visited agents carry this search's number instead of living in a hash set.
    const std::uint64_t search = ++m_search;
    auto visit = [search](const AgentRecord *a) {
        if (a->searchMark == search)
            return false;
        a->searchMark = search;
        return true;
    };
    visit(requester);
    std::vector<Frame> stack;
    stack.reserve(16);
    for (const Edge &start : first) {
        if (!visit(start.to))
            continue;
        stack.push_back({start.to, start.waitingOn, edgesOf(start.to)});
        while (!stack.empty()) {
            Frame &top = stack.back();
            if (top.next == top.edges.size()) {
                stack.pop_back();
                continue;
            }
            const Edge edge = top.edges[top.next++];
            if (edge.to == requester) {
                WaitCycle cycle;
                cycle.agents.push_back(requester);
                cycle.waitingOn.push_back(stack.front().waitingOn->canonical());
                for (std::size_t i = 0; i < stack.size(); ++i) {
                    cycle.agents.push_back(stack[i].agent);
                    cycle.waitingOn.push_back(i + 1 < stack.size()
                                                  ? stack[i + 1].waitingOn->canonical()
                                                  : edge.waitingOn->canonical());
                }
                return cycle;
            }
            if (visit(edge.to))
                stack.push_back({edge.to, edge.waitingOn, edgesOf(edge.to)});
        }
    }
    return std::nullopt;
}

std::vector<DeadlockPair> WaitGraph::pairs(const std::vector<AgentRecord *> &agents) const
{
    std::unordered_map<const AgentRecord *, std::vector<Edge>> edges;
    for (const AgentRecord *a : agents) {
        if (!a->parked.empty() || !a->wants.empty())
            edges.emplace(a, edgesOf(a));
    }
    std::vector<DeadlockPair> out;
    for (const auto &[a, out_edges] : edges) {
        for (const Edge &ab : out_edges) {
            if (ab.to->did <= a->did) // report each pair once, smaller DID first
                continue;
            auto it = edges.find(ab.to);
            if (it == edges.end())
                continue;
            for (const Edge &ba : it->second) {
                if (ba.to == a) {
                    out.push_back(
                        {a->did, ab.to->did, ba.waitingOn->canonical(), ab.waitingOn->canonical()});
                    break;
                }
            }
        }
    }
    std::sort(out.begin(), out.end(), [](const DeadlockPair &x, const DeadlockPair &y) {
        return std::tie(x.a, x.b) < std::tie(y.a, y.b);
    });
    return out;
}

} // namespace leasehold

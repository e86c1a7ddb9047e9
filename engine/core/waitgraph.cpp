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
        if (l->heldBackUntil == 0) // a name held back (lock-delay) is nobody's: no edge
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

std::vector<DeadlockCycle> WaitGraph::cycles(const std::vector<AgentRecord *> &agents) const
{
    // The graph among agents that wait; an agent that waits for nothing is on no cycle.
    std::unordered_map<const AgentRecord *, std::vector<Edge>> edges;
    for (const AgentRecord *a : agents) {
        if (!a->parked.empty() || !a->wants.empty())
            edges.emplace(a, edgesOf(a));
    }

    // Tarjan's strongly connected components, iteratively (no recursion depth to fear).
    struct Mark
    {
        int index = -1;
        int low = 0;
        bool onStack = false;
    };
    std::unordered_map<const AgentRecord *, Mark> marks;
    std::vector<const AgentRecord *> stack;
    std::vector<std::vector<const AgentRecord *>> parts;
    int counter = 0;
    auto open = [&](const AgentRecord *v) {
        marks[v] = {counter, counter, true};
        ++counter;
        stack.push_back(v);
    };
    for (const auto &[root, rootEdges] : edges) {
        if (marks.count(root))
            continue;
        std::vector<std::pair<const AgentRecord *, std::size_t>> calls{{root, 0}};
        open(root);
        while (!calls.empty()) {
            const AgentRecord *v = calls.back().first;
            const std::vector<Edge> &out = edges.at(v);
            if (calls.back().second < out.size()) {
                const AgentRecord *w = out[calls.back().second++].to;
                if (!edges.count(w))
                    continue;
                const auto seen = marks.find(w);
                if (seen == marks.end()) {
                    open(w);
                    calls.push_back({w, 0});
                } else if (seen->second.onStack) {
                    marks[v].low = std::min(marks[v].low, seen->second.index);
                }
                continue;
            }
            calls.pop_back();
            if (!calls.empty()) {
                Mark &parent = marks[calls.back().first];
                parent.low = std::min(parent.low, marks[v].low);
            }
            if (marks[v].low != marks[v].index)
                continue;
            std::vector<const AgentRecord *> part;
            const AgentRecord *w = nullptr;
            do {
                w = stack.back();
                stack.pop_back();
                marks[w].onStack = false;
                part.push_back(w);
            } while (w != v);
            if (part.size() > 1)
                parts.push_back(std::move(part));
        }
    }

    // In each part, the shortest cycle through its smallest DID.
    std::vector<DeadlockCycle> out;
    for (const std::vector<const AgentRecord *> &part : parts) {
        const AgentRecord *start = *std::min_element(
            part.begin(), part.end(),
            [](const AgentRecord *x, const AgentRecord *y) { return x->did < y->did; });
        std::unordered_map<const AgentRecord *, std::pair<const AgentRecord *, const Edge *>> via;
        std::vector<const AgentRecord *> frontier{start};
        const AgentRecord *last = nullptr;
        const Edge *closing = nullptr;
        for (std::size_t at = 0; at < frontier.size() && !closing; ++at) {
            const AgentRecord *u = frontier[at];
            for (const Edge &e : edges.at(u)) {
                if (e.to == start) {
                    last = u;
                    closing = &e;
                    break;
                }
                if (std::find(part.begin(), part.end(), e.to) == part.end() || via.count(e.to))
                    continue;
                via.emplace(e.to, std::make_pair(u, &e));
                frontier.push_back(e.to);
            }
        }
        if (!closing)
            continue; // cannot happen in a strongly connected part; never report half a cycle
        DeadlockCycle cycle;
        cycle.steps.push_back({last->did, closing->waitingOn->canonical()});
        for (const AgentRecord *v = last; v != start;) {
            const auto &[from, edge] = via.at(v);
            cycle.steps.push_back({from->did, edge->waitingOn->canonical()});
            v = from;
        }
        std::reverse(cycle.steps.begin(), cycle.steps.end());
        out.push_back(std::move(cycle));
    }
    std::sort(out.begin(), out.end(), [](const DeadlockCycle &x, const DeadlockCycle &y) {
        return x.steps.front().agent < y.steps.front().agent;
    });
    return out;
}

} // namespace leasehold

// LeaseEngine: operator levers, queries and invariants.

#include "leaseengine_p.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace leasehold {

int LeaseEngine::releaseHolder(const std::string &op, const std::string &did,
                               const std::string &reason)
{
    int released = 0;
    if (AgentRecord *agent = m_agents.find(did)) {
        const std::vector<LeaseRecord *> held = agent->held;
        for (LeaseRecord *l : held) {
            if (!l->pending) {
                endLease(l, EndCause::Admin, op);
                ++released;
            }
        }
    }
    recordEvent(EventKind::AdminReleaseHolder, op, {}, {}, 0, reason, [&](EventFacts &f) {
        f.target = did;
        f.released = released;
    });
    settle();
    return released;
}

int LeaseEngine::releaseAll(const std::string &op)
{
    std::vector<LeaseRecord *> all;
    all.reserve(m_leases.size());
    for (auto &[id, l] : m_leases) {
        if (!l->pending)
            all.push_back(l.get());
    }
    for (LeaseRecord *l : all)
        endLease(l, EndCause::Admin, op);
    recordEvent(EventKind::AdminReleaseAll, op, {}, {}, 0, {},
                [&](EventFacts &f) { f.released = static_cast<std::int64_t>(all.size()); });
    settle();
    return static_cast<int>(all.size());
}

bool LeaseEngine::releaseLease(const std::string &op, const std::string &leaseId)
{
    auto it = m_leases.find(leaseId);
    const bool found = it != m_leases.end() && !it->second->pending;
    std::string resource;
    if (found) {
        resource = it->second->resource.canonical();
        endLease(it->second.get(), EndCause::Admin, op);
    }
    recordEvent(EventKind::AdminReleaseLease, op, resource, leaseId, 0, {},
                [&](EventFacts &f) { f.released = found ? 1 : 0; });
    settle();
    return found;
}

void LeaseEngine::suspend(const std::string &op, const std::string &did, bool suspended)
{
    AgentRecord *agent = m_agents.obtain(did);
    agent->suspended = suspended;
    journalAgent(*agent);
    recordEvent(EventKind::AdminSuspend, op, {}, {}, 0, {}, [&](EventFacts &f) {
        f.target = did;
        f.suspended = suspended;
    });
    if (suspended) {
        const std::vector<Waiter *> parked = agent->parked;
        for (Waiter *w : parked)
            refuseParked(w, RefusalReason::Suspended);
    }
    settle();
}

void LeaseEngine::pause(const std::string &op, bool paused)
{
    m_paused = paused;
    recordEvent(EventKind::AdminPause, op, {}, {}, 0, {},
                [&](EventFacts &f) { f.paused = paused; });
    if (paused) {
        std::vector<Waiter *> parked;
        for (auto &[id, w] : m_waiters)
            parked.push_back(w.get());
        std::sort(parked.begin(), parked.end(),
                  [](const Waiter *a, const Waiter *b) { return a->ticket < b->ticket; });
        for (Waiter *w : parked)
            refuseParked(w, RefusalReason::Paused);
    }
    settle();
}

void LeaseEngine::setStoreAvailable(bool available, const std::string &problem)
{
    m_storeProblem = problem;
    if (available == m_storeAvailable)
        return;
    m_storeAvailable = available;
    if (!available)
        return;
    // Waits that could not be granted meanwhile are granted now, in their usual order.
    for (const auto &[id, w] : m_waiters)
        m_freed.insert(m_freed.end(), w->resources.begin(), w->resources.end());
    settle();
}

void LeaseEngine::setPresence(const std::string &did, int liveSessions, ViaSet via)
{
    AgentRecord *agent = m_agents.obtain(did);
    agent->liveSessions = std::max(0, liveSessions);
    agent->via = via;
    // A surface that lapsed is not a sighting: the last call was a live window ago.
    if (via != 0 || liveSessions > 0)
        agent->lastSeen = m_clock.nowMs();
}

std::optional<LeaseInfo> LeaseEngine::lease(const std::string &leaseId) const
{
    auto it = m_leases.find(leaseId);
    if (it == m_leases.end())
        return std::nullopt;
    return describe(*it->second);
}

std::string LeaseEngine::holderOf(const ResourceName &name, bool exclusive,
                                  const AgentRecord *self) const
{
    const LeaseRecord *l = m_trie.firstLeaseConflict(name, exclusive, self);
    return l ? l->agent->did : std::string();
}

std::optional<WaiterInfo> LeaseEngine::parkedWait(std::uint64_t waitId) const
{
    const auto it = m_waiters.find(waitId);
    if (it == m_waiters.end())
        return std::nullopt;
    const Waiter &w = *it->second;
    std::optional<WaiterInfo> out;
    for (std::size_t i = 0; i < w.resources.size(); ++i) {
        std::string holder = holderOf(w.resources[i], w.exclusive[i], w.agent);
        if (out && holder.empty())
            continue;
        out = WaiterInfo{w.agent->did, w.resources[i].canonical(), w.mode, true, w.since,
                         w.deadline,   std::move(holder),          w.id};
        if (!out->holder.empty())
            break;
    }
    return out;
}

WaitView LeaseEngine::waitView(const ResourceName *filter) const
{
    WaitView view;
    auto wanted = [filter](const ResourceName &name) { return !filter || filter->overlaps(name); };
    std::vector<const Waiter *> parked;
    for (const auto &[id, w] : m_waiters)
        parked.push_back(w.get());
    std::sort(parked.begin(), parked.end(),
              [](const Waiter *a, const Waiter *b) { return a->ticket < b->ticket; });
    for (const Waiter *w : parked) {
        for (std::size_t i = 0; i < w->resources.size(); ++i) {
            if (!wanted(w->resources[i]))
                continue;
            view.waiters.push_back({w->agent->did, w->resources[i].canonical(), w->mode, true,
                                    w->since, w->deadline,
                                    holderOf(w->resources[i], w->exclusive[i], w->agent), w->id});
        }
    }
    for (const AgentRecord *agent : m_agents.all()) {
        for (const auto &[canonical, want] : agent->wants) {
            if (!wanted(want->resource))
                continue;
            view.waiters.push_back({agent->did, canonical, want->mode, false, want->since,
                                    want->deadline,
                                    holderOf(want->resource, want->exclusive, agent), 0});
        }
    }
    view.deadlocks = m_graph.cycles(m_agents.all());
    return view;
}

AgentView LeaseEngine::agentView(const std::string &did) const
{
    AgentView view;
    view.actorDid = did;
    view.at = m_clock.nowMs();
    const AgentRecord *agent = m_agents.find(did);
    if (!agent)
        return view;
    view.trust = agent->trust;
    view.suspended = agent->suspended;
    for (const LeaseRecord *l : agent->held)
        view.held.push_back(describe(*l));
    std::sort(view.held.begin(), view.held.end(),
              [](const LeaseInfo &a, const LeaseInfo &b) { return a.token < b.token; });
    for (const Waiter *w : agent->parked)
        for (std::size_t i = 0; i < w->resources.size(); ++i)
            view.waiting.push_back({did, w->resources[i].canonical(), w->mode, true, w->since,
                                    w->deadline, holderOf(w->resources[i], w->exclusive[i], agent),
                                    w->id});
    for (const auto &[canonical, want] : agent->wants)
        view.waiting.push_back({did, canonical, want->mode, false, want->since, want->deadline,
                                holderOf(want->resource, want->exclusive, agent), 0});
    view.releaseRequests = releaseRequestsFor(did);
    return view;
}

std::optional<Refusal> LeaseEngine::changeRefusal(const std::string &did, const ResourceName &name,
                                                  Mode mode) const
{
    const std::optional<LeaseInfo> held = blockingLease(did, name, mode);
    if (!held)
        return std::nullopt;
    const TimeMs now = m_clock.nowMs();
    Refusal r;
    r.reason = RefusalReason::LeaseHeld;
    r.resource = name.canonical();
    r.holder = held->holder;
    r.leaseId = held->leaseId;
    r.heldResource = held->resource;
    r.heldForMs = now - held->grantedAt;
    r.expiresInMs = std::max<std::int64_t>(0, held->expiresAt - now);
    return r;
}

std::optional<LeaseInfo> LeaseEngine::blockingLease(const std::string &did,
                                                    const ResourceName &name, Mode mode) const
{
    const bool exclusive = isExclusiveMode(mode) || m_exclusive.matches(name);
    const LeaseRecord *l = m_trie.firstLeaseConflict(name, exclusive, m_agents.find(did));
    if (!l)
        return std::nullopt;
    return describe(*l);
}

std::optional<LeaseInfo> LeaseEngine::coveringLease(const std::string &did,
                                                    const ResourceName &name) const
{
    const AgentRecord *agent = m_agents.find(did);
    if (!agent)
        return std::nullopt;
    for (const LeaseRecord *l : agent->held) {
        if (!l->pending && isExclusiveMode(l->mode) && l->resource.covers(name))
            return describe(*l);
    }
    return std::nullopt;
}

void LeaseEngine::recordMutation(const std::string &did, const ResourceName &name,
                                 const std::string &leaseId, std::string tool, std::string before,
                                 std::string after, std::string to)
{
    recordEvent(EventKind::WorkspaceMutation, did, name.canonical(), leaseId, 0, std::move(tool),
                [&](EventFacts &f) {
                    f.before = std::move(before);
                    f.after = std::move(after);
                    f.to = std::move(to);
                });
    settle();
}

Snapshot LeaseEngine::snapshot() const
{
    Snapshot s;
    s.at = m_clock.nowMs();
    s.paused = m_paused;
    s.nextToken = m_tokens.peek();
    s.leases.reserve(m_leases.size());
    for (const auto &[id, l] : m_leases)
        s.leases.push_back(describe(*l));
    std::sort(s.leases.begin(), s.leases.end(),
              [](const LeaseInfo &a, const LeaseInfo &b) { return a.token < b.token; });
    WaitView waits = waitView();
    s.waiters = std::move(waits.waiters);
    s.deadlocks = std::move(waits.deadlocks);
    for (const auto &[id, p] : m_pins)
        s.pins.push_back({p->pinId, p->lease->leaseId, p->lease->resource.canonical(),
                          p->lease->agent->did, p->since, p->deadline});
    std::sort(s.pins.begin(), s.pins.end(),
              [](const PinInfo &a, const PinInfo &b) { return a.since < b.since; });
    for (const AgentRecord *a : m_agents.all()) {
        s.trust.push_back({a->did, a->trust, a->releases, a->expiries});
        s.agents.push_back({a->did, a->lastSeen, a->liveSessions, a->via, a->suspended,
                            static_cast<int>(a->held.size()),
                            static_cast<int>(a->parked.size() + a->wants.size()), a->trust});
    }
    s.releaseRequests = releaseRequests();
    s.counters = m_counters;
    s.lastSeq = m_seq;
    return s;
}

void LeaseEngine::checkInvariants() const
{
    auto fail = [](const std::string &what) { throw std::logic_error("invariant: " + what); };
    if (!m_trie.isConsistent())
        fail("trie counts or links are inconsistent");
    if (!m_deadlines.isConsistent())
        fail("deadline heap is inconsistent");
    std::size_t timed = m_pins.size() + m_wants.size() + m_waiters.size();
    std::size_t held = 0;
    std::uint64_t maxToken = 0;
    for (const auto &entry : m_leases) {
        const LeaseRecord *l = entry.second.get(); // not a structured binding: a lambda uses it
        maxToken = std::max(maxToken, l->token);
        const bool queued = l->heapSlot != Timed::kNotQueued;
        if (queued == l->pending.has_value())
            fail("lease " + l->leaseId + " must be in the deadline queue exactly when not pending");
        timed += queued ? 1 : 0;
        if (l->pending && l->pins == 0)
            fail("lease " + l->leaseId + " is pending without a pin");
        if (l->agent->held.at(l->agentSlot) != l)
            fail("lease " + l->leaseId + " is not in its holder's list");
        m_trie.forEachLeaseConflict(l->resource, l->exclusive, l->agent, [&](LeaseRecord *o) {
            // A name its holder's own ended lease holds back overlaps what the holder still has.
            if (o->agent != l->agent && o->heldBackUntil == 0)
                fail("conflicting leases " + l->leaseId + " and " + o->leaseId);
            return true;
        });
    }
    for (const auto &[record, l] : m_heldBack) {
        if (l->heldBackUntil == 0 || l->heapSlot == Timed::kNotQueued || !l->node)
            fail("held-back name " + l->resource.canonical() + " lost its timer or its place");
        timed += 1;
    }
    checkReleaseRequests(timed);
    for (const AgentRecord *a : m_agents.all())
        held += a->held.size();
    if (held != m_leases.size())
        fail("holder lists disagree with the lease table");
    if (timed != m_deadlines.size())
        fail("deadline queue holds items the engine does not");
    if (maxToken >= m_tokens.peek())
        fail("a lease carries a token not below the next token");
    std::unordered_map<const LeaseRecord *, int> pinsPerLease;
    for (const auto &[id, p] : m_pins) {
        if (m_leases.find(p->lease->leaseId) == m_leases.end())
            fail("pin " + id + " outlived its lease");
        ++pinsPerLease[p->lease];
    }
    for (const auto &[id, l] : m_leases) {
        auto it = pinsPerLease.find(l.get());
        if (l->pins != (it == pinsPerLease.end() ? 0 : it->second))
            fail("lease " + l->leaseId + " counts pins it does not have");
    }
    if (!m_paused && m_storeAvailable) {
        for (const auto &[id, w] : m_waiters) {
            if (!w->agent->suspended && !findContention(requestOf(*w), w->ticket))
                fail("waiter " + std::to_string(id) + " could be granted but is still parked");
        }
    }
}

} // namespace leasehold

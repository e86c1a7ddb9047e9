// LeaseEngine: parked waits, wake-ups, pins and deadlines.

#include "leaseengine_p.h"
#include "outbox.h"

#include <algorithm>
#include <set>
#include <utility>

namespace leasehold {

Parked LeaseEngine::park(const Request &req, std::int64_t waitMs)
{
    const TimeMs now = m_clock.nowMs();
    auto waiter = std::make_unique<Waiter>();
    Waiter *w = waiter.get();
    w->id = m_nextWaitId++;
    w->ticket = m_nextTicket++;
    w->order = w->ticket; // simultaneous deadlines end in arrival order
    w->agent = req.agent;
    w->resources = req.resources;
    w->exclusive = req.exclusive;
    w->nodes.assign(req.resources.size(), nullptr);
    w->mode = req.mode;
    w->ttlMs = req.ttlMs;
    w->lockDelayMs = req.lockDelayMs;
    w->since = now;
    for (std::size_t i = 0; i < w->resources.size(); ++i)
        m_trie.addParked(w, i);
    req.agent->parked.push_back(w);
    m_deadlines.schedule(w, now + waitMs);
    m_waiters.emplace(w->id, std::move(waiter));
    ++m_counters.waitsBegun;
    m_outbox->waitBegan(w->id, req.agent->did);
    return Parked{w->id, w->deadline};
}

void LeaseEngine::unpark(Waiter *w)
{
    for (std::size_t i = 0; i < w->resources.size(); ++i)
        m_trie.removeParked(w, i);
    auto &parked = w->agent->parked;
    parked.erase(std::find(parked.begin(), parked.end(), w));
    m_deadlines.cancel(w);
    // Whoever queued behind it may move now.
    m_freed.insert(m_freed.end(), w->resources.begin(), w->resources.end());
}

void LeaseEngine::endWait(Waiter *w, WaitOutcome outcome)
{
    const std::uint64_t id = w->id;
    m_outbox->waitEnded(id, std::move(outcome));
    m_waiters.erase(id);
}

LeaseEngine::Request LeaseEngine::requestOf(const Waiter &w) const
{
    Request req;
    req.agent = w.agent;
    req.resources = w.resources;
    req.exclusive = w.exclusive;
    req.mode = w.mode;
    req.ttlMs = w.ttlMs;
    req.lockDelayMs = w.lockDelayMs;
    return req;
}

void LeaseEngine::refuseParked(Waiter *w, RefusalReason reason)
{
    unpark(w);
    Refusal r = simpleRefusal(reason, w->resources.front().canonical());
    r.whileParked = true;
    r.waitedMs = m_clock.nowMs() - w->since;
    countRefusal(r);
    recordRefusal(w->agent->did, r, "acquire", w->mode);
    endWait(w, std::move(r));
}

void LeaseEngine::cancelWait(std::uint64_t waitId)
{
    auto it = m_waiters.find(waitId);
    if (it == m_waiters.end())
        return;
    Waiter *w = it->second.get();
    const Request req = requestOf(*w);
    const TimeMs now = m_clock.nowMs();
    Refusal r;
    if (std::optional<Contention> c = findContention(req, w->ticket))
        r = contentionRefusal(*c, now);
    r.resource = w->resources.front().canonical();
    r.cancelled = true;
    r.waitedMs = now - w->since;
    ++m_counters.waitsCancelled;
    unpark(w);
    endWait(w, std::move(r));
    settle();
}

void LeaseEngine::abandon(const Grant &grant, bool storeLost)
{
    for (const LeaseInfo &info : grant.leases) {
        if (info.extended)
            continue;
        auto it = m_leases.find(info.leaseId);
        if (it != m_leases.end() && it->second->token == info.token)
            endLease(it->second.get(), storeLost ? EndCause::StoreLost : EndCause::Abandoned);
    }
    settle();
}

void LeaseEngine::wake(std::vector<ResourceName> freed)
{
    if (m_waiters.empty())
        return;
    // Grants go to the earliest waiter that can take its whole set, then the next, and so on.
    // Only queues touched by what was freed (its path and subtree) can move, and in each of them
    // only the head batch: everything behind a queue's first exclusive entry conflicts with it.
    std::vector<ResourceName> scope;
    std::set<std::string> inScope;
    auto widen = [&](std::vector<ResourceName> &names) {
        for (ResourceName &n : names) {
            if (inScope.insert(n.canonical()).second)
                scope.push_back(std::move(n));
        }
        names.clear();
    };
    widen(freed);
    std::vector<TrieNode *> nodes;
    std::vector<Waiter *> candidates;
    for (bool again = true; again && !m_paused && m_storeAvailable;) {
        again = false;
        nodes.clear();
        for (const ResourceName &name : scope)
            m_trie.collectQueues(name, nodes);
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        candidates.clear();
        for (const TrieNode *node : nodes) {
            // Behind the first exclusive entry of a plain name nobody at this node can go
            // before it; an exclusive pattern may name other things than later entries do.
            for (const auto &[key, w] : node->parked) {
                candidates.push_back(w);
                if (w->exclusive[key.second] && !w->resources[key.second].isPattern())
                    break;
            }
        }
        std::sort(candidates.begin(), candidates.end(),
                  [](const Waiter *a, const Waiter *b) { return a->ticket < b->ticket; });
        candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

        const TimeMs now = m_clock.nowMs();
        for (Waiter *w : candidates) {
            if (w->agent->suspended)
                continue;
            const Request req = requestOf(*w);
            if (findContention(req, w->ticket))
                continue;
            unpark(w);
            Grant grant = commit(req, now - w->since);
            ++m_counters.waitsGranted;
            // A waiter leaving the queue may unblock ones that were behind it (cut off above).
            // Another waiter of the same agent may even come before the rest of this pass, since
            // the agent's new leases do not block it: start over in that case.
            const bool sameAgentWaits = !w->agent->parked.empty();
            endWait(w, std::move(grant));
            widen(m_freed);
            again = true;
            if (sameAgentWaits)
                break;
        }
    }
}

void LeaseEngine::settle()
{
    if (!m_freed.empty()) {
        wake(std::exchange(m_freed, {}));
        m_freed.clear(); // while paused nothing moves; unpausing finds no one parked
    }
    m_outbox->deliver(m_listener);
}

PinResult LeaseEngine::pin(const std::string &actor, const std::string &leaseId)
{
    const TimeMs now = m_clock.nowMs();
    AgentRecord *agent = m_agents.obtain(actor);
    agent->lastSeen = now;
    auto it = m_leases.find(leaseId);
    std::optional<Refusal> refusal;
    if (it == m_leases.end() || it->second->pending)
        refusal = simpleRefusal(RefusalReason::StaleLease, {});
    else if (it->second->agent != agent)
        refusal = simpleRefusal(RefusalReason::NotHeld, it->second->resource.canonical());
    if (refusal) {
        refusal->leaseId = leaseId;
        countRefusal(*refusal);
        recordRefusal(actor, *refusal, "pin");
        settle();
        return *refusal;
    }
    LeaseRecord *lease = it->second.get();
    auto record = std::make_unique<PinRecord>();
    PinRecord *p = record.get();
    p->pinId = m_ids->next("pn_");
    p->lease = lease;
    p->since = now;
    m_deadlines.schedule(p, now + m_config.pinBoundMs);
    ++lease->pins;
    m_pins.emplace(p->pinId, std::move(record));
    recordEvent(EventKind::Pinned, actor, lease->resource.canonical(), leaseId, lease->token, {},
                [&](EventFacts &f) { f.pinId = p->pinId; });
    PinInfo info{p->pinId, leaseId, lease->resource.canonical(), actor, p->since, p->deadline};
    settle();
    return info;
}

PinResult LeaseEngine::unpin(const std::string &actor, const std::string &pinId)
{
    AgentRecord *agent = m_agents.obtain(actor);
    agent->lastSeen = m_clock.nowMs();
    auto it = m_pins.find(pinId);
    std::optional<Refusal> refusal;
    if (it == m_pins.end())
        refusal = simpleRefusal(RefusalReason::StaleLease, {});
    else if (it->second->lease->agent != agent)
        refusal = simpleRefusal(RefusalReason::NotHeld, it->second->lease->resource.canonical());
    if (refusal) {
        refusal->pinId = pinId;
        countRefusal(*refusal);
        recordRefusal(actor, *refusal, "unpin");
        settle();
        return *refusal;
    }
    PinRecord *p = it->second.get();
    PinInfo info{p->pinId, p->lease->leaseId, p->lease->resource.canonical(),
                 actor,    p->since,          p->deadline};
    dropPin(p, "unpin");
    settle();
    return info;
}

void LeaseEngine::dropPin(PinRecord *pin, const char *reason)
{
    LeaseRecord *lease = pin->lease;
    m_deadlines.cancel(pin);
    --lease->pins;
    recordEvent(EventKind::Unpinned, lease->agent->did, lease->resource.canonical(), lease->leaseId,
                lease->token, reason, [&](EventFacts &f) { f.pinId = pin->pinId; });
    m_pins.erase(pin->pinId);
    if (lease->pins == 0 && lease->pending)
        finishLease(lease);
}

std::optional<TimeMs> LeaseEngine::nextDeadline() const
{
    if (m_deadlines.empty())
        return std::nullopt;
    return m_deadlines.nextDeadline();
}

void LeaseEngine::expireDue()
{
    const TimeMs now = m_clock.nowMs();
    while (!m_deadlines.empty() && m_deadlines.nextDeadline() <= now) {
        Timed *due = m_deadlines.top();
        if (due->kind == TimerKind::WaitDeadline && !m_freed.empty()) {
            // Offer what was freed to the queue before anyone's wait runs out.
            std::vector<ResourceName> freed;
            freed.swap(m_freed);
            wake(std::move(freed));
            continue;
        }
        switch (due->kind) {
        case TimerKind::LeaseExpiry:
            if (auto *lease = static_cast<LeaseRecord *>(due); lease->heldBackUntil > 0)
                endHoldBack(lease); // its lock-delay is over: the name is free
            else
                endLease(lease, EndCause::Expiry);
            break;
        case TimerKind::PinBound:
            ++m_counters.pinsDropped;
            dropPin(static_cast<PinRecord *>(due), "pin_bound");
            break;
        case TimerKind::WantLapse:
            dropWant(static_cast<WantRecord *>(due));
            break;
        case TimerKind::RequestDeadline:
            requestOverdue(static_cast<ReleaseRequestRecord *>(due));
            break;
        case TimerKind::WaitDeadline: {
            auto *w = static_cast<Waiter *>(due);
            const Request req = requestOf(*w);
            unpark(w);
            const std::optional<Contention> c = findContention(req, w->ticket);
            if (!c) { // freed in this same instant: the grant wins over the deadline
                Grant grant = commit(req, now - w->since);
                ++m_counters.waitsGranted;
                endWait(w, std::move(grant));
                break;
            }
            Refusal r = heldRefusal(req, *c, now);
            r.waitedMs = now - w->since;
            ++m_counters.waitsTimedOut;
            countRefusal(r);
            recordRefusal(w->agent->did, r, "acquire", w->mode);
            endWait(w, std::move(r));
            break;
        }
        }
    }
    settle();
}

void LeaseEngine::recordEvent(EventKind kind, const std::string &actor, const std::string &resource,
                              const std::string &leaseId, std::uint64_t token, std::string reason)
{
    recordEvent(kind, actor, resource, leaseId, token, std::move(reason), [](EventFacts &) {});
}

void LeaseEngine::recordGuardRefusal(const std::string &actor, const Refusal &r,
                                     const GuardAsk &ask)
{
    countRefusal(r);
    recordEvent(EventKind::Refused, actor, r.resource, r.leaseId, 0,
                std::string(refusalName(r.reason)), [&](EventFacts &f) {
                    f.op = ask.op;
                    f.holder = r.holder;
                    f.via = ask.via;
                    f.pid = ask.pid;
                    f.command = ask.command;
                });
    settle();
}

void LeaseEngine::recordRefusal(const std::string &actor, const Refusal &r, const char *op,
                                Mode mode)
{
    recordEvent(EventKind::Refused, actor, r.resource, r.leaseId, 0,
                std::string(refusalName(r.reason)), [&](EventFacts &f) {
                    f.op = op;
                    f.mode = mode;
                    f.holder = r.holder;
                    f.cycle = r.cycle;
                    f.waitedMs = r.waitedMs;
                    f.pinId = r.pinId;
                });
}

void LeaseEngine::recordEvent(EventKind kind, const std::string &actor, const std::string &resource,
                              const std::string &leaseId, std::uint64_t token, std::string reason,
                              FunctionRef<void(EventFacts &)> facts, std::int64_t ttlMs)
{
    ++m_counters.events;
    const std::uint64_t seq = ++m_seq;
    if (!m_listener && !m_journal)
        return;
    LedgerEvent e;
    e.seq = seq;
    e.at = m_clock.nowMs();
    e.kind = kind;
    e.actorDid = actor;
    e.resource = resource;
    e.leaseId = leaseId;
    e.token = token;
    e.ttlMs = ttlMs;
    e.reason = std::move(reason);
    facts(e.facts);
    if (m_journal)
        m_journal->appendEvent(e);
    if (m_listener)
        m_outbox->event(std::move(e));
}

} // namespace leasehold

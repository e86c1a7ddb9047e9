#include "leaseengine.h"

#include "leaseengine_p.h"
#include "outbox.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace leasehold {

namespace {

const char *endReason(EndCause cause)
{
    switch (cause) {
    case EndCause::Release:
        return "release";
    case EndCause::Expiry:
        return "expired";
    case EndCause::Admin:
        return "admin";
    case EndCause::Abandoned:
        return "abandoned";
    case EndCause::StoreLost:
        return "store_unavailable";
    }
    return "release";
}

} // namespace

LeaseEngine::LeaseEngine(const Clock &clock, EngineConfig config, std::unique_ptr<IdGenerator> ids,
                         TokenAllocator tokens)
    : m_clock(clock)
    , m_config(std::move(config))
    , m_exclusive(m_config.exclusivePatterns)
    , m_ids(std::move(ids))
    , m_tokens(std::move(tokens))
    , m_outbox(std::make_unique<Outbox>())
    , m_agents(m_config.trustMin, m_config.trustMax)
    , m_graph(m_trie)
{
    // Sparse buckets keep a grant or release from touching unrelated leases' nodes.
    m_leases.max_load_factor(0.25f);
}

LeaseEngine::~LeaseEngine()
{
    // Records must leave the trie before the maps that own them are destroyed.
    for (auto &[id, w] : m_waiters) {
        for (std::size_t i = 0; i < w->nodes.size(); ++i)
            m_trie.removeParked(w.get(), i);
    }
    for (auto &[key, want] : m_wants)
        m_trie.removeWant(want.get());
    for (auto &[id, lease] : m_leases)
        m_trie.removeLease(lease.get());
}

std::int64_t LeaseEngine::clampTtl(std::optional<std::int64_t> ttlMs) const
{
    return std::clamp(ttlMs.value_or(m_config.defaultTtlMs), m_config.minTtlMs, m_config.maxTtlMs);
}

LeaseRecord *LeaseEngine::ownLease(const AgentRecord *agent, const ResourceName &name) const
{
    if (const auto *leases = m_trie.leasesAt(name)) {
        for (LeaseRecord *l : *leases) { // the node also holds patterns of its literal prefix
            if (l->agent == agent && !l->pending && l->resource == name)
                return l;
        }
    }
    return nullptr;
}

LeaseInfo LeaseEngine::describe(const LeaseRecord &l) const
{
    LeaseInfo info;
    info.leaseId = l.leaseId;
    info.resource = l.resource.canonical();
    info.holder = l.agent->did;
    info.mode = l.mode;
    info.token = l.token;
    info.grantedAt = l.grantedAt;
    info.expiresAt = l.expiresAt;
    info.ttlMs = l.ttlMs;
    info.pins = l.pins;
    info.pendingRelease = l.pending.has_value();
    info.lockDelayMs = l.lockDelayMs;
    return info;
}

void LeaseEngine::recordGrant(const std::string &actor, const LeaseInfo &info, std::string reason,
                              std::int64_t waitedMs)
{
    if (m_journal)
        m_journal->putLease(info);
    recordEvent(
        EventKind::Granted, actor, info.resource, info.leaseId, info.token, std::move(reason),
        [&](EventFacts &f) {
            f.mode = info.mode;
            f.waitedMs = waitedMs;
        },
        info.ttlMs);
}

void LeaseEngine::journalAgent(const AgentRecord &a)
{
    if (m_journal)
        m_journal->putAgent(a.did, a.trust, a.releases, a.expiries, a.suspended);
}

std::optional<LeaseEngine::Contention> LeaseEngine::findContention(const Request &req,
                                                                   std::uint64_t before) const
{
    for (std::size_t i = 0; i < req.resources.size(); ++i) {
        const ResourceName &name = req.resources[i];
        if (const LeaseRecord *l = m_trie.firstLeaseConflict(name, req.exclusive[i], req.agent))
            return Contention{i, l, nullptr};
        if (const Waiter *w = m_trie.firstParkedConflict(name, req.exclusive[i], before))
            return Contention{i, nullptr, w};
    }
    return std::nullopt;
}

Refusal LeaseEngine::simpleRefusal(RefusalReason reason, const std::string &resource) const
{
    Refusal r;
    r.reason = reason;
    r.resource = resource;
    return r;
}

Refusal LeaseEngine::deadlockRefusal(const Request &req, const WaitCycle &cycle, TimeMs now) const
{
    // The requester would wait for waitingOn[0], which agents[1] holds or queues for; agents[1]
    // waits for waitingOn[1], and so on round to the requester.
    const AgentRecord *holder = cycle.agents[1];
    const std::string &wanted = cycle.waitingOn[0];
    // What the holder has on it: a lease, else a parked wait queued ahead.
    Contention c;
    const auto claim = std::find_if(req.resources.begin(), req.resources.end(),
                                    [&](const ResourceName &n) { return n.canonical() == wanted; });
    if (claim != req.resources.end()) {
        c.index = std::size_t(claim - req.resources.begin());
        auto onClaim = [&](const ResourceName &n) { return n.overlaps(*claim); };
        for (const LeaseRecord *l : holder->held) {
            if (!c.lease && onClaim(l->resource))
                c.lease = l;
        }
        for (const Waiter *w : holder->parked) {
            if (!c.lease && !c.waiter &&
                std::any_of(w->resources.begin(), w->resources.end(), onClaim))
                c.waiter = w;
        }
    }
    Refusal r;
    if (c.lease || c.waiter)
        r = contentionRefusal(c, now);
    r.reason = RefusalReason::Deadlock;
    r.resource = wanted;
    r.holder = holder->did;
    r.waitingOn = cycle.waitingOn[1];
    for (std::size_t i = 0; i < cycle.agents.size(); ++i)
        r.cycle.push_back({cycle.agents[i]->did, cycle.waitingOn[i]});
    return r;
}

Refusal LeaseEngine::contentionRefusal(const Contention &c, TimeMs now) const
{
    Refusal r;
    r.reason = RefusalReason::LeaseHeld;
    if (c.lease) {
        r.holder = c.lease->agent->did;
        r.leaseId = c.lease->leaseId;
        r.heldResource = c.lease->resource.canonical();
        r.heldForMs = now - c.lease->grantedAt;
        r.expiresInMs = c.lease->pending ? 0 : std::max<std::int64_t>(0, c.lease->expiresAt - now);
        if (c.lease->heldBackUntil > 0) // lock-delay: it ended, its name is not free yet
            r.expiresInMs = r.heldBackMs = std::max<std::int64_t>(0, c.lease->heldBackUntil - now);
    } else {
        r.holder = c.waiter->agent->did;
        r.heldResource = c.waiter->resources.front().canonical();
        r.queued = true;
        r.heldForMs = now - c.waiter->since;
        r.expiresInMs = std::max<std::int64_t>(0, c.waiter->deadline - now);
    }
    return r;
}

void LeaseEngine::countRefusal(const Refusal &r)
{
    ++m_counters.refusals[static_cast<std::size_t>(r.reason)];
}

AcquireResult LeaseEngine::acquire(const AcquireRequest &request)
{
    const TimeMs now = m_clock.nowMs();
    Request req;
    req.agent = m_agents.obtain(request.actor);
    req.agent->lastSeen = now;
    req.mode = request.mode;
    req.lockDelayMs = request.lockDelayMs.value_or(-1);
    req.ttlMs = clampTtl(request.ttlMs);
    for (const ResourceName &name : request.resources) {
        if (std::find(req.resources.begin(), req.resources.end(), name) != req.resources.end())
            continue;
        req.resources.push_back(name);
        req.exclusive.push_back(isExclusiveMode(request.mode) || m_exclusive.matches(name));
    }
    const std::string &first = req.resources.front().canonical();

    auto refuse = [&](Refusal r) -> AcquireResult {
        countRefusal(r);
        recordRefusal(request.actor, r, "acquire", request.mode);
        settle();
        return r;
    };
    if (m_paused)
        return refuse(simpleRefusal(RefusalReason::Paused, first));
    if (req.agent->suspended)
        return refuse(simpleRefusal(RefusalReason::Suspended, first));
    if (!m_storeAvailable) {
        Refusal r = simpleRefusal(RefusalReason::StoreUnavailable, first);
        r.problem = m_storeProblem;
        return refuse(std::move(r));
    }

    const std::optional<Contention> contention = findContention(req, kAnyTicket);
    if (!contention) {
        Grant grant = commit(req);
        settle();
        return grant;
    }

    std::vector<Claim> claims;
    for (std::size_t i = 0; i < req.resources.size(); ++i)
        claims.push_back({&req.resources[i], req.exclusive[i]});
    if (std::optional<WaitCycle> cycle = m_graph.findCycle(req.agent, claims))
        return refuse(deadlockRefusal(req, *cycle, now));

    const std::int64_t waitMs = std::min(request.waitMs, m_config.maxWaitMs);
    if (waitMs > 0 && (request.waitWhileHolding || req.agent->held.empty())) {
        Parked parked = park(req, waitMs);
        settle();
        return parked;
    }

    Refusal r = heldRefusal(req, *contention, now);
    r.holdAndWait = waitMs > 0;
    return refuse(std::move(r));
}

Refusal LeaseEngine::heldRefusal(const Request &req, const Contention &c, TimeMs now)
{
    const ResourceName &contended = req.resources[c.index];
    Refusal r = contentionRefusal(c, now);
    r.resource = contended.canonical();
    Stampede s;
    s.waiters = m_trie.waitersAt(contended);
    if (req.agent->wants.count(contended.canonical()))
        --s.waiters;
    s.waiters = std::max(0, s.waiters);
    s.admitted = std::min(s.waiters, 8);
    s.waitMs = std::min<std::int64_t>(800, 25LL << std::min(s.waiters, 6));
    r.stampede = s;
    recordWant(req.agent, contended, req.mode, req.exclusive[c.index], s.waitMs);
    return r;
}

Grant LeaseEngine::commit(const Request &req, std::int64_t waitedMs)
{
    const TimeMs now = m_clock.nowMs();
    Grant grant;
    grant.waitedMs = std::max<std::int64_t>(0, waitedMs);
    for (std::size_t i = 0; i < req.resources.size(); ++i) {
        const ResourceName &name = req.resources[i];
        LeaseRecord *l = ownLease(req.agent, name);
        const bool extended = l != nullptr;
        if (l) {
            if (!l->exclusive && req.exclusive[i]) {
                // Upgrade a read: a new exclusive grant earns a new fencing token.
                m_trie.removeLease(l);
                l->exclusive = true;
                l->mode = req.mode;
                l->token = m_tokens.next();
                m_trie.addLease(l);
            } else if (l->mode == Mode::Read && req.mode != Mode::Read) {
                l->mode = req.mode;
            }
        } else {
            auto record = std::make_unique<LeaseRecord>();
            l = record.get();
            l->leaseId = m_ids->next("ls_");
            l->resource = name;
            l->mode = req.mode;
            l->exclusive = req.exclusive[i];
            l->token = m_tokens.next();
            l->grantedAt = now;
            l->lockDelayMs = lockDelayFor(req.lockDelayMs, name);
            m_agents.addHeld(req.agent, l);
            m_trie.addLease(l);
            m_leases.emplace(l->leaseId, std::move(record));
        }
        m_lastToken = std::max(m_lastToken, l->token);
        if (extended && req.lockDelayMs >= 0)
            l->lockDelayMs = lockDelayFor(req.lockDelayMs, name);
        l->ttlMs = req.ttlMs;
        l->expiresAt = now + req.ttlMs;
        m_deadlines.schedule(l, l->expiresAt);
        if (auto it = req.agent->wants.find(name.canonical()); it != req.agent->wants.end())
            dropWant(it->second);
        LeaseInfo info = describe(*l);
        info.extended = extended;
        ++m_counters.grants;
        recordGrant(req.agent->did, info, extended ? "extend" : "", waitedMs);
        grant.leases.push_back(std::move(info));
    }
    return grant;
}

void LeaseEngine::recordWant(AgentRecord *agent, const ResourceName &name, Mode mode,
                             bool exclusive, std::int64_t backoffMs)
{
    const TimeMs now = m_clock.nowMs();
    const TimeMs until = now + std::max(2 * backoffMs, m_config.minWantMs);
    WantRecord *want = nullptr;
    if (auto it = agent->wants.find(name.canonical()); it != agent->wants.end()) {
        want = it->second;
    } else {
        auto record = std::make_unique<WantRecord>();
        want = record.get();
        want->agent = agent;
        want->resource = name;
        want->since = now;
        m_trie.addWant(want);
        agent->wants.emplace(name.canonical(), want);
        m_wants.emplace(want, std::move(record));
    }
    want->mode = mode;
    want->exclusive = exclusive;
    m_deadlines.schedule(want, until);
}

void LeaseEngine::dropWant(WantRecord *want)
{
    m_deadlines.cancel(want);
    m_trie.removeWant(want);
    want->agent->wants.erase(want->resource.canonical());
    m_wants.erase(want);
}

void LeaseEngine::dropWants(AgentRecord *agent)
{
    while (!agent->wants.empty())
        dropWant(agent->wants.begin()->second);
}

ReleaseResult LeaseEngine::release(const std::string &actor,
                                   const std::vector<ResourceName> &resources,
                                   const std::string &leaseId)
{
    AgentRecord *agent = m_agents.obtain(actor);
    agent->lastSeen = m_clock.nowMs();
    auto refuse = [&](RefusalReason reason, const std::string &resource) -> ReleaseResult {
        Refusal r = simpleRefusal(reason, resource);
        r.leaseId = leaseId;
        countRefusal(r);
        recordRefusal(actor, r, "release");
        settle();
        return r;
    };

    std::vector<LeaseRecord *> targets;
    if (resources.empty() && !leaseId.empty()) {
        auto it = m_leases.find(leaseId);
        if (it == m_leases.end() || it->second->agent != agent || it->second->pending)
            return refuse(RefusalReason::StaleLease, {});
        targets.push_back(it->second.get());
    } else if (resources.empty()) {
        for (LeaseRecord *l : agent->held) {
            if (!l->pending)
                targets.push_back(l);
        }
    } else {
        for (const ResourceName &name : resources) {
            LeaseRecord *l = ownLease(agent, name);
            if (!l && leaseId.empty())
                return refuse(RefusalReason::NotHeld, name.canonical());
            if (!l || (!leaseId.empty() && l->leaseId != leaseId))
                return refuse(RefusalReason::StaleLease, name.canonical());
            if (std::find(targets.begin(), targets.end(), l) == targets.end())
                targets.push_back(l);
        }
    }

    Released out;
    for (LeaseRecord *l : targets)
        out.released.push_back(endLease(l, EndCause::Release));
    if (!targets.empty())
        dropWants(agent);
    out.trust = agent->trust;
    settle();
    return out;
}

LeaseResult LeaseEngine::renew(const std::string &actor, const ResourceName &resource,
                               const std::string &leaseId, std::optional<std::int64_t> ttlMs)
{
    AgentRecord *agent = m_agents.obtain(actor);
    const TimeMs now = m_clock.nowMs();
    agent->lastSeen = now;
    LeaseRecord *l = ownLease(agent, resource);
    std::optional<Refusal> refusal;
    if (agent->suspended)
        refusal = simpleRefusal(RefusalReason::Suspended, resource.canonical());
    else if (!l && leaseId.empty())
        refusal = simpleRefusal(RefusalReason::NotHeld, resource.canonical());
    else if (!l || (!leaseId.empty() && l->leaseId != leaseId))
        refusal = simpleRefusal(RefusalReason::StaleLease, resource.canonical());
    if (refusal) {
        refusal->leaseId = leaseId;
        countRefusal(*refusal);
        recordRefusal(actor, *refusal, "renew");
        settle();
        return *refusal;
    }
    if (ttlMs) // without one, the lease keeps its own (a 300 s lock stays a 300 s lock)
        l->ttlMs = clampTtl(ttlMs);
    l->expiresAt = now + l->ttlMs;
    m_deadlines.schedule(l, l->expiresAt);
    LeaseInfo info = describe(*l);
    info.extended = true;
    recordGrant(actor, info, "renew");
    settle();
    return info;
}

LeaseInfo LeaseEngine::endLease(LeaseRecord *lease, EndCause cause, const std::string &op)
{
    if (lease->pending)
        return describe(*lease);
    if (lease->pins > 0) {
        lease->pending = cause;
        lease->pendingBy = op;
        m_deadlines.cancel(lease);
        return describe(*lease);
    }
    lease->pending = cause;
    lease->pendingBy = op;
    LeaseInfo info = describe(*lease);
    info.pendingRelease = false;
    finishLease(lease);
    return info;
}

void LeaseEngine::finishLease(LeaseRecord *lease)
{
    const EndCause cause = *lease->pending;
    AgentRecord *agent = lease->agent;
    if (cause == EndCause::Release) {
        m_agents.adjustTrust(agent, m_config.releaseReward);
        ++agent->releases;
        ++m_counters.releases;
    } else if (cause == EndCause::Expiry) {
        m_agents.adjustTrust(agent, -m_config.expiryPenalty);
        ++agent->expiries;
        ++m_counters.expiries;
    } else {
        ++m_counters.adminReleases;
    }
    if (m_journal) {
        m_journal->dropLease(lease->leaseId);
        if (cause != EndCause::Admin)
            journalAgent(*agent);
    }
    const bool heldBack =
        (cause == EndCause::Expiry || cause == EndCause::Admin) && lease->lockDelayMs > 0;
    recordEvent(cause == EndCause::Expiry ? EventKind::Expired : EventKind::Released, agent->did,
                lease->resource.canonical(), lease->leaseId, lease->token, endReason(cause),
                [&](EventFacts &f) {
                    f.by = lease->pendingBy;
                    f.whileDown = cause == EndCause::Expiry && lease->expiresAt <= m_restoredAt;
                    f.heldBackMs = heldBack ? lease->lockDelayMs : 0;
                });
    answerRequests(lease); // its end is their answer
    m_deadlines.cancel(lease);
    m_agents.removeHeld(lease);
    if (heldBack)
        return holdBack(lease); // the name stays taken for the delay; a clean release never is
    m_freed.push_back(lease->resource);
    m_trie.removeLease(lease);
    m_leases.erase(lease->leaseId);
}

} // namespace leasehold

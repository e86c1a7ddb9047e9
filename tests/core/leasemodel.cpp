#include "leasemodel.h"

#include "bruteoverlap.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace leasehold::test {

namespace {
constexpr std::size_t kAll = static_cast<std::size_t>(-1);
}

double LeaseModel::trust(const std::string &did) const
{
    auto it = m_trust.find(did);
    return it == m_trust.end() ? 0.0 : it->second;
}

bool LeaseModel::leaseConflicts(const MLease &l, const ResourceName &r, bool excl,
                                const std::string &agent) const
{
    return bruteOverlaps(l.resource, r) && (l.exclusive || excl) &&
           (l.agent != agent || l.pending >= 0);
}

std::pair<int, std::set<std::string>> LeaseModel::contention(const std::string &agent,
                                                             const std::vector<ResourceName> &res,
                                                             const std::vector<bool> &excl,
                                                             std::size_t beforeParked) const
{
    for (std::size_t i = 0; i < res.size(); ++i) {
        std::set<std::string> holders;
        for (const MLease &l : m_leases) {
            if (leaseConflicts(l, res[i], excl[i], agent))
                holders.insert(l.agent);
        }
        if (!holders.empty())
            return {int(i), holders};
        const std::size_t n = std::min(beforeParked, m_parked.size());
        for (std::size_t p = 0; p < n; ++p) {
            const MWaiter &w = m_parked[p];
            for (std::size_t j = 0; j < w.resources.size(); ++j) {
                if (bruteOverlaps(w.resources[j], res[i]) && (w.exclusive[j] || excl[i]))
                    holders.insert(w.agent);
            }
        }
        if (!holders.empty())
            return {int(i), holders};
    }
    return {-1, {}};
}

std::set<std::string> LeaseModel::edges(const std::string &agent) const
{
    std::set<std::string> out;
    auto blockers = [&](const ResourceName &r, bool excl, std::size_t beforeParked) {
        for (const MLease &l : m_leases) {
            if (leaseConflicts(l, r, excl, agent))
                out.insert(l.agent);
        }
        for (std::size_t p = 0; p < beforeParked && p < m_parked.size(); ++p) {
            for (std::size_t j = 0; j < m_parked[p].resources.size(); ++j) {
                if (bruteOverlaps(m_parked[p].resources[j], r) &&
                    (m_parked[p].exclusive[j] || excl))
                    out.insert(m_parked[p].agent);
            }
        }
    };
    for (std::size_t p = 0; p < m_parked.size(); ++p) {
        if (m_parked[p].agent != agent)
            continue;
        for (std::size_t i = 0; i < m_parked[p].resources.size(); ++i)
            blockers(m_parked[p].resources[i], m_parked[p].exclusive[i], p);
    }
    for (const auto &[key, want] : m_wants) {
        if (key.first == agent)
            blockers(want.resource, want.exclusive, 0);
    }
    out.erase(agent);
    return out;
}

bool LeaseModel::closesCycle(const std::string &agent, const std::vector<ResourceName> &res,
                             const std::vector<bool> &excl) const
{
    std::set<std::string> start;
    for (std::size_t i = 0; i < res.size(); ++i) {
        for (const MLease &l : m_leases) {
            if (leaseConflicts(l, res[i], excl[i], agent))
                start.insert(l.agent);
        }
        for (const MWaiter &w : m_parked) {
            for (std::size_t j = 0; j < w.resources.size(); ++j) {
                if (bruteOverlaps(w.resources[j], res[i]) && (w.exclusive[j] || excl[i]))
                    start.insert(w.agent);
            }
        }
    }
    start.erase(agent);
    std::set<std::string> seen;
    std::vector<std::string> stack(start.begin(), start.end());
    while (!stack.empty()) {
        const std::string x = stack.back();
        stack.pop_back();
        if (!seen.insert(x).second)
            continue;
        for (const std::string &y : edges(x)) {
            if (y == agent)
                return true;
            stack.push_back(y);
        }
    }
    return false;
}

bool LeaseModel::holdsAny(const std::string &agent) const
{
    return std::any_of(m_leases.begin(), m_leases.end(),
                       [&](const MLease &l) { return l.agent == agent; });
}

int LeaseModel::stampedeWaiters(const std::string &agent, const ResourceName &r) const
{
    int n = 0;
    for (const MWaiter &w : m_parked) {
        for (const ResourceName &x : w.resources)
            n += x == r ? 1 : 0;
    }
    for (const auto &[key, want] : m_wants) {
        if (want.resource == r && key.first != agent)
            ++n;
    }
    return n;
}

void LeaseModel::recordWant(TimeMs now, const std::string &agent, const ResourceName &r, bool excl,
                            int waiters)
{
    const std::int64_t backoff = std::min<std::int64_t>(800, 25LL << std::min(waiters, 6));
    MWant &want = m_wants[{agent, r.canonical()}];
    want.resource = r;
    want.exclusive = excl;
    want.deadline = now + std::max<std::int64_t>(2 * backoff, 5'000);
}

void LeaseModel::dropWants(const std::string &agent)
{
    for (auto it = m_wants.begin(); it != m_wants.end();)
        it = it->first.first == agent ? m_wants.erase(it) : std::next(it);
}

MOutcome LeaseModel::acquire(TimeMs now, const std::string &agent,
                             std::vector<ResourceName> resources, Mode mode,
                             std::optional<std::int64_t> ttl, std::int64_t waitMs,
                             std::uint64_t waitId, bool waitWhileHolding)
{
    MOutcome out;
    out.kind = MOutcome::Refused;
    if (m_paused) {
        out.reason = RefusalReason::Paused;
        return out;
    }
    if (m_suspended.count(agent)) {
        out.reason = RefusalReason::Suspended;
        return out;
    }
    std::vector<ResourceName> res;
    std::vector<bool> excl;
    for (const ResourceName &r : resources) {
        if (std::find(res.begin(), res.end(), r) != res.end())
            continue;
        res.push_back(r);
        excl.push_back(isExclusiveMode(mode) || m_patterns.matches(r));
    }
    const std::int64_t ttlMs = std::clamp<std::int64_t>(ttl.value_or(30'000), 1'000, 3'600'000);
    const auto [index, holders] = contention(agent, res, excl, kAll);
    if (index < 0) {
        commit(now, agent, res, excl, mode, ttlMs);
        out.kind = MOutcome::Granted;
        return out;
    }
    out.resource = res[std::size_t(index)].canonical();
    if (closesCycle(agent, res, excl)) {
        out.reason = RefusalReason::Deadlock;
        return out;
    }
    const std::int64_t wait = std::min<std::int64_t>(waitMs, 90'000);
    if (wait > 0 && (waitWhileHolding || !holdsAny(agent))) {
        m_parked.push_back({waitId, agent, res, excl, mode, ttlMs, now, now + wait});
        out.kind = MOutcome::Parked;
        return out;
    }
    out.reason = RefusalReason::LeaseHeld;
    out.possibleHolders = holders;
    out.stampedeWaiters = stampedeWaiters(agent, res[std::size_t(index)]);
    recordWant(now, agent, res[std::size_t(index)], excl[std::size_t(index)], out.stampedeWaiters);
    return out;
}

void LeaseModel::commit(TimeMs now, const std::string &agent, const std::vector<ResourceName> &res,
                        const std::vector<bool> &excl, Mode mode, std::int64_t ttl)
{
    for (std::size_t i = 0; i < res.size(); ++i) {
        auto own = std::find_if(m_leases.begin(), m_leases.end(), [&](const MLease &l) {
            return l.agent == agent && l.resource == res[i] && l.pending < 0;
        });
        if (own != m_leases.end()) {
            if (!own->exclusive && excl[i]) {
                own->exclusive = true;
                own->mode = mode;
                own->token = m_nextToken++;
            } else if (own->mode == Mode::Read && mode != Mode::Read) {
                own->mode = mode;
            }
            own->expiresAt = now + ttl;
            own->ttl = ttl;
        } else {
            MLease l;
            l.resource = res[i];
            l.agent = agent;
            l.mode = mode;
            l.exclusive = excl[i];
            l.token = m_nextToken++;
            l.grantedAt = now;
            l.expiresAt = now + ttl;
            l.ttl = ttl;
            m_leases.push_back(l);
        }
        m_wants.erase({agent, res[i].canonical()});
    }
}

bool LeaseModel::syncIds(const std::map<std::uint64_t, std::string> &ids)
{
    for (MLease &l : m_leases) {
        auto it = ids.find(l.token);
        if (it == ids.end())
            return false;
        if (!l.id.empty() && l.id != it->second)
            return false;
        l.id = it->second;
    }
    return true;
}

void LeaseModel::finish(std::size_t index)
{
    MLease &l = m_leases[index];
    if (l.pending == 0)
        m_trust[l.agent] = std::clamp(trust(l.agent) + 0.5, -1e9, 1e9);
    else if (l.pending == 1)
        m_trust[l.agent] = std::clamp(trust(l.agent) - 5.0, -1e9, 1e9);
    m_leases.erase(m_leases.begin() + std::ptrdiff_t(index));
}

void LeaseModel::endLease(std::size_t index, int cause)
{
    MLease &l = m_leases[index];
    if (l.pending >= 0)
        return;
    l.pending = cause;
    if (l.pins == 0)
        finish(index);
}

bool LeaseModel::wake(TimeMs now)
{
    bool moved = false;
    if (m_paused)
        return moved;
    for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t p = 0; p < m_parked.size(); ++p) {
            const MWaiter w = m_parked[p];
            if (m_suspended.count(w.agent) ||
                contention(w.agent, w.resources, w.exclusive, p).first >= 0)
                continue;
            m_parked.erase(m_parked.begin() + std::ptrdiff_t(p));
            commit(now, w.agent, w.resources, w.exclusive, w.mode, w.ttl);
            m_waitEnds.push_back({w.id, true, RefusalReason::LeaseHeld});
            if (getenv("LEASEHOLD_MODEL_TRACE"))
                printf("  model grants wait %llu first %s next token %llu\n",
                       static_cast<unsigned long long>(w.id), w.resources[0].canonical().c_str(),
                       static_cast<unsigned long long>(m_nextToken));
            progress = moved = true;
            break;
        }
    }
    return moved;
}

MOutcome LeaseModel::release(TimeMs now, const std::string &agent,
                             std::vector<ResourceName> resources, const std::string &leaseId)
{
    MOutcome out;
    out.kind = MOutcome::Refused;
    std::vector<std::string> targets; // lease ids
    auto current = [&](const std::function<bool(const MLease &)> &pred) -> const MLease * {
        for (const MLease &l : m_leases) {
            if (l.agent == agent && l.pending < 0 && pred(l))
                return &l;
        }
        return nullptr;
    };
    if (resources.empty() && !leaseId.empty()) {
        const MLease *l = current([&](const MLease &x) { return x.id == leaseId; });
        if (!l) {
            out.reason = RefusalReason::StaleLease;
            return out;
        }
        targets.push_back(l->id);
    } else if (resources.empty()) {
        for (const MLease &l : m_leases) {
            if (l.agent == agent && l.pending < 0)
                targets.push_back(l.id);
        }
    } else {
        for (const ResourceName &r : resources) {
            const MLease *l = current([&](const MLease &x) { return x.resource == r; });
            if (!l && leaseId.empty()) {
                out.reason = RefusalReason::NotHeld;
                return out;
            }
            if (!l || (!leaseId.empty() && l->id != leaseId)) {
                out.reason = RefusalReason::StaleLease;
                return out;
            }
            if (std::find(targets.begin(), targets.end(), l->id) == targets.end())
                targets.push_back(l->id);
        }
    }
    for (const std::string &id : targets) {
        for (std::size_t i = 0; i < m_leases.size(); ++i) {
            if (m_leases[i].id == id) {
                endLease(i, 0);
                break;
            }
        }
    }
    if (!targets.empty())
        dropWants(agent);
    wake(now);
    out.kind = MOutcome::Granted;
    return out;
}

MOutcome LeaseModel::renew(TimeMs now, const std::string &agent, const ResourceName &resource,
                           const std::string &leaseId, std::optional<std::int64_t> ttl)
{
    MOutcome out;
    out.kind = MOutcome::Refused;
    MLease *l = nullptr;
    for (MLease &x : m_leases) {
        if (x.agent == agent && x.resource == resource && x.pending < 0)
            l = &x;
    }
    if (m_suspended.count(agent))
        out.reason = RefusalReason::Suspended;
    else if (!l && leaseId.empty())
        out.reason = RefusalReason::NotHeld;
    else if (!l || (!leaseId.empty() && l->id != leaseId))
        out.reason = RefusalReason::StaleLease;
    else {
        if (ttl)
            l->ttl = std::clamp<std::int64_t>(*ttl, 1'000, 3'600'000);
        l->expiresAt = now + l->ttl;
        out.kind = MOutcome::Granted;
    }
    return out;
}

MOutcome LeaseModel::pin(TimeMs now, const std::string &agent, const std::string &leaseId,
                         const std::string &newPinId)
{
    MOutcome out;
    out.kind = MOutcome::Refused;
    auto it = std::find_if(m_leases.begin(), m_leases.end(),
                           [&](const MLease &l) { return l.id == leaseId; });
    if (it == m_leases.end() || it->pending >= 0) {
        out.reason = RefusalReason::StaleLease;
    } else if (it->agent != agent) {
        out.reason = RefusalReason::NotHeld;
    } else {
        ++it->pins;
        m_pins[newPinId] = {newPinId, leaseId, now + 60'000};
        out.kind = MOutcome::Granted;
    }
    return out;
}

MOutcome LeaseModel::unpin(TimeMs now, const std::string &agent, const std::string &pinId)
{
    MOutcome out;
    out.kind = MOutcome::Refused;
    auto it = m_pins.find(pinId);
    if (it == m_pins.end()) {
        out.reason = RefusalReason::StaleLease;
        return out;
    }
    auto l = std::find_if(m_leases.begin(), m_leases.end(),
                          [&](const MLease &x) { return x.id == it->second.leaseId; });
    if (l->agent != agent) {
        out.reason = RefusalReason::NotHeld;
        return out;
    }
    m_pins.erase(it);
    if (--l->pins == 0 && l->pending >= 0)
        finish(std::size_t(l - m_leases.begin()));
    wake(now);
    out.kind = MOutcome::Granted;
    return out;
}

} // namespace leasehold::test

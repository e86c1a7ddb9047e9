// LeaseEngine: restoring the state a previous run persisted.

#include "leaseengine.h"
#include "leaseengine_p.h"

#include <algorithm>

namespace leasehold {

bool LeaseEngine::restoreLease(const LeaseInfo &info, const ResourceName &name)
{
    AgentRecord *agent = m_agents.obtain(info.holder);
    const bool exclusive = isExclusiveMode(info.mode) || m_exclusive.matches(name);
    if (m_leases.count(info.leaseId) || m_trie.firstLeaseConflict(name, exclusive, agent))
        return false;
    auto record = std::make_unique<LeaseRecord>();
    LeaseRecord *l = record.get();
    l->leaseId = info.leaseId;
    l->resource = name;
    l->mode = info.mode;
    l->exclusive = exclusive;
    l->token = info.token;
    l->grantedAt = info.grantedAt;
    l->expiresAt = info.expiresAt;
    l->ttlMs = info.ttlMs;
    l->lockDelayMs = lockDelayFor(-1, name); // not stored: the default for its kind
    m_agents.addHeld(agent, l);
    m_trie.addLease(l);
    m_leases.emplace(l->leaseId, std::move(record));
    m_deadlines.schedule(l, l->expiresAt);
    m_lastToken = std::max(m_lastToken, l->token);
    m_restoredAt = m_clock.nowMs();
    return true;
}

void LeaseEngine::restoreAgent(const AgentState &state)
{
    AgentRecord *agent = m_agents.obtain(state.actorDid);
    agent->trust = state.trust;
    agent->releases = state.releases;
    agent->expiries = state.expiries;
    agent->suspended = state.suspended;
}

void LeaseEngine::restoreSequence(std::uint64_t lastSeq)
{
    m_seq = std::max(m_seq, lastSeq);
}

std::optional<AgentState> LeaseEngine::agentState(const std::string &did) const
{
    const AgentRecord *agent = m_agents.find(did);
    if (!agent)
        return std::nullopt;
    return AgentState{agent->did, agent->trust, agent->releases, agent->expiries, agent->suspended};
}

} // namespace leasehold

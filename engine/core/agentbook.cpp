#include "agentbook.h"

#include <algorithm>

namespace leasehold {

AgentRecord *AgentBook::obtain(std::string_view did)
{
    auto it = m_agents.find(did);
    if (it != m_agents.end())
        return it->second.get();
    auto record = std::make_unique<AgentRecord>();
    record->did.assign(did);
    AgentRecord *raw = record.get();
    m_agents.emplace(raw->did, std::move(record));
    m_order.push_back(raw);
    return raw;
}

AgentRecord *AgentBook::find(std::string_view did) const
{
    auto it = m_agents.find(did);
    return it == m_agents.end() ? nullptr : it->second.get();
}

void AgentBook::adjustTrust(AgentRecord *agent, double delta)
{
    agent->trust = std::clamp(agent->trust + delta, m_min, m_max);
}

void AgentBook::addHeld(AgentRecord *agent, LeaseRecord *lease)
{
    lease->agent = agent;
    lease->agentSlot = agent->held.size();
    agent->held.push_back(lease);
}

void AgentBook::removeHeld(LeaseRecord *lease)
{
    std::vector<LeaseRecord *> &held = lease->agent->held;
    LeaseRecord *last = held.back();
    held[lease->agentSlot] = last;
    last->agentSlot = lease->agentSlot;
    held.pop_back();
}

} // namespace leasehold

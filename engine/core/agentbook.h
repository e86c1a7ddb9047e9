#pragma once

#include "records.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace leasehold {

// Every agent the engine has met: trust, counters, suspension, liveness, and what it holds and
// waits for. Records are never removed (trust outlives leases), so pointers stay valid.
//
// Not thread-safe: owned by the engine thread.
class AgentBook
{
public:
    AgentBook(double trustMin, double trustMax)
        : m_min(trustMin)
        , m_max(trustMax)
    {}
    AgentBook(const AgentBook &) = delete;
    AgentBook &operator=(const AgentBook &) = delete;

    // The record for `did`, created on first sight.
    AgentRecord *obtain(std::string_view did);
    AgentRecord *find(std::string_view did) const;

    // Moves trust by `delta`, clamped to [trustMin, trustMax].
    void adjustTrust(AgentRecord *agent, double delta);

    void addHeld(AgentRecord *agent, LeaseRecord *lease);
    void removeHeld(LeaseRecord *lease);

    const std::vector<AgentRecord *> &all() const { return m_order; }

private:
    struct Hash
    {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const
        {
            return std::hash<std::string_view>{}(s);
        }
    };
    std::unordered_map<std::string, std::unique_ptr<AgentRecord>, Hash, std::equal_to<>> m_agents;
    std::vector<AgentRecord *> m_order; // first-seen order, for stable listings
    double m_min;
    double m_max;
};

} // namespace leasehold

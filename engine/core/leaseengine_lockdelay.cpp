// LeaseEngine: lock-delay. A lease that ends without its holder releasing it (it expired, an
// operator released it or suspended its holder) can hold its name back for a while, as Chubby's
// and Consul's locks do, so a holder that was only stalled cannot write after its successor
// starts: nobody is granted the name (or anything overlapping it) until the delay has passed;
// waiters stay parked, and a refusal says the name is held back and for how long. Fencing
// tokens rise as always. A clean release is never held back.
//
// The ended lease's record stays in the trie for the delay, alone: it is no longer a lease (no
// holder lists it, queries do not show it, the wait-for graph draws no edge to it), only what
// keeps the name taken. One timer entry ends it, as its expiry would have.

#include "leaseengine.h"
#include "leaseengine_p.h"

#include <algorithm>

namespace leasehold {

std::int64_t LeaseEngine::lockDelayFor(std::int64_t asked, const ResourceName &name) const
{
    if (asked < 0)
        asked = name.isWorkspacePath() ? m_config.workspaceLockDelayMs : m_config.lockDelayMs;
    return std::clamp<std::int64_t>(asked, 0, m_config.maxLockDelayMs);
}

void LeaseEngine::holdBack(LeaseRecord *lease)
{
    lease->heldBackUntil = m_clock.nowMs() + lease->lockDelayMs;
    m_deadlines.schedule(lease, lease->heldBackUntil);
    auto it = m_leases.find(lease->leaseId);
    m_heldBack.emplace(lease, std::move(it->second));
    m_leases.erase(it);
}

void LeaseEngine::endHoldBack(LeaseRecord *lease)
{
    m_deadlines.cancel(lease);
    m_freed.push_back(lease->resource);
    m_trie.removeLease(lease);
    m_heldBack.erase(lease);
}

} // namespace leasehold

// LeaseEngine: the stale-holder sweep. An agent whose process died holds its leases until they
// expire, which for a long TTL is long after anyone noticed; an operator paged for it asks for
// the holders that are gone - live on no surface, not seen for a while - and clears them in one
// step, recorded as release-holder with reason "sweep" so the ledger says why.

#include "leaseengine.h"
#include "leaseengine_p.h"

#include <algorithm>

namespace leasehold {

std::vector<SweepFinding> LeaseEngine::sweep(const std::string &op, std::int64_t notSeenForMs,
                                             bool dryRun)
{
    const TimeMs now = m_clock.nowMs();
    std::vector<SweepFinding> found;
    for (const AgentRecord *a : m_agents.all()) {
        if (a->held.empty() || a->via != 0 || a->liveSessions > 0)
            continue;
        // Not seen since a restart counts from the restart: its last call is not known.
        const TimeMs seen = std::max(a->lastSeen, m_restoredAt);
        if (now - seen < notSeenForMs)
            continue;
        SweepFinding f;
        f.actorDid = a->did;
        f.lastSeen = a->lastSeen;
        f.idleMs = now - seen;
        for (const LeaseRecord *l : a->held)
            if (!l->pending)
                f.resources.push_back(l->resource.canonical());
        if (f.resources.empty())
            continue; // everything it holds already ends with its pins
        std::sort(f.resources.begin(), f.resources.end());
        found.push_back(std::move(f));
    }
    std::sort(found.begin(), found.end(), [](const SweepFinding &x, const SweepFinding &y) {
        return x.idleMs != y.idleMs ? x.idleMs > y.idleMs : x.actorDid < y.actorDid;
    });
    if (!dryRun)
        for (SweepFinding &f : found)
            f.released = releaseHolder(op, f.actorDid, "sweep");
    return found;
}

} // namespace leasehold

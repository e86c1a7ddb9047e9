#include "agentdetail.h"

#include "consolestate.h"
#include "via.h"

#include <algorithm>

using namespace leasehold;

namespace {

// The row of `rows` (agents, trust) about `did`, or nothing.
template<class Row> const Row *byDid(const std::vector<Row> &rows, const std::string &did)
{
    const auto it =
        std::find_if(rows.begin(), rows.end(), [&did](const Row &r) { return r.actorDid == did; });
    return it == rows.end() ? nullptr : &*it;
}

} // namespace

AgentDetail AgentDetail::of(const ConsoleState &state, const QString &did)
{
    AgentDetail d;
    d.did = did;
    const ConsoleFrame *f = state.frame();
    if (!f || did.isEmpty())
        return d;
    const std::string id = did.toStdString();
    const Snapshot &s = f->snapshot;
    const AgentInfo *a = byDid(s.agents, id);
    const TrustInfo *t = byDid(s.trust, id);
    if (a) {
        d.suspended = a->suspended;
        d.lastSeen = a->lastSeen;
        d.liveSessions = a->liveSessions;
        d.via = QString::fromStdString(viaList(a->via));
        d.trust = a->trust;
    }
    if (t) { // the score with its counts
        d.trust = t->score;
        d.releases = t->releases;
        d.expiries = t->expiries;
    }
    for (const LeaseInfo &l : s.leases) {
        if (l.holder == id)
            d.leases.push_back(l);
    }
    for (const WaiterInfo &w : s.waiters) {
        if (w.actorDid == id)
            d.waits.push_back(w);
    }
    for (const ReleaseRequestInfo &r : s.releaseRequests) {
        if (r.holder == id || r.requester == id)
            d.requests.push_back(r);
    }
    d.at = s.at;
    std::sort(d.leases.begin(), d.leases.end(),
              [](const LeaseInfo &x, const LeaseInfo &y) { return x.resource < y.resource; });
    std::sort(d.waits.begin(), d.waits.end(),
              [](const WaiterInfo &x, const WaiterInfo &y) { return x.resource < y.resource; });
    const auto keys = f->facts.keysByAgent.find(id);
    d.keys = keys == f->facts.keysByAgent.end() ? 0 : keys->second;
    d.trustHistory = state.trustHistory(id);
    d.known = a || t || !d.leases.empty() || !d.waits.empty();
    return d;
}

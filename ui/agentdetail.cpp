#include "agentdetail.h"

#include "consolestate.h"
#include "via.h"

#include <algorithm>

using namespace leasehold;

AgentDetail AgentDetail::of(const ConsoleState &state, const QString &did)
{
    AgentDetail d;
    d.did = did;
    const ConsoleFrame *f = state.frame();
    if (!f || did.isEmpty())
        return d;
    const std::string id = did.toStdString();
    const Snapshot &s = f->snapshot;
    for (const AgentInfo &a : s.agents) {
        if (a.actorDid != id)
            continue;
        d.known = true;
        d.trust = a.trust;
        d.suspended = a.suspended;
        d.lastSeen = a.lastSeen;
        d.liveSessions = a.liveSessions;
        d.via = QString::fromStdString(viaList(a.via));
    }
    for (const TrustInfo &t : s.trust) {
        if (t.actorDid != id)
            continue;
        d.known = true;
        d.trust = t.score;
        d.releases = t.releases;
        d.expiries = t.expiries;
    }
    for (const LeaseInfo &l : s.leases) {
        if (l.holder == id)
            d.leases.push_back(l);
    }
    for (const WaiterInfo &w : s.waiters) {
        if (w.actorDid == id)
            d.waits.push_back(w);
    }
    std::sort(d.leases.begin(), d.leases.end(),
              [](const LeaseInfo &a, const LeaseInfo &b) { return a.resource < b.resource; });
    std::sort(d.waits.begin(), d.waits.end(),
              [](const WaiterInfo &a, const WaiterInfo &b) { return a.resource < b.resource; });
    const auto keys = f->facts.keysByAgent.find(id);
    d.keys = keys == f->facts.keysByAgent.end() ? 0 : keys->second;
    d.trustHistory = state.trustHistory(id);
    d.known = d.known || !d.leases.empty() || !d.waits.empty();
    return d;
}

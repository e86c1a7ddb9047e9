#include "jsonviews.h"

namespace leasehold {

using nlohmann::json;

namespace {

json viaArray(ViaSet set)
{
    json out = json::array();
    for (const Via via : viaMembers(set))
        out.push_back(viaName(via));
    return out;
}

} // namespace

json toJson(const LeaseInfo &l)
{
    json j = {{"leaseId", l.leaseId},     {"resource", l.resource}, {"holder", l.holder},
              {"mode", modeName(l.mode)}, {"token", l.token},       {"grantedAt", l.grantedAt},
              {"expiresAt", l.expiresAt}, {"ttlMs", l.ttlMs}};
    if (l.pins > 0)
        j["pins"] = l.pins;
    if (l.pendingRelease)
        j["pendingRelease"] = true;
    if (l.extended)
        j["extended"] = true; // a re-acquire: same lease and token, new expiry
    if (l.lockDelayMs > 0)
        j["lockDelayMs"] = l.lockDelayMs;
    return j;
}

json toJson(const CycleStep &s)
{
    return {{"agent", s.agent}, {"resource", s.resource}};
}

json toJson(const Refusal &r, const NextSteps &steps)
{
    json j = {{"ok", false},
              {"reason", refusalName(r.reason)},
              {"message", refusalSentence(r, steps).toStdString()},
              {"retryable", refusalRule(r.reason).retryable}};
    if (const int after = retryAfterSeconds(r); after > 0)
        j["retryAfterSeconds"] = after;
    if (!r.resource.empty())
        j["resource"] = r.resource;
    if (!r.holder.empty()) {
        j["holder"] = r.holder;
        if (!r.heldResource.empty() && r.heldResource != r.resource)
            j["heldResource"] = r.heldResource;
        j["heldForMs"] = r.heldForMs;
        j["expiresInMs"] = r.expiresInMs;
        if (r.heldBackMs > 0)
            j["heldBackMs"] = r.heldBackMs;
    }
    if (r.stampede)
        j["stampede"] = {{"waiters", r.stampede->waiters},
                         {"admitted", r.stampede->admitted},
                         {"waitMs", r.stampede->waitMs}};
    if (!r.waitingOn.empty())
        j["waitingOn"] = r.waitingOn;
    if (!r.cycle.empty())
        j["cycle"] = toJsonArray(r.cycle);
    if (!r.pinId.empty())
        j["pinId"] = r.pinId;
    if (!r.problem.empty())
        j["problem"] = r.problem;
    if (!r.leaseId.empty() &&
        (r.reason == RefusalReason::StaleLease || r.reason == RefusalReason::NotHeld))
        j["leaseId"] = r.leaseId;
    if (r.queued)
        j["queued"] = true;
    if (r.holdAndWait)
        j["holdAndWait"] = true;
    if (r.waitedMs >= 0)
        j["waitedMs"] = r.waitedMs;
    if (r.cancelled)
        j["cancelled"] = true;
    return j;
}

json toJson(const PinInfo &p)
{
    return {{"pinId", p.pinId},   {"leaseId", p.leaseId}, {"resource", p.resource},
            {"holder", p.holder}, {"since", p.since},     {"deadline", p.deadline}};
}

json toJson(const WaiterInfo &w)
{
    json j = {{"actorDid", w.actorDid},   {"resource", w.resource},
              {"mode", modeName(w.mode)}, {"kind", w.parked ? "parked" : "want"},
              {"since", w.since},         {"deadline", w.deadline}};
    j["holder"] = w.holder.empty() ? json(nullptr) : json(w.holder);
    return j;
}

json toJson(const DeadlockCycle &c)
{
    return {{"cycle", toJsonArray(c.steps)}};
}

json toJson(const WaitView &v)
{
    return {{"waiters", toJsonArray(v.waiters)}, {"deadlocks", toJsonArray(v.deadlocks)}};
}

json toJson(const AgentView &v)
{
    json j = {{"actorDid", v.actorDid},
              {"trust", v.trust},
              {"suspended", v.suspended},
              {"held", toJsonArray(v.held)},
              {"waiting", toJsonArray(v.waiting)}};
    if (!v.releaseRequests.empty())
        j["releaseRequests"] = toJson(v.releaseRequests, v.at);
    return j;
}

json toJson(const ReleaseRequestInfo &r, TimeMs now)
{
    return {{"requestId", r.requestId},
            {"leaseId", r.leaseId},
            {"resource", r.resource},
            {"holder", r.holder},
            {"requester", r.requester},
            {"byOperator", r.byOperator},
            {"urgency", urgencyName(r.urgency)},
            {"reason", r.reason},
            {"raisedAt", r.raisedAt},
            {"ageMs", std::max<std::int64_t>(0, now - r.raisedAt)},
            {"deadlineAt", r.deadlineAt > 0 ? json(r.deadlineAt) : json(nullptr)},
            {"overdue", r.overdue}};
}

json toJson(const std::vector<ReleaseRequestInfo> &requests, TimeMs now)
{
    json out = json::array();
    for (const ReleaseRequestInfo &r : requests)
        out.push_back(toJson(r, now));
    return out;
}

json toJson(const Snapshot &s)
{
    const json leases = toJsonArray(s.leases);
    const json pins = toJsonArray(s.pins);
    json trust = json::array();
    for (const TrustInfo &t : s.trust)
        trust.push_back({{"actorDid", t.actorDid},
                         {"score", t.score},
                         {"releases", t.releases},
                         {"expiries", t.expiries}});
    json agents = json::array();
    for (const AgentInfo &a : s.agents)
        agents.push_back({{"actorDid", a.actorDid},
                          {"lastSeen", a.lastSeen},
                          {"liveSessions", a.liveSessions},
                          {"via", viaArray(a.via)},
                          {"suspended", a.suspended},
                          {"leases", a.leases},
                          {"waits", a.waits},
                          {"trust", a.trust}});
    const Counters &c = s.counters;
    json refusals = json::object();
    for (std::size_t i = 0; i < c.refusals.size(); ++i)
        refusals[std::string(refusalName(RefusalReason(i)))] = c.refusals[i];
    const WaitView waits{s.waiters, s.deadlocks};
    json view = toJson(waits);
    return {{"at", s.at},
            {"paused", s.paused},
            {"lastSeq", s.lastSeq},
            {"leases", leases},
            {"waiters", view["waiters"]},
            {"deadlocks", view["deadlocks"]},
            {"pins", pins},
            {"trust", trust},
            {"agents", agents},
            {"releaseRequests", toJson(s.releaseRequests, s.at)},
            {"counters",
             {{"grants", c.grants},
              {"refusals", refusals},
              {"releases", c.releases},
              {"expiries", c.expiries},
              {"adminReleases", c.adminReleases},
              {"waitsBegun", c.waitsBegun},
              {"waitsGranted", c.waitsGranted},
              {"waitsTimedOut", c.waitsTimedOut},
              {"waitsCancelled", c.waitsCancelled},
              {"pinsDropped", c.pinsDropped},
              {"events", c.events},
              {"nextToken", s.nextToken}}}};
}

} // namespace leasehold

// McpTools: the tool handlers, and the sentences a model reads when it is refused.

#include "fieldreader.h"
#include "jsonviews.h"
#include "leaserequests.h"
#include "mcptools.h"

#include <cmath>

namespace leasehold {

using nlohmann::json;

namespace {

constexpr std::int64_t kLockDefaultTtlMs = 300'000;
constexpr std::int64_t kLockDefaultWaitS = 90;
constexpr std::int64_t kLockWaitCapS = 90;
constexpr std::int64_t kLeaseWaitCapMs = 30'000; // never above the surface's default TTL

} // namespace

std::string humanDuration(std::int64_t ms)
{
    const std::int64_t s = (std::max<std::int64_t>(ms, 0) + 500) / 1000;
    if (s < 120)
        return std::to_string(s) + " s";
    if (s < 7200)
        return std::to_string(s / 60) + " min";
    return std::to_string(s / 3600) + " h";
}

std::string heldPhrase(const std::string &what, const std::string &holder,
                       const std::string &heldResource, const std::string &resource,
                       std::int64_t heldForMs, std::int64_t expiresInMs, bool queued)
{
    return what + (queued ? " is queued for by " : " is held by ") + holder +
           (heldResource != resource ? " through " + heldResource : std::string()) + " (for " +
           humanDuration(heldForMs) + ", " + (queued ? "waiting up to " : "expires in ") +
           humanDuration(expiresInMs) + ")";
}

namespace {

// The sentence a model acts on: what happened and the next move, in the words of the tools it
// has. lock_* refusals speak of lock_acquire/lock_release; the coordination tools of back-off.
std::string sentence(const Refusal &r, bool lockTools)
{
    const std::string acquire = lockTools ? "lock_acquire" : "coordination_lease_acquire";
    const std::string release = lockTools ? "lock_release" : "coordination_lease_release";
    std::string s;
    switch (r.reason) {
    case RefusalReason::LeaseHeld:
        s = heldPhrase(r.resource, r.holder, r.heldResource, r.resource, r.heldForMs, r.expiresInMs,
                       r.queued) +
            ".";
        if (r.cancelled)
            s += " Your wait was cut short; nothing was taken.";
        else if (r.waitedMs >= 0)
            s += " You waited " + humanDuration(r.waitedMs) + ".";
        if (r.holdAndWait)
            s += " You hold leases, so you may not wait: call " + release +
                 " and ask for your whole working set in one " + acquire + " call.";
        else if (lockTools)
            s += " Work on something else and call " + acquire +
                 " again later, or tell the user "
                 "that " +
                 r.holder + " has it.";
        else if (r.stampede)
            s += " Back off " + std::to_string(r.stampede->waitMs) +
                 " ms or work on something else.";
        return s;
    case RefusalReason::Deadlock:
        return r.message + " Call " + release + " without arguments, then " + acquire +
               " with everything you need in one call.";
    case RefusalReason::NotHeld:
    case RefusalReason::StaleLease:
        return r.message + (lockTools ? " Call lock_status to see what you hold." : "");
    case RefusalReason::Suspended:
    case RefusalReason::Paused:
        return r.message + " Stop and tell the user; an operator has to lift it.";
    case RefusalReason::StoreUnavailable:
        return r.message + " Do not edit anything this would have covered; try again in " +
               std::to_string(retryAfterSeconds(r)) + " s, and tell the user if it persists.";
    }
    return r.message;
}

json refusalResult(const Refusal &r, bool lockTools)
{
    json body = toJson(r);
    if (r.reason == RefusalReason::LeaseHeld || r.reason == RefusalReason::Deadlock ||
        r.reason == RefusalReason::StoreUnavailable)
        body["retryAfterSeconds"] = retryAfterSeconds(r);
    return McpTools::failure(std::move(body), sentence(r, lockTools));
}

// lock_* answers list the leases; the coordination tools also give the first as `lease`, like
// the REST route they mirror.
json grantResult(const Grant &grant, bool lockTools)
{
    json leases = toJsonArray(grant.leases);
    json body = {{"ok", true}, {"leases", leases}};
    if (!lockTools)
        body["lease"] = leases.at(0);
    if (grant.waitedMs > 0)
        body["waitedMs"] = grant.waitedMs;
    return McpTools::result(std::move(body));
}

json invalidResult(const std::string &message)
{
    return McpTools::failure({{"ok", false}, {"reason", "invalid"}, {"message", message}}, message);
}

json releaseResult(const ReleaseResult &result, bool lockTools)
{
    if (const auto *no = std::get_if<Refusal>(&result))
        return refusalResult(*no, lockTools);
    const Released &done = std::get<Released>(result);
    return McpTools::result(
        {{"ok", true}, {"released", toJsonArray(done.released)}, {"trust", done.trust}});
}

} // namespace

McpTools::Step McpTools::acquire(const AcquireRequest &request, bool lockTools) const
{
    const AcquireResult outcome = m_host.run([&](LeaseEngine &e) { return e.acquire(request); });
    if (const auto *grant = std::get_if<Grant>(&outcome))
        return {grantResult(*grant, lockTools)};
    if (const auto *no = std::get_if<Refusal>(&outcome))
        return {refusalResult(*no, lockTools)};
    Step step;
    step.waitId = std::get<Parked>(outcome).waitId;
    step.finish = [lockTools](const WaitOutcome &end) {
        if (const auto *grant = std::get_if<Grant>(&end))
            return grantResult(*grant, lockTools);
        return refusalResult(std::get<Refusal>(end), lockTools);
    };
    return step;
}

McpTools::Step McpTools::lockAcquire(const json &args, const std::string &actor) const
{
    FieldReader r(args);
    const auto paths = r.strings("paths", true, kMaxResourcesPerCall, kMaxNameBytes);
    const auto ttl = r.integer("ttl", false, 0, kMaxDurationInput / 1000);
    const auto wait = r.integer("wait", false, 0, kMaxDurationInput / 1000);
    const auto modeText = r.string("mode", false, 16);
    std::optional<Mode> mode = Mode::Write;
    if (!r.failed() && modeText && !(mode = parseMode(*modeText)))
        r.fail("mode must be read, write or delete");
    if (r.failed())
        return {invalidResult(r.error())};
    std::string error;
    auto names = parseNames(m_host.parser(), *paths, "paths", &error);
    if (!names)
        return {invalidResult(error)};
    AcquireRequest request{actor, std::move(*names), *mode, ttl ? *ttl * 1000 : kLockDefaultTtlMs,
                           std::min(wait.value_or(kLockDefaultWaitS), kLockWaitCapS) * 1000};
    return acquire(request, true);
}

McpTools::Step McpTools::lockRelease(const json &args, const std::string &actor) const
{
    FieldReader r(args);
    const auto paths = r.strings("paths", false, kMaxResourcesPerCall, kMaxNameBytes);
    if (r.failed())
        return {invalidResult(r.error())};
    std::vector<ResourceName> names;
    if (paths) {
        std::string error;
        auto parsed = parseNames(m_host.parser(), *paths, "paths", &error);
        if (!parsed)
            return {invalidResult(error)};
        names = std::move(*parsed);
    }
    return {
        releaseResult(m_host.run([&](LeaseEngine &e) { return e.release(actor, names); }), true)};
}

McpTools::Step McpTools::lockStatus(const std::string &actor) const
{
    json body = toJson(m_host.engine().agentView(actor));
    const TimeMs now = m_host.clock().nowMs();
    for (json &lease : body["held"])
        lease["expiresInMs"] = std::max<std::int64_t>(0, lease.value("expiresAt", now) - now);
    body["ok"] = true;
    body["liveAgents"] = m_sessions.liveAgents();
    return {result(std::move(body))};
}

McpTools::Step McpTools::leaseAcquire(const json &args, const std::string &actor) const
{
    auto read = readAcquire(args, m_host.parser(), actor, kLeaseWaitCapMs);
    if (const auto *error = std::get_if<std::string>(&read))
        return {invalidResult(*error)};
    return acquire(std::get<AcquireRequest>(read), false);
}

McpTools::Step McpTools::leaseRelease(const json &args, const std::string &actor) const
{
    auto read = readRelease(args, m_host.parser());
    if (const auto *error = std::get_if<std::string>(&read))
        return {invalidResult(*error)};
    const ReleaseRequest &request = std::get<ReleaseRequest>(read);
    return {releaseResult(m_host.run([&](LeaseEngine &e) {
        return e.release(actor, request.resources, request.leaseId);
    }),
                          false)};
}

McpTools::Step McpTools::waitView(const json &args) const
{
    FieldReader r(args);
    const auto text = r.string("resource", false, kMaxNameBytes);
    if (r.failed())
        return {invalidResult(r.error())};
    std::optional<ResourceName> filter;
    if (text) {
        std::string error;
        auto parsed = parseNames(m_host.parser(), {*text}, "resource", &error);
        if (!parsed)
            return {invalidResult(error)};
        filter = parsed->front();
    }
    json body = toJson(m_host.engine().waitView(filter ? &*filter : nullptr));
    body["ok"] = true;
    return {result(std::move(body))};
}

} // namespace leasehold

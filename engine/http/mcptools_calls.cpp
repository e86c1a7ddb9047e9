// McpTools: the tool handlers, and the sentences a model reads when it is refused.

#include "fieldreader.h"
#include "jsonviews.h"
#include "leaserequests.h"
#include "mcptools.h"

#include <cmath>

namespace leasehold {

using nlohmann::json;

NextSteps mcpSteps(bool lockTools)
{
    if (lockTools)
        return {QStringLiteral("lock_acquire"), QStringLiteral("lock_release"),
                QStringLiteral("lock_status")};
    return {QStringLiteral("coordination_lease_acquire"),
            QStringLiteral("coordination_lease_release"), QStringLiteral("lock_status")};
}

namespace {

constexpr std::int64_t kLockDefaultTtlMs = 300'000;
constexpr std::int64_t kLockDefaultWaitS = 90;
constexpr std::int64_t kLockWaitCapS = 90;

// Every refusal is an isError result: the model must act on it. Its structured content is the
// REST body, with the sentence in the words of these tools (refusals.h).
json refusalResult(const Refusal &r, bool lockTools)
{
    const NextSteps steps = mcpSteps(lockTools);
    return McpTools::failure(toJson(r, steps), refusalSentence(r, steps).toStdString());
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
    auto read = readAcquire(args, m_host.parser(), actor);
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

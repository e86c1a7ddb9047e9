// RestApi: release requests. A waiting agent, or an operator, asks the holder of a lease to let
// it go (POST /release-request); the holder declines (POST /release-request/{id}/decline) or
// answers by releasing. Every reply to the holder's own calls carries its open requests as
// `releaseRequests` (holderReply), so it hears of them on its next call whatever it calls.

#include "fieldreader.h"
#include "jsonviews.h"
#include "leaserequests.h"
#include "restapi.h"

namespace leasehold {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxReasonBytes = 1000;
constexpr std::int64_t kMaxDeadlineS = 7 * 24 * 3600;

HttpReply requestFailure(const RequestFailure &f, const std::string &requester,
                         const std::string &id)
{
    switch (f.error) {
    case RequestError::NoBusiness:
        return RestApi::problem(403, "no_business",
                                requester + " is neither waiting for nor was recently refused " +
                                    f.resource +
                                    "; only an agent queued on it (or refused it), "
                                    "or an operator, may ask its holder " +
                                    f.holder + " to release it");
    case RequestError::NotHeld:
        return RestApi::problem(409, "not_held", "nobody else holds " + f.resource);
    case RequestError::OwnLease:
        return RestApi::problem(409, "own_lease",
                                requester + " holds " + f.resource + " itself: release it instead");
    case RequestError::UnknownLease:
        return RestApi::problem(404, "unknown_lease", "leaseId names no live lease");
    case RequestError::UnknownRequest:
        return RestApi::problem(404, "unknown_request",
                                "no open release request " + id +
                                    " (it was answered, declined, or never raised)");
    case RequestError::NotHolder:
        return RestApi::problem(403, "not_holder",
                                "only the holder " + f.holder + " may decline request " + id);
    }
    return RestApi::problem(400, "invalid_request", "release request");
}

} // namespace

Respond RestApi::holderReply(const Respond &respond, std::string holder) const
{
    EngineHost *host = &m_host;
    return [respond, host, holder = std::move(holder)](HttpReply reply) {
        addReleaseRequests(*host, reply, holder);
        respond(std::move(reply));
    };
}

void RestApi::addReleaseRequests(EngineHost &host, HttpReply &reply, const std::string &holder)
{
    const LeaseEngine &engine = host.engine();
    if (!engine.hasReleaseRequests()) // the common case costs one test
        return;
    const std::vector<ReleaseRequestInfo> open = engine.releaseRequestsFor(holder);
    if (open.empty())
        return;
    if (reply.raw) { // a fast-path answer: rebuilt as a tree, only while requests are open
        std::string error;
        std::optional<json> body = parseJson(*reply.raw, &error);
        if (!body || !body->is_object())
            return;
        reply.body = std::move(*body);
        reply.raw.reset();
    }
    if (reply.body.is_object())
        reply.body["releaseRequests"] = toJson(open, host.clock().nowMs());
}

void RestApi::raiseRequest(const RestCall &call, const Respond &respond) const
{
    std::string error;
    std::optional<json> body = parseJsonObject(call.body, &error);
    if (!body)
        return respond(invalid(error));
    ReleaseRequestAsk ask;
    ask.byOperator = call.identity && call.identity->role == Role::Admin;
    if (ask.byOperator) {
        ask.requester = call.identity->did.toStdString();
    } else {
        std::optional<HttpReply> refused;
        std::optional<std::string> who = actor(call, *body, refused);
        if (!who)
            return respond(std::move(*refused));
        ask.requester = std::move(*who);
    }
    FieldReader r(*body);
    const auto resource = r.string("resource", false, kMaxNameBytes);
    const auto leaseId = r.string("leaseId", false, 128);
    const auto reason = r.string("reason", true, kMaxReasonBytes);
    const auto urgency = r.string("urgency", false, 16);
    const auto deadline = r.integer("deadlineSeconds", false, 1, kMaxDeadlineS);
    if (r.failed())
        return respond(invalid(r.error()));
    if (!resource && !leaseId)
        return respond(invalid("resource or leaseId is required"));
    if (resource && leaseId)
        return respond(invalid("give resource or leaseId, not both"));
    const std::optional<Urgency> level = urgency ? urgencyFromName(*urgency) : Urgency::Normal;
    if (!level)
        return respond(invalid("urgency must be low, normal or high"));
    if (reason->empty())
        return respond(invalid("reason must not be empty"));
    if (resource) {
        auto names = parseNames(m_host.parser(), {*resource}, "resource", &error);
        if (!names)
            return respond(invalid(error));
        ask.resource = names->front();
    }
    ask.leaseId = leaseId.value_or(std::string());
    ask.reason = *reason;
    ask.urgency = *level;
    ask.deadlineMs = deadline.value_or(0) * 1000;
    const RequestResult result =
        m_host.run([&](LeaseEngine &e) { return e.raiseReleaseRequest(ask); });
    if (const auto *no = std::get_if<RequestFailure>(&result))
        return respond(requestFailure(*no, ask.requester, {}));
    const ReleaseRequestInfo &info = std::get<ReleaseRequestInfo>(result);
    HttpReply reply;
    reply.body = {{"ok", true},
                  {"requestId", info.requestId},
                  {"request", toJson(info, m_host.clock().nowMs())}};
    if (info.existing)
        reply.body["existing"] = true;
    respond(std::move(reply));
}

void RestApi::declineRequest(const RestCall &call, const Respond &respond) const
{
    const std::optional<AgentCall> in = agentCall(call, respond);
    if (!in)
        return;
    // …/release-request/{id}/decline
    const std::string id = call.path.section('/', -2, -2).toStdString();
    FieldReader r(in->body);
    const auto reason = r.string("reason", false, kMaxReasonBytes);
    if (r.failed())
        return respond(invalid(r.error()));
    const RequestResult result = m_host.run([&](LeaseEngine &e) {
        return e.declineReleaseRequest(in->actor, id, reason.value_or(std::string()));
    });
    if (const auto *no = std::get_if<RequestFailure>(&result))
        return respond(requestFailure(*no, in->actor, id));
    const ReleaseRequestInfo &info = std::get<ReleaseRequestInfo>(result);
    HttpReply reply;
    reply.body = {{"ok", true},
                  {"requestId", info.requestId},
                  {"declined", toJson(info, m_host.clock().nowMs())}};
    holderReply(respond, in->actor)(std::move(reply));
}

void RestApi::listRequests(const RestCall &call, const Respond &respond) const
{
    const LeaseEngine &engine = m_host.engine();
    const std::string holder =
        call.query.queryItemValue(QStringLiteral("holder"), QUrl::FullyDecoded).toStdString();
    HttpReply reply;
    reply.body = {{"releaseRequests", toJson(holder.empty() ? engine.releaseRequests()
                                                            : engine.releaseRequestsFor(holder),
                                             m_host.clock().nowMs())}};
    respond(std::move(reply));
}

} // namespace leasehold

#include "restapi.h"

#include "fieldreader.h"
#include "jsonviews.h"
#include "mcptools.h"

#include <QThreadPool>

#include <stdexcept>

namespace leasehold {

using nlohmann::json;

namespace {

QString base(const char *suffix)
{
    return QString(RestApi::kBase) + QLatin1String(suffix);
}

} // namespace

QByteArray RestCall::header(QByteArrayView name) const
{
    for (const auto &[key, value] : headers)
        if (name.compare(key, Qt::CaseInsensitive) == 0)
            return value;
    return {};
}

Via callerVia(const RestCall &call, Via fallback)
{
    const QByteArray named = call.header("x-leasehold-via").trimmed().toLower();
    if (named.isEmpty())
        return fallback;
    const std::optional<Via> via = viaFromName(std::string_view(named.constData(), named.size()));
    return via && *via != Via::Mcp && *via != Via::Rest ? *via : fallback;
}

HttpReply RestApi::problem(int status, const char *reason, const std::string &error)
{
    HttpReply r;
    r.status = status;
    r.body = {{"ok", false}, {"reason", reason}, {"error", error}};
    return r;
}

void RestApi::answerFromWorker(EngineHost &host, std::function<HttpReply()> work,
                               const Respond &respond)
{
    host.workers().start([engine = &host, work = std::move(work), respond] {
        HttpReply reply = work();
        QMetaObject::invokeMethod(
            engine, [respond, reply = std::move(reply)] { respond(reply); }, Qt::QueuedConnection);
    });
}

HttpReply RestApi::storeUnavailable(const StoreHealth &health)
{
    Refusal no;
    no.reason = RefusalReason::StoreUnavailable;
    no.problem = health.phrase();
    HttpReply r = refusal(no);
    r.body["error"] = r.body["message"];
    r.body["store"] = health.reasonName();
    return r;
}

std::optional<NextSteps> RestApi::wordingSteps(const std::string &wording)
{
    if (wording == "rest")
        return restSteps();
    if (wording == "lock")
        return mcpSteps(true);
    if (wording == "tool")
        return NextSteps{QStringLiteral("the same tool"), QStringLiteral("lock_release"),
                         QStringLiteral("lock_status")};
    return std::nullopt;
}

HttpReply RestApi::invalid(const std::string &error)
{
    return problem(400, "invalid_request", error);
}

HttpReply RestApi::refusal(const Refusal &refusal, const NextSteps &steps)
{
    HttpReply r;
    r.status = refusalRule(refusal.reason).httpStatus;
    r.body = toJson(refusal, steps);
    if (const int after = retryAfterSeconds(refusal); after > 0)
        r.headers.emplace_back("Retry-After", QByteArray::number(after));
    return r;
}

namespace {

// `pattern` equals `path`, or has `{id}` segments where `path` has any one non-empty segment.
bool pathMatches(const QString &pattern, const QString &path)
{
    if (pattern == path)
        return true;
    if (!pattern.contains(QLatin1Char('{')))
        return false;
    const QStringList want = pattern.split(QLatin1Char('/'));
    const QStringList have = path.split(QLatin1Char('/'));
    if (want.size() != have.size())
        return false;
    for (qsizetype i = 0; i < want.size(); ++i) {
        const bool wild =
            want[i].startsWith(QLatin1Char('{')) && want[i].endsWith(QLatin1Char('}'));
        if (wild ? have[i].isEmpty() : want[i] != have[i])
            return false;
    }
    return true;
}

} // namespace

RestApi::RestApi(EngineHost &host, bool open, QString version, AgentPresence *presence)
    : m_host(host)
    , m_open(open)
    , m_version(std::move(version))
    , m_presence(presence)
{
    add("POST", base("/lease"), Access::Agent, "Acquire leases on one or more resources",
        [this](const RestCall &c, const Respond &r, Deferral &d) { lease(c, r, d); });
    add("POST", base("/release"), Access::Agent, "Release leases (all held when none named)",
        [this](const RestCall &c, const Respond &r, Deferral &) { release(c, r); });
    add("POST", base("/renew"), Access::Agent, "Extend a held lease",
        [this](const RestCall &c, const Respond &r, Deferral &) { renew(c, r); });
    add("POST", base("/pin"), Access::Agent, "Pin a lease while a covered mutation lands",
        [this](const RestCall &c, const Respond &r, Deferral &) { pin(c, r, false); });
    add("POST", base("/unpin"), Access::Agent, "End a pin",
        [this](const RestCall &c, const Respond &r, Deferral &) { pin(c, r, true); });
    add("POST", base("/check"), Access::Agent,
        "May the caller change these resources now? Pins the covering leases on request",
        [this](const RestCall &c, const Respond &r, Deferral &) { check(c, r); });
    add("POST", base("/release-request"), Access::Agent,
        "Ask the holder of a lease to release it (a waiting agent, or an operator)",
        [this](const RestCall &c, const Respond &r, Deferral &) { raiseRequest(c, r); });
    add("POST", base("/release-request/{id}/decline"), Access::Agent,
        "The holder declines a release request",
        [this](const RestCall &c, const Respond &r, Deferral &) { declineRequest(c, r); });
    add("GET", base("/release-requests"), Access::Reader,
        "Open release requests (?holder= for one holder's)",
        [this](const RestCall &c, const Respond &r, Deferral &) { listRequests(c, r); });
    add("GET", base("/wait"), Access::Reader, "Waiters (parked and wants) and deadlock pairs",
        [this](const RestCall &c, const Respond &r, Deferral &) { waitView(c, r); });
    add("GET", base("/status"), Access::Reader, "Snapshot of leases, queues, pins, trust, agents",
        [this](const RestCall &, const Respond &r, Deferral &) {
            // The shared snapshot, encoded on a worker: however many leases are live, the
            // engine thread pays for one snapshot per change at most.
            answerFromWorker(
                m_host,
                [snapshot = m_host.sharedSnapshot()] {
                    HttpReply reply;
                    reply.body = toJson(*snapshot);
                    return reply;
                },
                r);
        });
    add("GET", base("/ledger"), Access::Reader, "Ledger events after a sequence number",
        [this](const RestCall &c, const Respond &r, Deferral &) { ledger(c, r); });
    add("GET", base("/ledger/export"), Access::Reader,
        "Ledger export: ?format=jsonl|csv&since=&limit= (up to 100 000 events; X-Ledger-Next)",
        [this](const RestCall &c, const Respond &r, Deferral &) { ledger(c, r, true); });
    add("GET", base("/health"), Access::Reader,
        "What is wrong: the health check's findings, each with the command that fixes it",
        [this](const RestCall &, const Respond &r, Deferral &) { health(r); });
    for (const char *lever :
         {"release-holder", "release-lease", "release-all", "pause", "suspend", "sweep"}) {
        const QString name = QLatin1String(lever);
        add("POST", base("/admin/") + name, Access::Admin, "Operator lever: " + name,
            [this, name](const RestCall &c, const Respond &r, Deferral &) { admin(c, r, name); });
    }
    add("GET", base("/admin/invariants"), Access::Admin,
        "Checks the engine's invariants now (the soak's and an operator's debug check)",
        [this](const RestCall &, const Respond &r, Deferral &) {
            const LeaseEngine &engine = m_host.engine();
            HttpReply reply;
            try {
                engine.checkInvariants();
                reply.body = {{"ok", true},
                              {"leases", engine.leaseCount()},
                              {"parked", engine.parkedCount()}};
            } catch (const std::logic_error &e) {
                reply = problem(500, "invariant_broken", e.what());
            }
            r(std::move(reply));
        });
    add("GET", "/healthz", Access::Public, "Liveness",
        [this](const RestCall &, const Respond &r, Deferral &) {
            HttpReply reply;
            const StoreHealth &health = m_host.storeHealth();
            reply.body = {{"ok", health.ok()},
                          {"version", m_version.toStdString()},
                          {"store", health.reasonName()}};
            if (m_clusterFacts)
                reply.body["cluster"] = m_clusterFacts();
            if (!health.ok()) {
                // Alive, but not able to grant: load balancers and `ctl status` should know.
                reply.status = 503;
                reply.body["reason"] = "store_unavailable";
                reply.body["error"] = health.phrase();
                reply.headers.emplace_back(
                    "Retry-After",
                    QByteArray::number(refusalRule(RefusalReason::StoreUnavailable).retryAfterS));
            }
            r(std::move(reply));
        });
}

void RestApi::add(QByteArray method, const QString &path, Access access, QString summary,
                  std::function<void(const RestCall &, const Respond &, Deferral &)> handler)
{
    m_routes.push_back({std::move(method), path, access, std::move(summary), std::move(handler)});
}

void RestApi::dispatch(const RestCall &call, const Respond &respond, Deferral &deferral) const
{
    QByteArray allow;
    for (const Route &route : m_routes) {
        if (!pathMatches(route.path, call.path))
            continue;
        if (route.method != call.method) {
            allow += (allow.isEmpty() ? "" : ", ") + route.method;
            continue;
        }
        if (call.keyPresented && !call.identity)
            return respond(problem(401, "unauthorized", "the bearer key is not known"));
        switch (route.access) {
        case Access::Public:
            break;
        case Access::Reader:
        case Access::Agent:
            if (!call.identity && !m_open)
                return respond(problem(401, "unauthorized",
                                       "an Authorization: Bearer <key> header is required"));
            break;
        case Access::Admin:
            if (!call.identity)
                return respond(problem(401, "unauthorized", "admin routes need an admin key"));
            if (call.identity->role != Role::Admin)
                return respond(problem(403, "forbidden", "admin routes need an admin key"));
            break;
        }
        return route.handler(call, respond, deferral);
    }
    if (!allow.isEmpty()) {
        HttpReply reply = problem(405, "method_not_allowed",
                                  "use " + allow.toStdString() + " for " + call.path.toStdString());
        reply.headers.emplace_back("Allow", allow);
        return respond(std::move(reply));
    }
    respond(problem(404, "not_found", "no route " + call.path.toStdString()));
}

std::optional<std::string> RestApi::actor(const RestCall &call, const json &body,
                                          std::optional<HttpReply> &reply) const
{
    FieldReader r(body);
    const std::optional<std::string> named = r.did("actorDid", !call.identity);
    if (r.failed()) {
        reply = invalid(r.error());
        return std::nullopt;
    }
    if (call.identity) {
        const std::string self = call.identity->did.toStdString();
        if (named && *named != self) {
            reply = problem(403, "actor_mismatch",
                            "this key acts as " + self + " and may not name " + *named);
            return std::nullopt;
        }
        return self;
    }
    return named;
}

} // namespace leasehold

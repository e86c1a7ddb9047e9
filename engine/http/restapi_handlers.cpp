// RestApi: the route handlers. Each parses, delegates to the engine and serialises.

#include "agentpresence.h"
#include "fieldreader.h"
#include "jsonviews.h"
#include "leasereplies.h"
#include "leaserequests.h"
#include "ledgerformat.h"
#include "restapi.h"

namespace leasehold {

using nlohmann::json;

namespace {

HttpReply ok(json body)
{
    HttpReply reply;
    body["ok"] = true;
    reply.body = std::move(body);
    return reply;
}

HttpReply ledgerReply(const std::vector<LedgerEvent> &events, std::uint64_t since, bool exportAll,
                      bool csv)
{
    HttpReply reply;
    const std::uint64_t next = events.empty() ? since : events.back().seq;
    if (exportAll) {
        reply.raw = csv ? ledgerCsv(events) : ledgerJsonLines(events);
        reply.contentType = csv ? "text/csv; charset=utf-8" : "application/x-ndjson";
        reply.headers.emplace_back("X-Ledger-Next", QByteArray::number(next));
        return reply;
    }
    reply.body = {{"events", toJsonArray(events)}, {"next", next}};
    return reply;
}

HttpReply grantReply(const Grant &grant)
{
    if (std::optional<std::string> bytes = grantJson(grant)) {
        HttpReply reply;
        reply.raw = QByteArray::fromStdString(*bytes);
        return reply;
    }
    json leases = toJsonArray(grant.leases);
    json body = {{"lease", leases.at(0)}, {"leases", leases}};
    if (grant.waitedMs > 0)
        body["waitedMs"] = grant.waitedMs;
    return ok(std::move(body));
}

} // namespace

std::optional<RestApi::AgentCall> RestApi::agentCall(const RestCall &call,
                                                     const Respond &respond) const
{
    std::string error;
    std::optional<json> body = parseJsonObject(call.body, &error);
    if (!body) {
        respond(invalid(error));
        return std::nullopt;
    }
    std::optional<HttpReply> reply;
    std::optional<std::string> who = actor(call, *body, reply);
    if (!who) {
        respond(std::move(*reply));
        return std::nullopt;
    }
    if (m_presence)
        m_presence->seen(*who, callerVia(call, Via::Rest));
    return AgentCall{std::move(*body), std::move(*who)};
}

void RestApi::lease(const RestCall &call, const Respond &answerTo, Deferral &deferral) const
{
    const std::optional<AgentCall> in = agentCall(call, answerTo);
    if (!in)
        return;
    const Respond respond = holderReply(answerTo, in->actor);
    auto read = readAcquire(in->body, m_host.parser(), in->actor);
    if (const auto *error = std::get_if<std::string>(&read))
        return respond(invalid(*error));
    FieldReader r(in->body);
    const auto wording = r.string("wording", false, 16);
    const auto whileHolding = r.boolean("waitWhileHolding", false);
    const std::optional<NextSteps> steps = wordingSteps(wording.value_or("rest"));
    if (r.failed() || !steps)
        return respond(invalid(r.failed() ? r.error() : "wording must be rest, lock or tool"));
    AcquireRequest &request = std::get<AcquireRequest>(read);
    request.waitWhileHolding = whileHolding.value_or(false);
    const AcquireResult result = m_host.run([&](LeaseEngine &e) { return e.acquire(request); });
    if (const auto *grant = std::get_if<Grant>(&result))
        return respond(grantReply(*grant));
    if (const auto *no = std::get_if<Refusal>(&result))
        return respond(refusal(*no, *steps));
    const std::uint64_t waitId = std::get<Parked>(result).waitId;
    m_host.onWaitEnd(waitId, [respond, steps = *steps](const WaitOutcome &outcome) {
        if (const auto *grant = std::get_if<Grant>(&outcome))
            respond(grantReply(*grant));
        else
            respond(refusal(std::get<Refusal>(outcome), steps));
    });
    EngineHost *host = &m_host;
    deferral.onClientGone = [host, waitId] { host->abandonWait(waitId); };
}

void RestApi::release(const RestCall &call, const Respond &answerTo) const
{
    const std::optional<AgentCall> in = agentCall(call, answerTo);
    if (!in)
        return;
    const Respond respond = holderReply(answerTo, in->actor);
    auto read = readRelease(in->body, m_host.parser());
    if (const auto *error = std::get_if<std::string>(&read))
        return respond(invalid(*error));
    const ReleaseRequest &request = std::get<ReleaseRequest>(read);
    const ReleaseResult result = m_host.run(
        [&](LeaseEngine &e) { return e.release(in->actor, request.resources, request.leaseId); });
    if (const auto *no = std::get_if<Refusal>(&result))
        return respond(refusal(*no));
    const Released &done = std::get<Released>(result);
    if (std::optional<std::string> bytes = releasedJson(done)) {
        HttpReply reply;
        reply.raw = QByteArray::fromStdString(*bytes);
        return respond(std::move(reply));
    }
    respond(ok({{"released", toJsonArray(done.released)}, {"trust", done.trust}}));
}

void RestApi::renew(const RestCall &call, const Respond &answerTo) const
{
    const std::optional<AgentCall> in = agentCall(call, answerTo);
    if (!in)
        return;
    const Respond respond = holderReply(answerTo, in->actor);
    std::string error;
    FieldReader r(in->body);
    const auto text = r.string("resource", true, 1024);
    const auto leaseId = r.string("leaseId", true, 128);
    const auto ttl = r.integer("ttlMs", false, 0, kMaxDurationInput);
    if (r.failed())
        return respond(invalid(r.error()));
    const auto resource = parseNames(m_host.parser(), {*text}, "resource", &error);
    if (!resource)
        return respond(invalid(error));
    const LeaseResult result = m_host.run(
        [&](LeaseEngine &e) { return e.renew(in->actor, resource->front(), *leaseId, ttl); });
    if (const auto *no = std::get_if<Refusal>(&result))
        return respond(refusal(*no));
    respond(ok({{"lease", toJson(std::get<LeaseInfo>(result))}}));
}

void RestApi::pin(const RestCall &call, const Respond &answerTo, bool unpin) const
{
    const std::optional<AgentCall> in = agentCall(call, answerTo);
    if (!in)
        return;
    const Respond respond = holderReply(answerTo, in->actor);
    FieldReader r(in->body);
    const auto id = r.string(unpin ? "pinId" : "leaseId", true, 128);
    if (r.failed())
        return respond(invalid(r.error()));
    const PinResult result = m_host.run(
        [&](LeaseEngine &e) { return unpin ? e.unpin(in->actor, *id) : e.pin(in->actor, *id); });
    if (const auto *no = std::get_if<Refusal>(&result))
        return respond(refusal(*no));
    respond(ok({{"pin", toJson(std::get<PinInfo>(result))}}));
}

void RestApi::waitView(const RestCall &call, const Respond &respond) const
{
    std::optional<ResourceName> filter;
    if (call.query.hasQueryItem(QStringLiteral("resource"))) {
        const std::string text =
            call.query.queryItemValue(QStringLiteral("resource"), QUrl::FullyDecoded).toStdString();
        std::string error;
        auto parsed = parseNames(m_host.parser(), {text}, "resource", &error);
        if (!parsed)
            return respond(invalid(error));
        filter = parsed->front();
    }
    HttpReply reply;
    reply.body = toJson(m_host.engine().waitView(filter ? &*filter : nullptr));
    respond(std::move(reply));
}

void RestApi::ledger(const RestCall &call, const Respond &respond, bool exportAll) const
{
    auto number = [&](const char *name, qulonglong fallback, qulonglong max,
                      std::string *error) -> std::optional<qulonglong> {
        const QString key = QLatin1String(name);
        if (!call.query.hasQueryItem(key))
            return fallback;
        bool parsed = false;
        const qulonglong value = call.query.queryItemValue(key).toULongLong(&parsed);
        if (!parsed || value > max) {
            *error = std::string(name) + " must be a whole number from 0 to " + std::to_string(max);
            return std::nullopt;
        }
        return value;
    };
    std::string error;
    const auto since = number("since", 0, std::numeric_limits<qint64>::max(), &error);
    const auto limit =
        since ? number("limit", exportAll ? 100'000 : 100, exportAll ? 100'000 : 1000, &error)
              : std::nullopt;
    const QString format = call.query.queryItemValue(QStringLiteral("format"));
    if (since && limit && exportAll && format != QLatin1String("jsonl") &&
        format != QLatin1String("csv"))
        error = "format must be jsonl or csv";
    if (!since || !limit || !error.empty())
        return respond(invalid(error));
    auto text = [&](const char *name) {
        return call.query.queryItemValue(QLatin1String(name), QUrl::FullyDecoded).toStdString();
    };
    LedgerFilter filter{text("actorDid"), {}, text("kind")};
    if (!filter.kind.empty() && !eventKindFromName(filter.kind))
        return respond(invalid("kind must be a ledger kind such as coordination.lease.granted"));
    if (const std::string resource = text("resource"); !resource.empty()) {
        auto name = parseNames(m_host.parser(), {resource}, "resource", &error);
        if (!name)
            return respond(invalid(error));
        filter.resource = name->front().canonical();
    }
    // Read on the store's reader thread and encoded on a worker: a 100 000-row export costs
    // the engine thread a copy of the newest events at most.
    EngineHost *host = &m_host;
    const bool csv = format == QLatin1String("csv");
    m_host.readLedger(
        *since, *limit, filter,
        [host, respond, exportAll, csv, from = *since](std::vector<LedgerEvent> events) {
            answerFromWorker(
                *host,
                [events = std::move(events), from, exportAll, csv] {
                    return ledgerReply(events, from, exportAll, csv);
                },
                respond);
        });
}

void RestApi::admin(const RestCall &call, const Respond &respond, const QString &lever) const
{
    std::string error;
    std::optional<json> body =
        parseJsonObject(call.body.trimmed().isEmpty() ? "{}" : call.body, &error);
    if (!body)
        return respond(invalid(error));
    const std::string op = call.identity->did.toStdString();
    FieldReader r(*body);
    if (lever == QLatin1String("release-all")) {
        const int n = m_host.run([&](LeaseEngine &e) { return e.releaseAll(op); });
        return respond(ok({{"released", n}}));
    }
    if (lever == QLatin1String("release-lease")) {
        // One lease, whoever holds it: the lever for a release request left overdue.
        const auto leaseId = r.string("leaseId", true, 128);
        if (r.failed())
            return respond(invalid(r.error()));
        if (!m_host.run([&](LeaseEngine &e) { return e.releaseLease(op, *leaseId); }))
            return respond(problem(404, "unknown_lease", "leaseId names no live lease"));
        return respond(ok({{"released", 1}}));
    }
    if (lever == QLatin1String("sweep")) {
        // The holders that are gone: live on no surface, not seen for notLiveForMs (1 min to 30
        // days). dryRun lists them and changes nothing.
        const auto notLive = r.integer("notLiveForMs", true, 60'000, 30LL * 24 * 3600 * 1000);
        const auto dryRun = r.boolean("dryRun", false);
        if (r.failed())
            return respond(invalid(r.error()));
        const std::vector<SweepFinding> found = m_host.run(
            [&](LeaseEngine &e) { return e.sweep(op, *notLive, dryRun.value_or(false)); });
        json agents = json::array();
        int released = 0;
        for (const SweepFinding &f : found) {
            agents.push_back({{"actorDid", f.actorDid},
                              {"lastSeen", f.lastSeen},
                              {"idleMs", f.idleMs},
                              {"resources", f.resources},
                              {"released", f.released}});
            released += f.released;
        }
        return respond(ok({{"dryRun", dryRun.value_or(false)},
                           {"notLiveForMs", *notLive},
                           {"agents", std::move(agents)},
                           {"released", released}}));
    }
    if (lever == QLatin1String("pause")) {
        const auto paused = r.boolean("paused", true);
        if (r.failed())
            return respond(invalid(r.error()));
        m_host.run([&](LeaseEngine &e) { e.pause(op, *paused); });
        return respond(ok({{"paused", *paused}}));
    }
    const auto target = r.did("actorDid", true);
    const auto suspended =
        lever == QLatin1String("suspend") ? r.boolean("suspended", true) : std::optional<bool>();
    if (r.failed())
        return respond(invalid(r.error()));
    if (lever == QLatin1String("suspend")) {
        m_host.run([&](LeaseEngine &e) { e.suspend(op, *target, *suspended); });
        return respond(ok({{"actorDid", *target}, {"suspended", *suspended}}));
    }
    const int n = m_host.run([&](LeaseEngine &e) { return e.releaseHolder(op, *target); });
    respond(ok({{"released", n}}));
}

void RestApi::health(const Respond &respond) const
{
    HealthFacts facts;
    if (m_healthFacts) {
        facts = m_healthFacts(); // the service's: store, disk, cluster, the last hour
    } else {
        const StoreHealth &store = m_host.storeHealth();
        facts.storeHealth = store.reasonName();
        facts.storeProblem = store.ok() ? std::string() : store.phrase();
        facts.lastHour = m_host.incidentsLastHour();
    }
    const TimeMs now = m_host.clock().nowMs();
    const std::vector<HealthFinding> findings =
        healthFindings(*m_host.sharedSnapshot(), facts, now);
    json out = json::array();
    for (const HealthFinding &f : findings) {
        json item = {{"severity", healthSeverityName(f.severity)},
                     {"code", f.code},
                     {"finding", f.what.toStdString()},
                     {"fix", f.fix.toStdString()}};
        if (!f.agent.empty())
            item["actorDid"] = f.agent;
        out.push_back(std::move(item));
    }
    HttpReply reply;
    reply.body = {{"at", now},
                  {"findings", std::move(out)},
                  {"worst", findings.empty() ? "none" : healthSeverityName(worstOf(findings))}};
    if (facts.diskFreeBytes >= 0)
        reply.body["disk"] = {{"path", facts.dataDir.toStdString()},
                              {"freeBytes", facts.diskFreeBytes},
                              {"totalBytes", facts.diskTotalBytes}};
    respond(std::move(reply));
}

} // namespace leasehold

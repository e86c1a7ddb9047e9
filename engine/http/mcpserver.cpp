// McpServer: the HTTP side — transport checks, sessions, batching and deferred answers.
// The JSON-RPC methods themselves are in mcpserver_methods.cpp.

#include "mcpserver.h"

#include "fieldreader.h"
#include "jsonviews.h"
#include "logging.h"
#include "mcprequestmeta.h"
#include "mcprpc.h"

#include <QUrl>

namespace leasehold {

using nlohmann::json;

namespace {

// "host", "host:port", "[v6]" or "[v6]:port" -> the host name, lower case, without brackets.
QString hostName(const QString &authority)
{
    QString name = authority.trimmed().toLower();
    if (name.startsWith(u'[')) {
        const qsizetype close = name.indexOf(u']');
        return close < 0 ? name : name.mid(1, close - 1);
    }
    if (name.count(u':') == 1)
        name.truncate(name.indexOf(u':'));
    return name;
}

// The progressToken in a request's params._meta, or null; read in place, without copying the
// params.
json progressTokenOf(const json &message)
{
    const auto params = message.find("params");
    if (params == message.end() || !params->is_object())
        return {};
    const auto meta = params->find("_meta");
    if (meta == params->end() || !meta->is_object())
        return {};
    const auto token = meta->find("progressToken");
    return token == meta->end() ? json() : *token;
}

// A tool result that granted, rewritten after its grants were given back because the store
// could not make them durable.
void notDurable(json &response)
{
    if (!response.contains("result"))
        return;
    Refusal no;
    no.reason = RefusalReason::StoreUnavailable;
    no.problem = "it could not make this grant durable in time";
    const NextSteps steps = mcpSteps(true);
    response["result"] =
        McpTools::failure(toJson(no, steps), refusalSentence(no, steps).toStdString());
}

// A tool result that granted, rewritten after its caller cancelled the request (or ended its
// session) before the answer went out: the grants were given back.
void withdrawn(json &response)
{
    if (!response.contains("result"))
        return;
    const std::string sentence = "This request was cancelled before its answer was sent, so what "
                                 "it was granted was given back; nothing is held.";
    response["result"] = McpTools::failure(
        {{"ok", false}, {"reason", "cancelled"}, {"message", sentence}}, sentence);
}

} // namespace

McpServer::McpServer(EngineHost &host, AgentPresence &presence, Options options)
    : m_host(host)
    , m_options(std::move(options))
    , m_sessions(std::make_unique<McpSessions>(host, presence, m_options.liveWindowMs))
    , m_tools(host, *m_sessions, m_options.open)
    , m_library(host)
    , m_progress(std::make_unique<McpProgress>(host, m_options.progressEveryMs))
    , m_subscriptions(std::make_unique<McpSubscriptions>(host, m_options.updatesEveryMs))
{
    if (!host.parser().workspaceRoot().empty()) {
        m_workspace = std::make_unique<WorkspaceTools>(
            host, *m_sessions, QString::fromStdString(host.parser().workspaceRoot()));
        m_workspace->publish(m_tools);
    }
    for (const char *name : {"localhost", "127.0.0.1", "::1"})
        m_hosts.insert(QLatin1String(name));
    for (const QString &name : m_options.allowedHosts)
        m_hosts.insert(hostName(name));
}

McpServer::~McpServer()
{
    // Parked calls answer through this object: drop them (they take nothing) before it goes.
    for (std::uint64_t waitId : m_sessions->pendingWaits())
        m_host.abandonWait(waitId);
}

const std::vector<std::string> &McpServer::supportedVersions()
{
    static const std::vector<std::string> versions = {"2026-07-28", "2025-11-25", "2025-06-18",
                                                      "2025-03-26"};
    return versions;
}

const std::string &McpServer::modernVersion()
{
    return supportedVersions().front();
}

bool McpServer::isLegacyVersion(const std::string &version)
{
    const auto &known = supportedVersions();
    return version != modernVersion() &&
           std::find(known.begin(), known.end(), version) != known.end();
}

void McpServer::setListenAddress(const QHostAddress &address)
{
    if (!address.isNull() && address != QHostAddress::Any && address != QHostAddress::AnyIPv4 &&
        address != QHostAddress::AnyIPv6)
        m_hosts.insert(address.toString().toLower());
}

bool McpServer::hostAllowed(const QString &host) const
{
    return m_hosts.count(hostName(host)) > 0;
}

std::optional<HttpReply> McpServer::checkTransport(const RestCall &call,
                                                   const std::string &version) const
{
    const QByteArray origin = call.header("origin");
    if (!origin.isEmpty()) {
        const QUrl url(QString::fromLatin1(origin));
        if (!url.isValid() || url.host().isEmpty() || !hostAllowed(url.host()))
            return rpc::httpError(403, rpc::kServerError,
                                  "Origin " + origin.toStdString() + " is not allowed");
    }
    const QByteArray host = call.header("host");
    if (!host.isEmpty() && !hostAllowed(QString::fromLatin1(host)))
        return rpc::httpError(403, rpc::kServerError,
                              "Host " + host.toStdString() + " is not allowed");
    if (call.method != "POST" && call.method != "DELETE") {
        HttpReply reply = rpc::httpError(
            405, rpc::kServerError,
            "use POST for messages and DELETE to end a session; there is no event stream");
        reply.headers.emplace_back("Allow", "POST, DELETE");
        return reply;
    }
    if (call.keyPresented && !call.identity)
        return rpc::unauthorized("the bearer key is not known");
    if (!call.identity && !m_options.open)
        return rpc::unauthorized("an Authorization: Bearer <key> header is required");
    const auto &known = supportedVersions();
    if (!version.empty() && std::find(known.begin(), known.end(), version) == known.end())
        return rpc::unsupportedVersion(version, known);
    if (call.method == "POST") {
        const QByteArray type = call.header("content-type").toLower();
        if (!type.contains("application/json"))
            return rpc::httpError(415, rpc::kServerError, "Content-Type must be application/json");
        const QByteArray accept = call.header("accept").toLower();
        if (!accept.isEmpty() && !accept.contains("application/json") && !accept.contains("*/*"))
            return rpc::httpError(406, rpc::kServerError,
                                  "Accept must include application/json (answers are JSON)");
    }
    return std::nullopt;
}

McpSession *McpServer::sessionFor(const RestCall &call, std::optional<HttpReply> &refusal)
{
    const QByteArray id = call.header("mcp-session-id");
    if (id.isEmpty()) {
        refusal = rpc::httpError(400, rpc::kServerError,
                                 "an Mcp-Session-Id header is required: send initialize first");
        return nullptr;
    }
    McpSession *session = m_sessions->find(id);
    if (!session) {
        refusal = rpc::httpError(404, rpc::kSessionNotFound,
                                 "session not found (ended or unknown): initialize again");
        return nullptr;
    }
    const std::string keyDid = call.identity ? call.identity->did.toStdString() : std::string();
    if (session->keyDid != keyDid) {
        refusal =
            rpc::httpError(403, rpc::kServerError, "this session was opened with another key");
        return nullptr;
    }
    const std::string named = call.header("x-agent-id").toStdString();
    if (!named.empty()) {
        if (const std::string problem = didProblem(named); !problem.empty()) {
            refusal = rpc::httpError(400, rpc::kServerError, "X-Agent-Id " + problem);
            return nullptr;
        }
        if (session->agent.empty())
            m_sessions->bind(*session, named);
        else if (session->agent != named) {
            refusal = rpc::httpError(403, rpc::kServerError,
                                     "this session acts as " + session->agent +
                                         " and may not name " + named);
            return nullptr;
        }
    }
    return session;
}

HttpReply McpServer::endSession(const RestCall &call)
{
    std::optional<HttpReply> refusal;
    McpSession *session = sessionFor(call, refusal);
    if (!session)
        return *refusal;
    m_sessions->end(session->id);
    HttpReply reply;
    reply.status = 204;
    reply.raw = QByteArray();
    return reply;
}

void McpServer::handle(const RestCall &call, const Respond &respond, Deferral &deferral)
{
    // Read first, so that an error about the transport or the session answers the request's
    // own id (JSON-RPC: null only when the id cannot be known).
    std::string error;
    std::optional<json> doc =
        call.method == "POST" ? parseJson(call.body, &error) : std::optional<json>();
    const json id = doc ? rpc::idOf(*doc) : json();
    const auto withId = [&id](HttpReply reply) {
        if (reply.body.is_object() && reply.body.contains("error") &&
            reply.body.value("id", json()).is_null())
            reply.body["id"] = id;
        return reply;
    };
    const std::string version = call.header("mcp-protocol-version").trimmed().toStdString();
    if (std::optional<HttpReply> refused = checkTransport(call, version))
        return respond(withId(std::move(*refused)));
    // The era, per request: 2026-07-28 when the header or the body's _meta names it.
    const bool modern =
        version == modernVersion() || (version.empty() && doc && mcpmeta::declaresVersion(*doc));
    if (call.method == "DELETE") {
        if (!modern)
            return respond(endSession(call));
        HttpReply reply =
            rpc::httpError(405, rpc::kServerError, "2026-07-28 has no sessions to end; use POST");
        reply.headers.emplace_back("Allow", "POST, DELETE");
        return respond(reply);
    }
    if (!doc)
        return respond(rpc::httpError(400, rpc::kParseError, "parse error: " + error));
    if (modern)
        return serveModern(call, std::move(*doc), respond, deferral);
    if (doc->is_object() && doc->contains("method") && (*doc)["method"] == "initialize")
        return respond(withId(initialize(call, *doc)));

    std::optional<HttpReply> refusal;
    McpSession *session = sessionFor(call, refusal);
    if (!session)
        return respond(withId(std::move(*refusal)));
    m_sessions->touch(*session);
    const bool batch = doc->is_array();
    if (batch && (doc->empty() || session->protocolVersion != "2025-03-26"))
        return respond(rpc::httpError(400, rpc::kInvalidRequest,
                                      doc->empty() ? "an empty batch"
                                                   : "batches are accepted only in sessions "
                                                     "that negotiated 2025-03-26"));
    json messages = batch ? std::move(*doc) : json::array({std::move(*doc)});
    serve(*session, std::move(messages), batch, call.header("accept").contains("text/event-stream"),
          respond, deferral);
}

void McpServer::serve(McpSession &session, json messages, bool batch, bool eventStream,
                      const Respond &respond, Deferral &deferral)
{
    // Answers are collected until every message of the POST has one; then they leave together.
    // The grants behind each answer are noted, so that an answer whose grants could not be made
    // durable says so (the transport gives them back) instead of claiming them.
    struct Collector
    {
        json responses = json::array();
        std::size_t outstanding = 0;
        std::size_t grantsSeen = 0;
        std::vector<std::size_t> granting;  // indexes into responses
        std::vector<std::size_t> withdrawn; // of those, cancelled before the answer went out
        std::vector<std::string> keys;      // request ids registered as withdrawable
        bool sent = false;
    };
    auto state = std::make_shared<Collector>();
    state->outstanding = messages.size();
    const std::shared_ptr<EngineHost::Answer> grants = m_host.currentAnswer();
    state->grantsSeen = grants ? grants->grants.size() : 0;
    EngineHost *engine = &m_host;
    McpSessions *table = m_sessions.get();
    const QByteArray sessionId = session.id;
    // A 2026-07-28 request: its transient session ends with its answer, which is completed
    // (resultType, serverInfo, caching hints) just before it goes out.
    const bool modern = session.transient;
    const std::string method =
        modern ? messages.at(0).value("method", std::string()) : std::string();
    const json progressToken = batch ? json() : progressTokenOf(messages.at(0));
    const McpServer *server = this;
    Reply collect = [state, batch, respond, grants, engine, table, sessionId, modern, method,
                     server](json response) {
        const std::size_t seen = grants ? grants->grants.size() : 0;
        if (seen > state->grantsSeen && !response.is_null()) {
            const std::size_t index = state->responses.size();
            state->granting.push_back(index);
            // Until the answer goes out, a cancel or the session's end gives these grants back.
            const std::size_t from = state->grantsSeen;
            const std::string key = response.value("id", json()).dump();
            if (McpSession *s = table->find(sessionId)) {
                std::weak_ptr<Collector> weak = state;
                std::weak_ptr<EngineHost::Answer> answer = grants;
                s->withdrawable[key] = [weak, answer, engine, index, from, seen] {
                    auto st = weak.lock();
                    auto a = answer.lock();
                    if (!st || !a || st->sent)
                        return;
                    std::vector<Grant> back;
                    for (std::size_t g = from; g < seen && g < a->grants.size(); ++g)
                        back.push_back(std::exchange(a->grants[g], Grant{}));
                    st->withdrawn.push_back(index);
                    engine->giveBack(back, false);
                };
                state->keys.push_back(key);
            }
        }
        state->grantsSeen = seen;
        if (!response.is_null())
            state->responses.push_back(std::move(response));
        if (--state->outstanding > 0)
            return;
        if (state->responses.empty()) {
            if (modern)
                table->end(sessionId);
            return respond(rpc::accepted());
        }
        HttpReply reply;
        reply.body = batch ? std::move(state->responses) : std::move(state->responses[0]);
        if (!batch && rpc::isInvalidRequest(reply.body))
            reply.status = 400;
        if (modern && reply.body.contains("error") &&
            reply.body["error"].value("code", 0) == rpc::kMethodNotFound)
            reply.status = 404; // 2026-07-28: an unknown method is 404 with -32601
        reply.whenNotDurable = [granting = state->granting, batch](HttpReply r) {
            for (std::size_t index : granting)
                notDurable(batch ? r.body.at(index) : r.body);
            return r;
        };
        reply.beforeSend = [state, batch, table, sessionId, modern, method, server](HttpReply r) {
            state->sent = true;
            if (McpSession *s = table->find(sessionId))
                for (const std::string &key : state->keys)
                    s->withdrawable.erase(key);
            for (std::size_t index : state->withdrawn)
                withdrawn(batch ? r.body.at(index) : r.body);
            if (modern) {
                server->completeModern(method, r.body);
                table->end(sessionId);
            }
            return r;
        };
        respond(std::move(reply));
    };
    // The holder hears of release requests on its next call that reads an event stream.
    if (eventStream && !batch && messages.at(0).contains("id"))
        noticeReleaseRequests(session, deferral);
    std::vector<std::uint64_t> waits;
    for (const json &message : messages)
        answer(session, message, collect, waits);
    if (waits.empty())
        return;
    if (waits.size() == 1 && eventStream && deferral.sendEvent &&
        (progressToken.is_string() || progressToken.is_number_integer()))
        m_progress->follow(waits.front(), progressToken, deferral.sendEvent);
    EngineHost *host = &m_host;
    McpSessions *sessions = m_sessions.get();
    deferral.onClientGone = [host, sessions, waits, modern, id = session.id] {
        for (std::uint64_t waitId : waits) {
            sessions->forgetWait(id, waitId);
            host->abandonWait(waitId);
        }
        if (modern)
            sessions->end(id);
    };
}

} // namespace leasehold

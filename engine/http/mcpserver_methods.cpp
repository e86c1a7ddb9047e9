// McpServer: the JSON-RPC methods (initialize, ping, tools, resources, prompts, logging and
// server/discover) and the notifications a client sends.

#include "fieldreader.h"
#include "jsonviews.h"
#include "logging.h"
#include "mcprpc.h"
#include "mcpserver.h"

namespace leasehold {

using nlohmann::json;

namespace {

constexpr const char *kLogLevels[] = {"debug", "info",     "notice", "warning",
                                      "error", "critical", "alert",  "emergency"};

// The rank of `level` among the syslog levels MCP uses (-1: not one).
int logRank(const std::string &level)
{
    for (int i = 0; i < int(std::size(kLogLevels)); ++i)
        if (level == kLogLevels[i])
            return i;
    return -1;
}

bool isLogLevel(const std::string &level)
{
    return logRank(level) >= 0;
}

} // namespace

void McpServer::noticeReleaseRequests(McpSession &session, const Deferral &deferral)
{
    const LeaseEngine &engine = m_host.engine();
    if (!engine.hasReleaseRequests() || session.agent.empty() || !deferral.sendEvent ||
        logRank("warning") < logRank(session.logLevel))
        return;
    const TimeMs now = m_host.clock().nowMs();
    for (const ReleaseRequestInfo &r : engine.releaseRequestsFor(session.agent)) {
        // Once per request and session; again when it falls overdue.
        const std::string key = r.requestId + (r.overdue ? "/overdue" : "");
        if (!session.releaseNoticed.insert(key).second)
            continue;
        json data = toJson(r, now);
        data["type"] = "release_requested";
        data["message"] = r.requester + " asks you to release " + r.resource + " (" +
                          std::string(urgencyName(r.urgency)) + " urgency" +
                          (r.overdue ? ", its deadline has passed" : "") + "): " + r.reason +
                          ". Release it with lock_release when your change is written, or "
                          "decline with POST /api/v1/acp/coordination/release-request/" +
                          r.requestId + "/decline.";
        const json notice = {
            {"jsonrpc", "2.0"},
            {"method", "notifications/message"},
            {"params", {{"level", "warning"}, {"logger", "leasehold"}, {"data", data}}}};
        if (!deferral.sendEvent(QByteArray::fromStdString(notice.dump())))
            return;
    }
}

HttpReply McpServer::initialize(const RestCall &call, const json &message)
{
    const std::string malformed = rpc::malformation(message);
    if (!malformed.empty() || !message.contains("id"))
        return rpc::httpError(400, rpc::kInvalidRequest,
                              malformed.empty() ? "initialize is a request: it needs an id"
                                                : malformed);
    const json &id = message["id"];
    const json params = message.value("params", json::object());
    if (!params.is_object()) {
        HttpReply reply;
        reply.body = rpc::error(id, rpc::kInvalidParams, "params must be an object");
        return reply;
    }
    std::optional<HttpReply> refusal;
    const std::string agent = callerAgent(call, refusal);
    if (refusal)
        return *refusal;

    // The version asked for when we speak it (a legacy one: 2026-07-28 has no handshake), else
    // the newest legacy version.
    const std::string asked = params.value("protocolVersion", json()).is_string()
                                  ? params["protocolVersion"].get<std::string>()
                                  : std::string();
    const std::string version = isLegacyVersion(asked) ? asked : supportedVersions().at(1);
    std::string client;
    if (params.contains("clientInfo") && params["clientInfo"].is_object())
        client = params["clientInfo"].value("name", json("")).is_string()
                     ? params["clientInfo"].value("name", std::string())
                     : std::string();
    McpSession &session =
        m_sessions->create(version, client.substr(0, 128),
                           call.identity ? call.identity->did.toStdString() : std::string(), agent,
                           callerVia(call, Via::Mcp));
    qCInfo(lcService) << "MCP session opened by" << (client.empty() ? "a client" : client.c_str())
                      << "for" << (agent.empty() ? "an unnamed agent" : agent.c_str()) << "speaking"
                      << version.c_str();

    json result = {{"protocolVersion", version},
                   {"capabilities",
                    {{"tools", {{"listChanged", false}}},
                     {"resources", {{"subscribe", false}, {"listChanged", false}}},
                     {"prompts", {{"listChanged", false}}},
                     {"logging", json::object()}}},
                   {"serverInfo", serverInfo()},
                   {"instructions", McpLibrary::instructions(m_workspace != nullptr)}};
    HttpReply reply;
    reply.body = rpc::result(id, std::move(result));
    reply.headers.emplace_back("Mcp-Session-Id", session.id);
    return reply;
}

void McpServer::answer(McpSession &session, const json &message, Reply reply,
                       std::vector<std::uint64_t> &waits)
{
    const std::string malformed = rpc::malformation(message);
    if (!malformed.empty())
        return reply(rpc::error(rpc::idOf(message), rpc::kInvalidRequest, malformed));
    const json id = message.value("id", json());
    if (!message.contains("method"))
        return reply(nullptr); // a client's response to a server request: nothing to say
    const std::string &method = message["method"].get_ref<const std::string &>();
    if (!message.contains("id")) {
        notification(session, message);
        return reply(nullptr);
    }
    const json params = message.value("params", json::object());
    if (!params.is_object())
        return reply(rpc::error(id, rpc::kInvalidParams, "params must be an object"));
    if (method == "initialize" && !session.transient)
        return reply(rpc::error(id, rpc::kInvalidRequest,
                                "initialize opens a session; send it alone, without a session"));
    if (method != "tools/call")
        return reply(request(session, id, method, params));

    FieldReader r(params);
    const auto name = r.string("name", true, 128);
    if (r.failed())
        return reply(rpc::error(id, rpc::kInvalidParams, r.error()));
    const json arguments = params.value("arguments", json::object());
    if (!arguments.is_object())
        return reply(rpc::error(id, rpc::kInvalidParams, "arguments must be an object"));
    const std::string tool = m_tools.resolve(*name);
    if (tool.empty())
        return reply(rpc::error(id, rpc::kInvalidParams, "unknown tool: " + *name));

    // A parked call is remembered by its request id, so that notifications/cancelled finds it.
    const std::string key = id.dump();
    const QByteArray sessionId = session.id;
    McpSessions *sessions = m_sessions.get();
    const std::uint64_t waitId =
        m_tools.call(tool, arguments, session, [reply, id, key, sessionId, sessions](json result) {
            if (McpSession *s = sessions->find(sessionId))
                s->pending.erase(key);
            reply(rpc::result(id, std::move(result)));
        });
    if (waitId != 0) {
        session.pending[key] = waitId;
        waits.push_back(waitId);
    }
}

void McpServer::notification(McpSession &session, const json &message)
{
    const std::string &method = message["method"].get_ref<const std::string &>();
    if (method != "notifications/cancelled")
        return; // initialized, roots/list_changed, progress: nothing to do
    const json params = message.value("params", json::object());
    if (!params.is_object() || !params.contains("requestId"))
        return;
    const std::string key = params["requestId"].dump();
    if (auto granted = session.withdrawable.find(key); granted != session.withdrawable.end()) {
        // Granted, but the answer is still waiting for the disk: the caller will not read it,
        // so the grant goes back rather than expire against an agent that never heard of it.
        auto withdraw = std::move(granted->second);
        session.withdrawable.erase(granted);
        withdraw();
        return;
    }
    auto it = session.pending.find(key);
    if (it == session.pending.end())
        return; // already answered, or never parked
    const std::uint64_t waitId = it->second;
    session.pending.erase(it);
    m_host.cancelWait(waitId); // answers the parked call: cancelled, nothing taken
}

json McpServer::request(McpSession &session, const json &id, const std::string &method,
                        const json &params)
{
    const bool modern = session.transient; // 2026-07-28
    const auto ok = [&id](json result) { return rpc::result(id, std::move(result)); };
    const auto fail = [&id](int code, const std::string &text) {
        return rpc::error(id, code, text);
    };
    if (method == "server/discover" && modern)
        return ok(discover());
    if (method == "ping" && !modern) // 2026-07-28 removed ping and logging/setLevel
        return ok(json::object());
    if (method == "tools/list")
        return ok(m_tools.list(modern));
    if (method == "resources/list")
        return ok(m_library.listResources());
    if (method == "resources/templates/list")
        return ok(json{{"resourceTemplates", json::array()}});
    if (method == "prompts/list")
        return ok(m_library.listPrompts());
    FieldReader r(params);
    if (method == "logging/setLevel" && !modern) {
        const auto level = r.string("level", true, 16);
        if (r.failed() || !isLogLevel(*level))
            return fail(rpc::kInvalidParams,
                        "level must be one of debug, info, notice, warning, error, critical, "
                        "alert, emergency");
        session.logLevel = *level;
        return ok(json::object());
    }
    if (method == "resources/read") {
        const auto uri = r.string("uri", true, 256);
        if (r.failed())
            return fail(rpc::kInvalidParams, r.error());
        if (std::optional<json> contents = m_library.readResource(*uri))
            return ok(std::move(*contents));
        // -32002 until 2025-11-25; 2026-07-28 (SEP-2164) says -32602. Both name the URI.
        return rpc::error(id, modern ? rpc::kInvalidParams : rpc::kResourceNotFound,
                          "Resource not found: " + *uri, {{"uri", *uri}});
    }
    if (method == "prompts/get") {
        const auto name = r.string("name", true, 128);
        if (r.failed())
            return fail(rpc::kInvalidParams, r.error());
        if (std::optional<json> prompt = m_library.prompt(*name))
            return ok(std::move(*prompt));
        return fail(rpc::kInvalidParams, "unknown prompt: " + *name);
    }
    return fail(rpc::kMethodNotFound, "Method not found: " + method);
}

} // namespace leasehold

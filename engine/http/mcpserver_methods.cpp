// McpServer: the JSON-RPC methods — initialize, ping, tools, resources, prompts, logging —
// and the notifications a client sends.

#include "fieldreader.h"
#include "logging.h"
#include "mcprpc.h"
#include "mcpserver.h"

namespace leasehold {

using nlohmann::json;

namespace {

bool isLogLevel(const std::string &level)
{
    for (const char *known :
         {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"})
        if (level == known)
            return true;
    return false;
}

} // namespace

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
    std::string agent = call.identity ? call.identity->did.toStdString() : std::string();
    const std::string named = call.header("x-agent-id").toStdString();
    if (const std::string problem = named.empty() ? std::string() : didProblem(named);
        !problem.empty())
        return rpc::httpError(400, rpc::kServerError, "X-Agent-Id " + problem);
    if (!named.empty() && !agent.empty() && named != agent)
        return rpc::httpError(403, rpc::kServerError,
                              "this key acts as " + agent + " and may not name " + named);
    if (agent.empty())
        agent = named;

    const auto &known = supportedVersions();
    const std::string asked = params.value("protocolVersion", json()).is_string()
                                  ? params["protocolVersion"].get<std::string>()
                                  : std::string();
    const std::string version =
        std::find(known.begin(), known.end(), asked) != known.end() ? asked : known.front();
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
                   {"serverInfo",
                    {{"name", "leasehold"},
                     {"title", "Leasehold"},
                     {"version", m_options.version.toStdString()}}},
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
    const json id = message.is_object() ? message.value("id", json()) : json();
    if (!malformed.empty())
        return reply(rpc::error(id.is_string() || id.is_number_integer() ? id : json(),
                                rpc::kInvalidRequest, malformed));
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
    if (method == "initialize")
        return reply(rpc::error(id, rpc::kInvalidRequest,
                                "initialize opens a session; send it alone, without a session"));
    if (method != "tools/call") {
        int code = 0;
        std::string text;
        std::optional<json> result = request(session, method, params, &code, &text);
        return reply(result ? rpc::result(id, std::move(*result)) : rpc::error(id, code, text));
    }

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

std::optional<json> McpServer::request(McpSession &session, const std::string &method,
                                       const json &params, int *errorCode,
                                       std::string *errorMessage)
{
    auto fail = [&](int code, std::string text) -> std::optional<json> {
        *errorCode = code;
        *errorMessage = std::move(text);
        return std::nullopt;
    };
    if (method == "ping")
        return json::object();
    if (method == "tools/list")
        return m_tools.list();
    if (method == "resources/list")
        return m_library.listResources();
    if (method == "resources/templates/list")
        return json{{"resourceTemplates", json::array()}};
    if (method == "prompts/list")
        return m_library.listPrompts();
    FieldReader r(params);
    if (method == "logging/setLevel") {
        const auto level = r.string("level", true, 16);
        if (r.failed() || !isLogLevel(*level))
            return fail(rpc::kInvalidParams,
                        "level must be one of debug, info, notice, warning, error, critical, "
                        "alert, emergency");
        session.logLevel = *level;
        return json::object();
    }
    if (method == "resources/read") {
        const auto uri = r.string("uri", true, 256);
        if (r.failed())
            return fail(rpc::kInvalidParams, r.error());
        if (std::optional<json> contents = m_library.readResource(*uri))
            return contents;
        return fail(rpc::kResourceNotFound, "resource not found: " + *uri);
    }
    if (method == "prompts/get") {
        const auto name = r.string("name", true, 128);
        if (r.failed())
            return fail(rpc::kInvalidParams, r.error());
        if (std::optional<json> prompt = m_library.prompt(*name))
            return prompt;
        return fail(rpc::kInvalidParams, "unknown prompt: " + *name);
    }
    return fail(rpc::kMethodNotFound, "method not found: " + method);
}

} // namespace leasehold

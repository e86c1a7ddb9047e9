// McpServer: what 2026-07-28 adds - requests without a session, validated against their
// `_meta` and headers, server/discover, and results completed with resultType, the server's
// identity and caching hints.

#include "agentpresence.h"
#include "did.h"
#include "fieldreader.h"
#include "mcprequestmeta.h"
#include "mcprpc.h"
#include "mcpserver.h"

namespace leasehold {

using nlohmann::json;

namespace {

// How long a client may reuse a list: the tools, prompts and resources a running server
// offers do not change; five minutes covers a restart with other options.
constexpr std::int64_t kListTtlMs = 300'000;

const json kNothing = json::object(); // absent params or arguments, read in place

} // namespace

std::string McpServer::callerAgent(const RestCall &call, std::optional<HttpReply> &refusal) const
{
    const std::string agent = call.identity ? call.identity->did.toStdString() : std::string();
    const std::string named = call.header("x-agent-id").toStdString();
    if (named.empty())
        return agent;
    if (const std::string problem = didProblem(named); !problem.empty()) {
        refusal = rpc::httpError(400, rpc::kServerError, "X-Agent-Id " + problem);
        return {};
    }
    if (!agent.empty() && named != agent) {
        refusal = rpc::httpError(403, rpc::kServerError,
                                 "this key acts as " + agent + " and may not name " + named);
        return {};
    }
    return named;
}

void McpServer::serveModern(const RestCall &call, json message, const Respond &respond,
                            Deferral &deferral)
{
    const json id = rpc::idOf(message);
    const auto refuse = [&](int code, const std::string &text) {
        respond(rpc::httpError(400, code, text, id));
    };
    if (message.is_array())
        return refuse(rpc::kInvalidRequest,
                      "2026-07-28 takes one JSON-RPC message per POST, not a batch");
    if (const std::string malformed = rpc::malformation(message); !malformed.empty())
        return refuse(rpc::kInvalidRequest, malformed);
    if (!message.contains("method"))
        return refuse(rpc::kInvalidRequest, "a 2026-07-28 client sends no responses");
    if (!message.contains("id")) {
        // Over HTTP, closing the answer's stream cancels a request; notifications/cancelled
        // is honoured too, for the agent's own calls.
        if (message["method"] == "notifications/cancelled")
            cancelModern(call, message);
        return respond(rpc::accepted());
    }
    const json &params = message.contains("params") ? message["params"] : kNothing;
    if (!params.is_object())
        return refuse(rpc::kInvalidParams, "params must be an object");
    std::string problem;
    const std::optional<mcpmeta::RequestMeta> meta = mcpmeta::read(params, &problem);
    if (!meta)
        return refuse(rpc::kInvalidParams, problem);
    if (problem = mcpmeta::headerMismatch(call, message, meta->protocolVersion); !problem.empty())
        return refuse(rpc::kHeaderMismatch, problem);
    if (message["method"] == "tools/call" && params.contains("name") && params["name"].is_string())
        if (problem = mcpmeta::paramHeaderMismatch(
                call, params.contains("arguments") ? params["arguments"] : kNothing,
                m_tools.headerParams(m_tools.resolve(params["name"].get<std::string>())));
            !problem.empty())
            return refuse(rpc::kHeaderMismatch, problem);
    // Here _meta's version equals the header's, which is 2026-07-28: the transport refused a
    // version nobody speaks (-32022), and a 2025 header does not come this way.
    std::optional<HttpReply> refusal;
    const std::string agent = callerAgent(call, refusal);
    if (refusal) {
        refusal->body["id"] = id;
        return respond(std::move(*refusal));
    }
    const Via via = callerVia(call, Via::Mcp);
    if (!agent.empty())
        m_sessions->presence().seen(agent, via); // an agent without a session is live by its calls
    if (message["method"] == "subscriptions/listen")
        return listen(call, id, params, respond, deferral);
    McpSession &session = m_sessions->openTransient(
        meta->protocolVersion, meta->clientName,
        call.identity ? call.identity->did.toStdString() : std::string(), agent, via);
    serve(session, json::array({std::move(message)}), false,
          call.header("accept").contains("text/event-stream"), respond, deferral);
}

void McpServer::listen(const RestCall &call, const json &id, const json &params,
                       const Respond &respond, Deferral &deferral)
{
    const auto refuse = [&](int code, const std::string &text) {
        respond(rpc::httpError(400, code, text, id));
    };
    if (!call.header("accept").contains("text/event-stream") || !deferral.sendEvent)
        return refuse(rpc::kInvalidRequest, "subscriptions/listen answers with an event stream: "
                                            "send Accept: text/event-stream");
    const json filter = params.value("notifications", json::object());
    if (!filter.is_object())
        return refuse(rpc::kInvalidParams, "params.notifications must be an object");
    if (filter.contains("resourceSubscriptions") && !filter["resourceSubscriptions"].is_array())
        return refuse(rpc::kInvalidParams,
                      "params.notifications.resourceSubscriptions must be an array of URIs");
    const std::uint64_t handle = m_subscriptions->open(id, filter, deferral.sendEvent);
    if (handle == 0)
        return; // the client is already gone
    McpSubscriptions *subscriptions = m_subscriptions.get();
    deferral.onClientGone = [subscriptions, handle] { subscriptions->close(handle); };
}

void McpServer::cancelModern(const RestCall &call, const json &message)
{
    const json params = message.value("params", json::object());
    if (!params.is_object() || !params.contains("requestId"))
        return;
    std::optional<HttpReply> refusal;
    const std::string agent = callerAgent(call, refusal);
    if (refusal)
        return;
    const std::string keyDid = call.identity ? call.identity->did.toStdString() : std::string();
    if (McpSession *session = m_sessions->findTransient(keyDid, agent, params["requestId"].dump()))
        notification(*session, message);
}

json McpServer::serverInfo() const
{
    return {{"name", "leasehold"},
            {"title", "Leasehold"},
            {"version", m_options.version.toStdString()}};
}

json McpServer::capabilities() const
{
    // resources.subscribe: subscriptions/listen streams updates of status and queue.
    return {{"tools", json::object()},
            {"resources", {{"subscribe", true}}},
            {"prompts", json::object()}};
}

json McpServer::discover() const
{
    return {{"supportedVersions", supportedVersions()},
            {"capabilities", capabilities()},
            {"instructions", McpLibrary::instructions(m_workspace != nullptr)}};
}

void McpServer::completeModern(const std::string &method, json &response) const
{
    if (!response.is_object() || !response.contains("result") || !response["result"].is_object())
        return;
    json &result = response["result"];
    result["resultType"] = "complete";
    if (!result.contains("_meta") || !result["_meta"].is_object())
        result["_meta"] = json::object();
    result["_meta"][mcpmeta::kServerInfo] = serverInfo();
    if (method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
        method == "resources/list" || method == "resources/templates/list") {
        result["ttlMs"] = kListTtlMs;
        result["cacheScope"] = "public"; // the same for every caller
    } else if (method == "resources/read") {
        result["ttlMs"] = 0;              // the fleet's state, live
        result["cacheScope"] = "private"; // and not for shared caches
    }
}

} // namespace leasehold

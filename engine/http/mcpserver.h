#pragma once

#include "mcplibrary.h"
#include "mcpprogress.h"
#include "mcpsessions.h"
#include "mcpsubscriptions.h"
#include "mcptools.h"
#include "restapi.h"
#include "workspacetools.h"

#include <QHostAddress>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <set>
#include <string>

namespace leasehold {

class AgentPresence;

// MCP over Streamable HTTP at /mcp (docs/protocol.md, "MCP"), in two eras on one endpoint,
// chosen per request as 2026-07-28 says a dual-era server does:
//
// - 2026-07-28 (modern): a request whose MCP-Protocol-Version header, or whose `_meta`, names
//   it. No handshake and no session: each request carries its version and capabilities in
//   `_meta` (missing: -32602, 400) and mirrors its method and name in Mcp-Method / Mcp-Name
//   (missing or different: -32020 HeaderMismatch, 400); the bearer key (or X-Agent-Id in open
//   mode) is the agent. server/discover answers what the handshake used to; removed and unknown
//   methods are 404 with -32601; results carry resultType, the server's identity in `_meta`
//   and, for lists and reads, caching hints (ttlMs, cacheScope).
// - 2025-11-25, 2025-06-18, 2025-03-26 (legacy): `initialize` opens a session (random
//   Mcp-Session-Id); every other message needs a known session (400 without one, 404 for an
//   unknown or ended one) presented with the same key; DELETE ends a session; batches are
//   accepted from 2025-03-26 sessions.
//
// Transport rules, checked first: Origin and Host must name this machine (DNS-rebinding
// defence, 403); GET has no event stream (405 with Allow); a bearer key is needed unless the
// server is open (401); an MCP-Protocol-Version we do not speak is 400 with -32022 and the list
// we do; the body must be JSON (415/400). Every JSON-RPC error answers the request's id when it
// has one. Notifications get 202 without a body.
//
// A tools/call that parks (lock_acquire with a wait) is answered when the wait ends. If its
// request carried a progressToken and accepts text/event-stream, the answer becomes an event
// stream with progress notifications while it waits (McpProgress). notifications/cancelled for
// it (in 2026, from the same agent), the session ending, or the HTTP client leaving ends the
// wait and it takes nothing. In 2026, `subscriptions/listen` streams updates of
// `leasehold://status` and `leasehold://queue` (McpSubscriptions).
//
// Thread: the engine thread.
class McpServer
{
public:
    struct Options
    {
        bool open = false;
        QString version;
        QStringList allowedHosts;              // extra Host/Origin names besides loopback ones
        std::int64_t liveWindowMs = 300'000;   // an agent is live this long after its last call
        std::int64_t progressEveryMs = 10'000; // progress notifications of a parked call
        std::int64_t updatesEveryMs = 250;     // subscriptions/listen: updates coalesced
    };

    McpServer(EngineHost &host, AgentPresence &presence, Options options);
    ~McpServer();

    // The address being listened on: its name is accepted in Host and Origin too.
    void setListenAddress(const QHostAddress &address);
    void handle(const RestCall &call, const Respond &respond, Deferral &deferral);

    McpSessions &sessions() { return *m_sessions; }
    McpSubscriptions &subscriptions() { return *m_subscriptions; }
    // The fs_* tools, when the host has a workspace root (else null).
    WorkspaceTools *workspace() { return m_workspace.get(); }
    // Every version served, newest first; the modern one alone; the legacy ones.
    static const std::vector<std::string> &supportedVersions();
    static const std::string &modernVersion();
    static bool isLegacyVersion(const std::string &version);

private:
    using Reply = std::function<void(nlohmann::json response)>; // null json: nothing to send

    // The transport checks; an answer when the request is refused before reading messages.
    // `version`: its MCP-Protocol-Version header, trimmed.
    std::optional<HttpReply> checkTransport(const RestCall &call, const std::string &version) const;
    bool hostAllowed(const QString &host) const;
    HttpReply endSession(const RestCall &call);
    // The session named by the request, or the refusal (400/403/404) to send instead.
    McpSession *sessionFor(const RestCall &call, std::optional<HttpReply> &refusal);
    HttpReply initialize(const RestCall &call, const nlohmann::json &message);
    // The agent a request acts for: its key's, or X-Agent-Id (open mode, or naming the key's
    // own agent). Sets `refusal` (400/403) when X-Agent-Id is malformed or names another.
    std::string callerAgent(const RestCall &call, std::optional<HttpReply> &refusal) const;
    // subscriptions/listen (2026-07-28): a stream of resource updates until the client leaves.
    void listen(const RestCall &call, const nlohmann::json &id, const nlohmann::json &params,
                const Respond &respond, Deferral &deferral);
    // A 2026-07-28 request, validated and then served in a transient session.
    void serveModern(const RestCall &call, nlohmann::json message, const Respond &respond,
                     Deferral &deferral);
    // Serves `messages` (one, or a 2025-03-26 batch) of `session` and answers them together;
    // `eventStream`: the client accepts text/event-stream (progress while a call is parked).
    void serve(McpSession &session, nlohmann::json messages, bool batch, bool eventStream,
               const Respond &respond, Deferral &deferral);
    // notifications/cancelled of a 2026-07-28 client: the same agent's parked or ungranted call.
    void cancelModern(const RestCall &call, const nlohmann::json &message);
    nlohmann::json serverInfo() const;
    // A 2026-07-28 result, completed: resultType, serverInfo and (for `method`) caching hints.
    void completeModern(const std::string &method, nlohmann::json &response) const;
    nlohmann::json discover() const;
    nlohmann::json capabilities() const;
    // Answers one message of `session` through `reply` (now, or later for a parked tool call);
    // the ids of parked waits are appended to `waits`.
    void answer(McpSession &session, const nlohmann::json &message, Reply reply,
                std::vector<std::uint64_t> &waits);
    void notification(McpSession &session, const nlohmann::json &message);
    // The release requests against the session's agent that it has not heard of yet, as
    // `notifications/message` (level warning, logger "leasehold", data.type
    // "release_requested") on the answer's event stream, ahead of the answer.
    void noticeReleaseRequests(McpSession &session, const Deferral &deferral);
    // The response to a request whose result is known now (a result, or a JSON-RPC error).
    nlohmann::json request(McpSession &session, const nlohmann::json &id, const std::string &method,
                           const nlohmann::json &params);

    EngineHost &m_host;
    Options m_options;
    std::unique_ptr<McpSessions> m_sessions;
    McpTools m_tools;
    std::unique_ptr<WorkspaceTools> m_workspace;
    McpLibrary m_library;
    std::unique_ptr<McpProgress> m_progress;
    std::unique_ptr<McpSubscriptions> m_subscriptions;
    std::set<QString> m_hosts; // lower-case names accepted in Host and Origin
};

} // namespace leasehold

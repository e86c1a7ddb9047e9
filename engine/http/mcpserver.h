#pragma once

#include "mcplibrary.h"
#include "mcpsessions.h"
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

// MCP over Streamable HTTP at /mcp (docs/protocol.md, "MCP"): JSON-RPC 2.0 answered as plain
// application/json.
//
// Transport rules, checked in this order before any message is read: Origin and Host must name
// this machine (DNS-rebinding defence, 403); GET has no event stream (405 with Allow); a bearer
// key is needed unless the server is open (401); MCP-Protocol-Version, when sent, must be one
// we speak (400); the body must be JSON (415/400). Then: `initialize` opens a session (random
// Mcp-Session-Id); every other message needs a known session (400 without one, 404 for an
// unknown or ended one) presented with the same key; DELETE ends a session. Notifications and
// client responses get 202 without a body; batches are accepted from 2025-03-26 sessions.
//
// A tools/call that parks (lock_acquire with a wait) is answered when the wait ends;
// notifications/cancelled for it, the session ending, or the HTTP client leaving ends the wait
// and it takes nothing.
//
// Thread: the engine thread.
class McpServer
{
public:
    struct Options
    {
        bool open = false;
        QString version;
        QStringList allowedHosts;            // extra Host/Origin names besides loopback ones
        std::int64_t liveWindowMs = 300'000; // an agent is live this long after its last call
    };

    McpServer(EngineHost &host, AgentPresence &presence, Options options);
    ~McpServer();

    // The address being listened on: its name is accepted in Host and Origin too.
    void setListenAddress(const QHostAddress &address);
    void handle(const RestCall &call, const Respond &respond, Deferral &deferral);

    McpSessions &sessions() { return *m_sessions; }
    // The fs_* tools, when the host has a workspace root (else null).
    WorkspaceTools *workspace() { return m_workspace.get(); }
    static const std::vector<std::string> &supportedVersions();

private:
    using Reply = std::function<void(nlohmann::json response)>; // null json: nothing to send

    // The transport checks; an answer when the request is refused before reading messages.
    std::optional<HttpReply> checkTransport(const RestCall &call) const;
    bool hostAllowed(const QString &host) const;
    HttpReply endSession(const RestCall &call);
    // The session named by the request, or the refusal (400/403/404) to send instead.
    McpSession *sessionFor(const RestCall &call, std::optional<HttpReply> &refusal);
    HttpReply initialize(const RestCall &call, const nlohmann::json &message);
    // Answers one message of `session` through `reply` (now, or later for a parked tool call);
    // the ids of parked waits are appended to `waits`.
    void answer(McpSession &session, const nlohmann::json &message, Reply reply,
                std::vector<std::uint64_t> &waits);
    void notification(McpSession &session, const nlohmann::json &message);
    // Answers a request whose result is known now; errors become JSON-RPC errors.
    std::optional<nlohmann::json> request(McpSession &session, const std::string &method,
                                          const nlohmann::json &params, int *errorCode,
                                          std::string *errorMessage);

    EngineHost &m_host;
    Options m_options;
    std::unique_ptr<McpSessions> m_sessions;
    McpTools m_tools;
    std::unique_ptr<WorkspaceTools> m_workspace;
    McpLibrary m_library;
    std::set<QString> m_hosts; // lower-case names accepted in Host and Origin
};

} // namespace leasehold

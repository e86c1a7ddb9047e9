#pragma once

#include "clock.h"
#include "via.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace leasehold {

class AgentPresence;
class EngineHost;

// One MCP session: created by `initialize`, named by its Mcp-Session-Id, ended by DELETE.
// A 2026-07-28 request, which has no session, is served in a transient one that lives as long
// as the request: it holds the request's parked wait and its answer still waiting for the disk
// exactly as a session would, and is never live (the call itself marks its agent present).
struct McpSession
{
    QByteArray id;
    std::string protocolVersion;
    std::string clientName;
    // The key that opened it (empty in open mode): later requests must present the same one.
    std::string keyDid;
    // The agent it acts for; in open mode it may be bound by the first tool call.
    std::string agent;
    std::string logLevel = "info"; // as set by logging/setLevel
    Via via = Via::Mcp;            // Via::Guard when `leasehold guard mcp` opened it
    bool transient = false;        // one 2026-07-28 request, not a session
    TimeMs lastSeen = 0;
    bool live = false;
    // Parked tool calls by JSON-RPC request id (its dump), so notifications/cancelled finds them.
    std::map<std::string, std::uint64_t> pending; // request id (dumped) -> engine wait id
    // Granted tool calls whose answer has not gone out yet (it waits for the disk): cancelling
    // the request or ending the session gives their grants back.
    std::map<std::string, std::function<void()>> withdrawable; // request id (dumped) -> how
    // Release requests against its agent it was told of (McpServer::noticeReleaseRequests).
    std::set<std::string> releaseNoticed;
};

// The MCP session table. A session is live while it was seen within the live window; one timer
// is armed for the moment the least recently seen live session lapses. Each change of an
// agent's live-session count goes to the presence table (AgentPresence), which decides which
// agents are live on any surface.
//
// Thread: the engine thread.
class McpSessions : public QObject
{
    Q_OBJECT

public:
    McpSessions(EngineHost &host, AgentPresence &presence, std::int64_t liveWindowMs,
                std::size_t maxSessions = 4096, QObject *parent = nullptr);
    ~McpSessions() override;

    // A new session with a random 256-bit id. When the table is full the least recently seen
    // session is ended to make room.
    McpSession &create(std::string protocolVersion, std::string clientName, std::string keyDid,
                       std::string agent, Via via = Via::Mcp);
    // The transient session of one 2026-07-28 request: not counted, never evicted, never live.
    McpSession &openTransient(std::string protocolVersion, std::string clientName,
                              std::string keyDid, std::string agent, Via via);
    // The transient session of `keyDid` and `agent` in which request `requestKey` (its id,
    // dumped) is parked or waits for the disk: what notifications/cancelled names without a
    // session. An empty `agent` matches any (open mode, where calls name their actor).
    McpSession *findTransient(const std::string &keyDid, const std::string &agent,
                              const std::string &requestKey);
    McpSession *find(const QByteArray &id);
    // Ends a session: its parked calls are cancelled (answered `cancelled`; they take nothing).
    bool end(const QByteArray &id);
    // Marks the session seen now (live again if it had lapsed).
    void touch(McpSession &session);
    // Names the agent of a session that had none (open mode).
    void bind(McpSession &session, const std::string &agent);

    // Lapses sessions whose window has passed; the timer calls it, tests with a manual clock too.
    void sweep();

    // Sessions opened by initialize (transient ones are not counted).
    std::size_t size() const { return m_sessions.size() - m_transient.size(); }
    // The engine waits of every parked call in every session.
    std::vector<std::uint64_t> pendingWaits() const;
    // Forgets parked call `waitId` of session `id` (its client went away).
    void forgetWait(const QByteArray &id, std::uint64_t waitId);
    // Distinct agents live on any surface (AgentPresence).
    int liveAgents() const;
    AgentPresence &presence() { return m_presence; }
    std::int64_t liveWindowMs() const { return m_windowMs; }

private:
    using Stamp = std::pair<TimeMs, McpSession *>;
    McpSession &add(std::string protocolVersion, std::string clientName, std::string keyDid,
                    std::string agent, Via via, bool transient);
    void setLive(McpSession &session, bool live);
    void countAgent(const std::string &agent, Via via, int delta);
    void rearm();

    EngineHost &m_host;
    AgentPresence &m_presence;
    std::int64_t m_windowMs;
    std::size_t m_maxSessions;
    std::unordered_map<std::string, std::unique_ptr<McpSession>> m_sessions; // by id
    std::set<McpSession *> m_transient;
    std::set<Stamp> m_byLastSeen; // every session, least recently seen first
    std::set<Stamp> m_liveBySeen; // live sessions only
    std::map<std::pair<std::string, Via>, int> m_liveByAgent; // live sessions
    QTimer m_alarm;
    TimeMs m_armedFor = 0;
};

} // namespace leasehold

#pragma once

#include "agentpresence.h"
#include "guardedtcpserver.h"
#include "keystore.h"
#include "mcpserver.h"
#include "requeststats.h"
#include "restapi.h"
#include "watchhub.h"

#include <QHostAddress>
#include <QHttpServer>

#include <memory>
#include <optional>

namespace leasehold {

// The HTTP transport: one QHttpServer whose every request goes through a single entry point
// (its missing-handler), which applies the body cap, reads the bearer key, times the request,
// dispatches to MCP (/mcp) or the REST table and writes the answer — later, for a parked wait, and
// only if the client is still connected (a client that goes away cancels its wait).
//
// Thread: the engine thread.
class HttpFront : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        bool open = false;
        QString version;
        GuardedTcpServer::Limits limits;
        QStringList allowedHosts;              // Host/Origin names MCP accepts besides loopback
        std::int64_t liveWindowMs = 300'000;   // MCP: an agent is live this long after a call
        std::int64_t progressEveryMs = 10'000; // MCP: progress of a parked call, this often
        WatchHub::Options watch;
    };

    HttpFront(EngineHost &host, KeyStore keys, Options options, QObject *parent = nullptr);
    ~HttpFront() override;

    // Binds and listens; returns the port (useful with port 0), or 0 with `error` set.
    quint16 listen(const QHostAddress &address, quint16 port, QString *error);
    // Closes the listening socket; open connections are served until they close.
    void stopListening();
    // Hands every answer written so far to the kernel, without waiting for the event loop.
    void flushConnections();
    const RestApi &api() const { return *m_api; }
    // One more route (the service's own extras; tests add one that misbehaves).
    void addRoute(QByteArray method, const QString &path, Access access,
                  std::function<void(const RestCall &, const Respond &, Deferral &)> handler)
    {
        m_api->add(std::move(method), path, access, QString(), std::move(handler));
    }
    void addRoute(QByteArray method, const QString &path, Access access, QString summary,
                  std::function<void(const RestCall &, const Respond &, Deferral &)> handler)
    {
        m_api->add(std::move(method), path, access, std::move(summary), std::move(handler));
    }
    McpServer &mcp() { return *m_mcp; }
    WatchHub &watch() { return *m_watch; }
    AgentPresence &presence() { return *m_presence; }
    const RequestStats &stats() const { return m_stats; }
    // Connections, sessions, live agents and the store's queue, as /metrics shows them.
    RequestStats::Gauges gauges() const;
    const KeyStore &keys() const { return m_keys; }
    // Mints a key for `did` in `role`: accepted at once, kept in the store as a digest (so it
    // survives restarts), the key itself returned once and never stored. Nothing, with `error`
    // set, when the DID is not usable or the service runs --open (no keys to check).
    std::optional<QByteArray> mintKey(const QString &did, Role role, QString *error);
    // A key accepted until the process ends, never stored (simulated agents of --demo).
    QByteArray temporaryKey(const QString &did);
    bool open() const { return m_options.open; }
    // Adds keys minted by earlier runs (kept in the store as digests).
    void acceptStoredKeys(const std::vector<StoredKey> &keys);

    // Cluster mode. While this instance stands by, every call but GET /healthz is answered
    // 307 with Location at the same path on `leader` (and the leader named in the body), or
    // 503 not_leading while no leader is known (an empty `leader`). std::nullopt: it serves.
    void setStandby(std::optional<QString> leader);
    void setHealthFacts(std::function<HealthFacts()> facts)
    {
        m_api->setHealthFacts(std::move(facts));
    }
    void setClusterFacts(std::function<nlohmann::json()> facts)
    {
        m_api->setClusterFacts(std::move(facts));
    }

    // Serves one request the transport has read: the body cap, the bearer key, the durability
    // of the answer, then MCP (/mcp) or the REST table, with a thrown error answered 500.
    // `send` writes the answer and says whether anyone was there to read it; grants of an answer
    // nobody read are given back. A parked wait leaves `deferral.onClientGone` set, for the
    // transport to call if the client leaves first. The fuzz targets serve requests here.
    void serve(RestCall call, const std::function<bool(const HttpReply &)> &send,
               Deferral &deferral);

private:
    void handle(const QHttpServerRequest &request, QHttpServerResponder &&responder);
    static QByteArray wireFormat(const HttpReply &reply, bool closeAfter);
    static HttpReply standbyAnswer(const RestCall &call, const QString &leader);
    // One server-sent event carrying `data`, as one chunk of a chunked answer.
    static QByteArray eventChunk(const QByteArray &data);

    EngineHost &m_host;
    KeyStore m_keys;
    Options m_options;
    std::unique_ptr<AgentPresence> m_presence; // before the surfaces that report to it
    std::unique_ptr<RestApi> m_api;
    std::unique_ptr<McpServer> m_mcp;
    std::unique_ptr<WatchHub> m_watch;
    RequestStats m_stats;
    QHttpServer m_server;
    GuardedTcpServer *m_tcp = nullptr;
    std::optional<QString> m_standby;
};

} // namespace leasehold

#pragma once

#include "enginehost.h"
#include "keystore.h"
#include "refusals.h"

#include <QByteArray>
#include <QString>
#include <QUrlQuery>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace leasehold {

class AgentPresence;

// One HTTP answer. `body` is sent as JSON unless `raw` holds the bytes to send instead (with
// `contentType`); an empty `raw` is an empty body.
struct HttpReply
{
    int status = 200;
    nlohmann::json body;
    std::optional<QByteArray> raw;
    QByteArray contentType = "application/json";
    std::vector<std::pair<QByteArray, QByteArray>> headers;
    // The answer to send instead when the grants this answer carries could not be made durable
    // and were given back. Unset: 503 store_unavailable.
    std::function<HttpReply(HttpReply)> whenNotDurable;
    // Called just before the answer is written (or found undeliverable), with a last chance to
    // change it: an MCP answer drops grants its caller withdrew meanwhile.
    std::function<HttpReply(HttpReply)> beforeSend;

    // The bytes the body is sent as.
    QByteArray payload() const { return raw ? *raw : QByteArray::fromStdString(body.dump()); }
};

// A request as the API sees it, after the transport checked size and read the key.
struct RestCall
{
    QByteArray method; // "GET", "POST", ...
    QString path;
    QUrlQuery query;
    QByteArray body;
    QList<QPair<QByteArray, QByteArray>> headers;
    bool keyPresented = false;
    std::optional<Identity> identity; // set when the presented key is known

    // The first header called `name` (compared without case), or an empty array.
    QByteArray header(QByteArrayView name) const;
};

// The surface a call came through: `X-Leasehold-Via: guard|hook|git` as Leasehold's own
// clients send it, else `fallback` (REST or MCP).
Via callerVia(const RestCall &call, Via fallback);

using Respond = std::function<void(HttpReply)>;

// The answer to one request as a stream of server-sent events (200, text/event-stream,
// chunked), for the handlers whose answer is a stream: MCP's progress and listen streams, the
// watch stream. The transport makes one per request; the first frame sent turns the answer
// into a stream, after which a final answer goes out as the stream's last event.
class EventStream
{
public:
    virtual ~EventStream() = default;
    // Sends `frame` (whole events, "event: ...\nid: ...\ndata: ...\n\n", or a comment) as
    // one chunk. False, and nothing written, once the client is gone or the answer has gone out.
    virtual bool sendFrame(const QByteArray &frame) = 0;
    // One event of type `message` carrying `data` (MCP's).
    bool sendEvent(const QByteArray &data)
    {
        return sendFrame("event: message\ndata: " + data + "\n\n");
    }
    // The bytes sent that the kernel has not taken yet: how far the client is behind.
    virtual qint64 backlog() const = 0;
    // Ends the stream (its last chunk) and closes the connection; nothing is sent after it.
    virtual void end() = 0;
};

// Set by a handler whose answer comes later; the transport calls it if the client goes away.
struct Deferral
{
    std::function<void()> onClientGone;
    // Set by the transport: sends `data` as one server-sent event of this request's answer
    // (`stream->sendEvent`). Unset where the transport cannot stream.
    std::function<bool(const QByteArray &data)> sendEvent;
    // Set by the transport with sendEvent: the answer's event stream.
    std::shared_ptr<EventStream> stream;
};

enum class Access { Public, Reader, Agent, Admin };

struct Route
{
    QByteArray method;
    QString path;
    Access access;
    QString summary;
    std::function<void(const RestCall &, const Respond &, Deferral &)> handler;
};

// The REST surface (docs/protocol.md, "REST"): a table of routes with their access rule; each
// handler parses its input, calls the engine through the host and serialises the outcome. Refusals
// become 409 with Retry-After, bad input 400 naming the field, unknown paths 404, wrong methods
// 405. A route's path may hold `{id}` segments, which match any one segment.
//
// Thread: the engine thread (the host's).
class RestApi
{
public:
    static constexpr const char *kBase = "/api/v1/acp/coordination";

    // `presence`, when given, learns of every agent that calls (AgentPresence).
    RestApi(EngineHost &host, bool open, QString version, AgentPresence *presence = nullptr);

    // Answers `call` now (through `respond`) or later (a parked wait; see Deferral).
    void dispatch(const RestCall &call, const Respond &respond, Deferral &deferral) const;
    const std::vector<Route> &routes() const { return m_routes; }

    static HttpReply invalid(const std::string &error);
    // How a refusal's sentence names the next step, by a request's `wording`: "rest" (the
    // routes), "lock" (the MCP lock tools, which the guard publishes) or "tool" (for a hook: the
    // tool the model just used). Nothing for another word.
    static std::optional<NextSteps> wordingSteps(const std::string &wording);
    static HttpReply refusal(const Refusal &refusal, const NextSteps &steps = restSteps());
    static HttpReply problem(int status, const char *reason, const std::string &error);
    // Builds the answer with `work` on a worker thread and hands it to `respond` back on the
    // engine thread (`host`'s): for answers that are costly to encode (snapshots, exports).
    static void answerFromWorker(EngineHost &host, std::function<HttpReply()> work,
                                 const Respond &respond);
    // Adds `releaseRequests` (the open release requests against `holder`'s leases) to `reply`
    // when there are any; nothing, and next to no cost, when there are none.
    static void addReleaseRequests(EngineHost &host, HttpReply &reply, const std::string &holder);
    // 503 store_unavailable with Retry-After, saying what the store's trouble is.
    static HttpReply storeUnavailable(const StoreHealth &health);

    void add(QByteArray method, const QString &path, Access access, QString summary,
             std::function<void(const RestCall &, const Respond &, Deferral &)> handler);
    // Cluster mode: what /healthz adds as "cluster" (role, leader, term).
    void setClusterFacts(std::function<nlohmann::json()> facts)
    {
        m_clusterFacts = std::move(facts);
    }

    // What GET /health needs beyond the engine's snapshot (disk room, cluster); without it the
    // check knows the store's health and the last hour from the host alone.
    void setHealthFacts(std::function<HealthFacts()> facts) { m_healthFacts = std::move(facts); }

private:
    // The acting agent: the key's DID, or the body's actorDid in open mode. Sets `reply` on
    // failure (400 missing, 403 actor_mismatch).
    std::optional<std::string> actor(const RestCall &call, const nlohmann::json &body,
                                     std::optional<HttpReply> &reply) const;
    // A body parsed as a JSON object and the agent it acts for; on failure answers itself.
    struct AgentCall
    {
        nlohmann::json body;
        std::string actor;
    };
    std::optional<AgentCall> agentCall(const RestCall &call, const Respond &respond) const;

    void lease(const RestCall &call, const Respond &respond, Deferral &deferral) const;
    void release(const RestCall &call, const Respond &respond) const;
    void renew(const RestCall &call, const Respond &respond) const;
    void pin(const RestCall &call, const Respond &respond, bool unpin) const;
    // POST /check: may the caller change these now? (the guard's and the hooks' question)
    void check(const RestCall &call, const Respond &respond) const;
    void waitView(const RestCall &call, const Respond &respond) const;
    // GET /ledger (JSON pages) or, with `exportAll`, /ledger/export (JSON Lines or CSV).
    void ledger(const RestCall &call, const Respond &respond, bool exportAll = false) const;
    void admin(const RestCall &call, const Respond &respond, const QString &lever) const;
    // GET /health: the health check's findings, worst first.
    void health(const Respond &respond) const;
    // Release requests (restapi_releaserequests.cpp): raise, decline, list; and `respond`
    // wrapped so that every answer to `holder` carries its open requests.
    void raiseRequest(const RestCall &call, const Respond &respond) const;
    void declineRequest(const RestCall &call, const Respond &respond) const;
    void listRequests(const RestCall &call, const Respond &respond) const;
    Respond holderReply(const Respond &respond, std::string holder) const;

    EngineHost &m_host;
    bool m_open;
    QString m_version;
    AgentPresence *m_presence;
    std::vector<Route> m_routes;
    std::function<nlohmann::json()> m_clusterFacts;
    std::function<HealthFacts()> m_healthFacts;
};

} // namespace leasehold

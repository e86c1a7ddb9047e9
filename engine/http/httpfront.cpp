#include "httpfront.h"

#include "fieldreader.h"
#include "logging.h"
#include "openapi.h"

#include <QElapsedTimer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QPointer>
#include <QTcpSocket>

namespace leasehold {

namespace {

QByteArray methodName(QHttpServerRequest::Method method)
{
    switch (method) {
    case QHttpServerRequest::Method::Get:
        return "GET";
    case QHttpServerRequest::Method::Post:
        return "POST";
    case QHttpServerRequest::Method::Put:
        return "PUT";
    case QHttpServerRequest::Method::Delete:
        return "DELETE";
    case QHttpServerRequest::Method::Head:
        return "HEAD";
    case QHttpServerRequest::Method::Options:
        return "OPTIONS";
    case QHttpServerRequest::Method::Patch:
        return "PATCH";
    default:
        return "OTHER";
    }
}

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 409:
        return "Conflict";
    case 413:
        return "Payload Too Large";
    case 415:
        return "Unsupported Media Type";
    case 408:
        return "Request Timeout";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    case 307:
        return "Temporary Redirect";
    default:
        return "Status";
    }
}

// What an exception says, whatever was thrown.
std::string describeException(std::exception_ptr thrown)
{
    try {
        std::rethrow_exception(thrown);
    } catch (const std::exception &e) {
        return e.what();
    } catch (...) {
        return "an exception of unknown type";
    }
}

} // namespace

HttpFront::HttpFront(EngineHost &host, KeyStore keys, Options options, QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_keys(std::move(keys))
    , m_options(std::move(options))
    , m_presence(std::make_unique<AgentPresence>(host, m_options.liveWindowMs))
    , m_api(std::make_unique<RestApi>(host, m_options.open, m_options.version, m_presence.get()))
    , m_mcp(std::make_unique<McpServer>(
          host, *m_presence,
          McpServer::Options{m_options.open, m_options.version, m_options.allowedHosts,
                             m_options.liveWindowMs, m_options.progressEveryMs}))
    , m_watch(std::make_unique<WatchHub>(host, m_options.watch, m_presence.get(), m_options.open))
{
    m_api->add("GET", QLatin1String(RestApi::kBase) + QStringLiteral("/watch"), Access::Reader,
               QStringLiteral("The leases (under ?prefix=) as a snapshot at a ledger revision, "
                              "then every change after it, as server-sent events; resumes from "
                              "Last-Event-ID or ?since="),
               [this](const RestCall &call, const Respond &respond, Deferral &deferral) {
                   m_watch->serve(call, respond, deferral);
               });
    m_api->add("GET", QStringLiteral("/metrics"), Access::Public,
               QStringLiteral("Prometheus metrics"),
               [this](const RestCall &, const Respond &respond, Deferral &) {
                   HttpReply reply;
                   reply.contentType = "text/plain; version=0.0.4";
                   reply.raw = m_stats.prometheus(*m_host.sharedSnapshot(1000), gauges());
                   respond(std::move(reply));
               });
    m_api->add("POST", QLatin1String(RestApi::kBase) + QStringLiteral("/admin/keys"), Access::Admin,
               QStringLiteral("Mint an agent key: {actorDid, role?: agent|admin} -> {key}; kept "
                              "as a digest, shown once"),
               [this](const RestCall &call, const Respond &respond, Deferral &) {
                   std::string error;
                   std::optional<nlohmann::json> body = parseJsonObject(call.body, &error);
                   if (!body)
                       return respond(RestApi::invalid(error));
                   FieldReader r(*body);
                   const auto did = r.did("actorDid", true);
                   const auto role = r.string("role", false, 16);
                   if (!r.failed() && role && *role != "agent" && *role != "admin")
                       return respond(RestApi::invalid("role must be agent or admin"));
                   if (r.failed())
                       return respond(RestApi::invalid(r.error()));
                   QString why;
                   const Role wanted = role && *role == "admin" ? Role::Admin : Role::Agent;
                   const auto key = mintKey(QString::fromStdString(*did), wanted, &why);
                   if (!key)
                       return respond(RestApi::invalid(why.toStdString()));
                   HttpReply reply;
                   reply.status = 201;
                   reply.body = {{"ok", true},
                                 {"actorDid", *did},
                                 {"role", wanted == Role::Admin ? "admin" : "agent"},
                                 {"key", key->toStdString()}};
                   respond(std::move(reply));
               });
    m_api->add("GET", QStringLiteral("/api/v1/openapi.json"), Access::Public,
               QStringLiteral("This API described in OpenAPI 3.1"),
               [this](const RestCall &, const Respond &respond, Deferral &) {
                   HttpReply reply;
                   reply.body = openApiDocument(m_api->routes(), m_options.version);
                   respond(std::move(reply));
               });
    m_server.setMissingHandler(
        [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            handle(request, std::move(responder));
        });
}

HttpFront::~HttpFront() = default;

std::optional<QByteArray> HttpFront::mintKey(const QString &did, Role role, QString *error)
{
    if (m_options.open) {
        *error = QStringLiteral("the service runs --open: agents name themselves with an "
                                "X-Agent-Id header and need no key");
        return std::nullopt;
    }
    if (const std::string problem = didProblem(did.toStdString()); !problem.empty()) {
        *error = QStringLiteral("actorDid ") + QString::fromStdString(problem);
        return std::nullopt;
    }
    const QByteArray key = KeyStore::mintKey();
    const QByteArray digest = KeyStore::digest(key);
    m_keys.addDigest(digest, {did, role});
    m_host.keep(PutKey{{digest.toHex().toStdString(), did.toStdString(),
                        role == Role::Admin ? "admin" : "agent", m_host.clock().nowMs()}});
    return key;
}

QByteArray HttpFront::temporaryKey(const QString &did)
{
    const QByteArray key = KeyStore::mintKey();
    m_keys.add(key, {did, Role::Agent});
    return key;
}

RequestStats::Gauges HttpFront::gauges() const
{
    RequestStats::Gauges g;
    g.openConnections = m_tcp ? m_tcp->openConnections() : 0;
    if (m_tcp) {
        g.maxConnections = m_tcp->limits().maxConnections;
        g.parkedConnections = m_tcp->parkedConnections();
        g.connectionsEvicted = m_tcp->evictedConnections();
        g.connectionsRejected = m_tcp->rejectedConnections();
        g.requestsTimedOut = m_tcp->timedOutRequests();
    }
    g.storeHealth = m_host.storeHealth().reasonName();
    g.storeGivenBack = m_host.storeRefusedChanges();
    g.mcpSessions = int(m_mcp->sessions().size());
    g.watchers = int(m_watch->watchers());
    g.watchersCutSlow = m_watch->stats().cutSlow;
    g.liveAgents = m_presence->liveAgents();
    if (const LeaseStore *store = m_host.store())
        g.store = store->stats();
    return g;
}

quint16 HttpFront::listen(const QHostAddress &address, quint16 port, QString *error)
{
    auto *tcp = new GuardedTcpServer(m_options.limits, this);
    if (!tcp->listen(address, port)) {
        *error = tcp->errorString();
        delete tcp;
        return 0;
    }
    m_tcp = tcp;
    m_server.bind(tcp);
    m_mcp->setListenAddress(address);
    qCInfo(lcHttp) << "serving on" << address.toString() << tcp->serverPort()
                   << (m_options.open ? "(open mode)" : "(bearer keys)");
    return tcp->serverPort();
}

void HttpFront::stopListening()
{
    if (m_tcp) {
        qCInfo(lcHttp) << "no longer accepting connections;" << m_tcp->openConnections()
                       << "still open";
        m_tcp->close();
    }
}

void HttpFront::flushConnections()
{
    if (!m_tcp)
        return;
    for (QTcpSocket *socket : m_tcp->findChildren<QTcpSocket *>())
        socket->flush();
}

namespace {

// One request's answer on its socket: written once, as a whole answer or as an event stream.
class SocketStream final : public EventStream
{
public:
    SocketStream(QTcpSocket *to, bool closeWhenAnswered)
        : socket(to)
        , closeAfter(closeWhenAnswered)
    {}

    bool connected() const { return socket && socket->state() == QAbstractSocket::ConnectedState; }

    bool sendFrame(const QByteArray &frame) override
    {
        if (answered || !connected())
            return false;
        if (!streaming) {
            streaming = true;
            QByteArray head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                              "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\n"
                              "Transfer-Encoding: chunked\r\n";
            if (closeAfter)
                head += "Connection: close\r\n";
            socket->write(head + "\r\n");
        }
        socket->write(chunk(frame));
        return true;
    }
    qint64 backlog() const override { return connected() ? socket->bytesToWrite() : 0; }
    void end() override
    {
        if (answered)
            return;
        answered = true;
        if (!connected())
            return;
        if (streaming)
            socket->write("0\r\n\r\n");
        socket->disconnectFromHost();
    }

    static QByteArray chunk(const QByteArray &frame)
    {
        return QByteArray::number(frame.size(), 16) + "\r\n" + frame + "\r\n";
    }

    QPointer<QTcpSocket> socket;
    const bool closeAfter;
    bool answered = false;
    bool streaming = false; // the answer became an event stream
};

} // namespace

void HttpFront::handle(const QHttpServerRequest &request, QHttpServerResponder &&responder)
{
    QElapsedTimer clock;
    clock.start();
    auto out = std::make_shared<QHttpServerResponder>(std::move(responder));
    auto stream = std::make_shared<SocketStream>(out->socket(),
                                                 request.value("connection").toLower() == "close");

    RestCall call;
    call.method = methodName(request.method());
    call.path = request.url().path();
    call.query = request.query();
    call.body = request.body();
    call.headers = request.headers();
    // Writes the answer; false when nobody was there to read it.
    auto send = [this, stream, clock](const HttpReply &reply) -> bool {
        if (stream->answered)
            return false;
        stream->answered = true;
        m_stats.record(reply.status, double(clock.nsecsElapsed()) / 1e9);
        if (reply.status >= 400 && reply.status != 409)
            qCDebug(lcHttp) << "answered" << reply.status
                            << reply.body.value("reason", std::string()).c_str();
        if (!stream->connected())
            return false;
        QTcpSocket *socket = stream->socket;
        if (m_tcp)
            m_tcp->requestFinished(socket);
        if (stream->streaming)
            socket->write(eventChunk(reply.payload()) + "0\r\n\r\n");
        else
            socket->write(wireFormat(reply, stream->closeAfter));
        if (stream->closeAfter)
            socket->disconnectFromHost();
        return true;
    };

    Deferral deferral;
    deferral.sendEvent = [stream](const QByteArray &data) { return stream->sendEvent(data); };
    deferral.stream = stream;
    serve(std::move(call), send, deferral);
    if (stream->answered || !deferral.onClientGone || !stream->socket)
        return;
    // A parked wait: if the client leaves first, the wait ends and takes nothing.
    auto gone = std::make_shared<std::function<void()>>(std::move(deferral.onClientGone));
    connect(stream->socket, &QTcpSocket::disconnected, this, [stream, gone] {
        if (!stream->answered && *gone) {
            stream->answered = true;
            auto cancel = std::move(*gone);
            *gone = nullptr;
            cancel();
        }
    });
}

void HttpFront::serve(RestCall call, const std::function<bool(const HttpReply &)> &send,
                      Deferral &deferral)
{
    if (m_standby && !(call.method == "GET" && call.path == QLatin1String("/healthz"))) {
        send(standbyAnswer(call, *m_standby));
        return;
    }
    Respond respond = [send](HttpReply reply) { send(reply); };
    // Grants made while this request is served (now, or when its parked wait ends) belong to
    // this answer: if it cannot be delivered, they are given back instead of leaked.
    auto answer = std::make_shared<EngineHost::Answer>();
    if (call.method != "GET") {
        // A change is answered only once it is durable (group commit: the store's writer makes
        // every decision of a batch durable with one fsync; the engine itself never waits). If
        // the store cannot make it durable within its bound, the grants are given back and the
        // caller hears store_unavailable; other changes (releases, levers) stand and are
        // answered as made.
        respond = [host = &m_host, send, answer](HttpReply reply) {
            // An answer that nothing rewrites goes out as built: its bytes wait for the disk,
            // not its tree of JSON values (freed now, while the allocator can reuse them).
            if (!reply.raw && !reply.whenNotDurable && !reply.beforeSend && reply.status < 400) {
                reply.raw = QByteArray::fromStdString(reply.body.dump());
                reply.body = nullptr;
            }
            host->whenDurable([host, send, answer, reply = std::move(reply)](bool durable) mutable {
                if (!durable && !answer->grants.empty()) {
                    host->giveBack(std::exchange(answer->grants, {}), true);
                    auto rewrite = std::move(reply.whenNotDurable);
                    reply = rewrite ? rewrite(std::move(reply))
                                    : RestApi::storeUnavailable(host->storeHealth());
                }
                if (auto last = std::move(reply.beforeSend))
                    reply = last(std::move(reply));
                if (!send(reply))
                    host->giveBack(std::exchange(answer->grants, {}), false);
            });
        };
    }
    if (call.body.size() > m_options.limits.maxBodyBytes)
        return respond(RestApi::problem(413, "invalid_request", "body is larger than 1 MiB"));
    const QByteArray authorization = call.header("authorization");
    if (!authorization.isEmpty()) {
        call.keyPresented = true;
        if (authorization.startsWith("Bearer "))
            call.identity = m_keys.authenticate(authorization.mid(7).trimmed());
    }

    EngineHost::AnswerScope scope(m_host, answer);
    // The barrier: a handler that throws answers 500 and the service goes on.
    try {
        if (call.path == QLatin1String("/mcp"))
            m_mcp->handle(call, respond, deferral);
        else
            m_api->dispatch(call, respond, deferral);
    } catch (...) {
        qCCritical(lcHttp) << "internal error serving" << call.method << call.path
                           << describeException(std::current_exception()).c_str();
        respond(RestApi::problem(500, "internal", "an internal error; it was logged"));
    }
}

void HttpFront::setStandby(std::optional<QString> leader)
{
    m_standby = std::move(leader);
    if (m_standby) // a standby's engine no longer decides: its watchers go to the leader
        m_watch->closeAll("standby");
}

void HttpFront::acceptStoredKeys(const std::vector<StoredKey> &keys)
{
    for (const StoredKey &k : keys)
        m_keys.addDigest(
            QByteArray::fromHex(QByteArray::fromStdString(k.digestHex)),
            {QString::fromStdString(k.did), k.role == "admin" ? Role::Admin : Role::Agent});
}

HttpReply HttpFront::standbyAnswer(const RestCall &call, const QString &leader)
{
    if (leader.isEmpty()) {
        HttpReply reply = RestApi::problem(503, "not_leading",
                                           "this instance stands by and no leader is elected yet");
        reply.headers.emplace_back("Retry-After", "1");
        return reply;
    }
    QUrl location(leader);
    location.setPath(call.path);
    location.setQuery(call.query);
    HttpReply reply =
        RestApi::problem(307, "not_leading",
                         "this instance stands by; the leader is at " + leader.toStdString() +
                             " (send the same request there, with the same key)");
    reply.body["leader"] = leader.toStdString();
    reply.headers.emplace_back("Location", location.toEncoded());
    return reply;
}

QByteArray HttpFront::eventChunk(const QByteArray &data)
{
    return SocketStream::chunk("event: message\ndata: " + data + "\n\n");
}

QByteArray HttpFront::wireFormat(const HttpReply &reply, bool closeAfter)
{
    const QByteArray body = reply.payload();
    // One write per answer: status line, headers and body leave in a single segment.
    QByteArray wire;
    wire.reserve(body.size() + 256);
    wire +=
        "HTTP/1.1 " + QByteArray::number(reply.status) + ' ' + reasonPhrase(reply.status) + "\r\n";
    if (!body.isEmpty())
        wire += "Content-Type: " + reply.contentType + "\r\n";
    if (reply.status != 204)
        wire += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    wire += "Cache-Control: no-store\r\n";
    for (const auto &[name, value] : reply.headers)
        wire += name + ": " + value + "\r\n";
    if (closeAfter)
        wire += "Connection: close\r\n";
    wire += "\r\n";
    wire += body;
    return wire;
}

} // namespace leasehold

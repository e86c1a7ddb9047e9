#pragma once

// An MCP client for protocol tests: JSON-RPC over the fixture's real loopback HTTP, with the
// session and protocol-version headers a real client sends, and a raw-socket exchange for the
// headers an HTTP library will not let a caller forge (Host).

#include "servicetest.h"

#include <QTcpSocket>
#include <QTimer>

namespace leasehold::test {

using Headers = std::vector<std::pair<QByteArray, QByteArray>>;

// A client of either era: a 2025 one opens a session with initialize and sends its id; a
// 2026-07-28 one (`modern`) has no session, and puts `_meta` and the standard headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name) on every request. `extra` headers replace
// those of the same name; a null value leaves the header out.
class McpClient
{
public:
    static constexpr const char *kModern = "2026-07-28";

    McpClient(ServiceFixture &fixture, QByteArray bearer, bool modernClient = false)
        : s(fixture)
        , key(std::move(bearer))
        , modern(modernClient)
    {}

    static nlohmann::json meta()
    {
        return {{"io.modelcontextprotocol/protocolVersion", kModern},
                {"io.modelcontextprotocol/clientInfo", {{"name", "tst_mcp"}, {"version", "1"}}},
                {"io.modelcontextprotocol/clientCapabilities", nlohmann::json::object()}};
    }

    QNetworkReply *send(const QByteArray &method, const QByteArray &body, const Headers &extra = {})
    {
        Headers headers = {{"Content-Type", "application/json"},
                           {"Accept", "application/json, text/event-stream"}};
        if (!key.isEmpty())
            headers.emplace_back("Authorization", "Bearer " + key);
        if (!session.isEmpty() && !modern)
            headers.emplace_back("Mcp-Session-Id", session);
        if (modern)
            headers.emplace_back("MCP-Protocol-Version", kModern);
        else if (!version.isEmpty())
            headers.emplace_back("MCP-Protocol-Version", version);
        for (const auto &[name, value] : extra) {
            std::erase_if(headers, [&name = name](const auto &h) {
                return h.first.compare(name, Qt::CaseInsensitive) == 0;
            });
            if (!value.isNull())
                headers.emplace_back(name, value);
        }
        QNetworkRequest request(s.url(QStringLiteral("/mcp")));
        for (const auto &[name, value] : headers)
            request.setRawHeader(name, value);
        return s.net.sendCustomRequest(request, method, body);
    }
    // Sends `message` as it is, with (for a modern client) the headers mirroring it.
    QNetworkReply *sendMessage(const nlohmann::json &message, const Headers &extra = {})
    {
        Headers headers;
        if (modern && message.is_object() && message.contains("method")) {
            const std::string method = message["method"];
            headers.emplace_back("Mcp-Method", QByteArray::fromStdString(method));
            const nlohmann::json params = message.value("params", nlohmann::json::object());
            for (const char *field : {"name", "uri"})
                if (params.is_object() && params.contains(field) && params[field].is_string() &&
                    (method == "tools/call" || method == "prompts/get" ||
                     method == "resources/read"))
                    headers.emplace_back(
                        "Mcp-Name", QByteArray::fromStdString(params[field].get<std::string>()));
        }
        headers.insert(headers.end(), extra.begin(), extra.end());
        return send("POST", QByteArray::fromStdString(message.dump()), headers);
    }
    QNetworkReply *start(const std::string &method, nlohmann::json params, int id,
                         const Headers &extra = {})
    {
        if (modern) {
            nlohmann::json withMeta = meta();
            if (params.contains("_meta"))
                withMeta.update(params["_meta"]);
            params["_meta"] = withMeta;
        }
        return sendMessage({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}},
                           extra);
    }
    HttpResult post(const nlohmann::json &message, const Headers &extra = {})
    {
        return ServiceFixture::finish(sendMessage(message, extra));
    }
    HttpResult rpc(const std::string &method,
                   const nlohmann::json &params = nlohmann::json::object(), int id = 1,
                   const Headers &extra = {})
    {
        return ServiceFixture::finish(start(method, params, id, extra));
    }
    // initialize; on success the session and negotiated version are kept for later requests.
    // A modern client has nothing to open: it succeeds without a request.
    HttpResult initialize(const std::string &asked = "2025-11-25", const Headers &extra = {})
    {
        if (modern)
            return HttpResult{200, nlohmann::json::object(), {}, {}};
        session.clear();
        version.clear();
        const HttpResult r = post({{"jsonrpc", "2.0"},
                                   {"id", 0},
                                   {"method", "initialize"},
                                   {"params",
                                    {{"protocolVersion", asked},
                                     {"capabilities", nlohmann::json::object()},
                                     {"clientInfo", {{"name", "tst_mcp"}, {"version", "1"}}}}}},
                                  extra);
        if (r.status == 200) {
            session = r.header("Mcp-Session-Id");
            version = QByteArray::fromStdString(r.body["result"]["protocolVersion"]);
        }
        return r;
    }
    // tools/call; returns the result object (or the whole body if there was none).
    nlohmann::json tool(const std::string &name,
                        const nlohmann::json &arguments = nlohmann::json::object(), int id = 1)
    {
        const HttpResult r = rpc("tools/call", {{"name", name}, {"arguments", arguments}}, id);
        return r.body.contains("result") ? r.body["result"] : r.body;
    }

    ServiceFixture &s;
    QByteArray key;
    bool modern = false;
    QByteArray session;
    QByteArray version;
};

// Starts lock_acquire for `client` (with `meta` in the request's _meta, when given) and returns
// once the engine holds it parked.
inline QNetworkReply *startParked(ServiceFixture &s, McpClient &client,
                                  const nlohmann::json &arguments, int id,
                                  nlohmann::json meta = nlohmann::json())
{
    const std::size_t before = s.host->engine().parkedCount();
    nlohmann::json params = {{"name", "lock_acquire"}, {"arguments", arguments}};
    if (!meta.is_null())
        params["_meta"] = std::move(meta);
    QNetworkReply *reply = client.start("tools/call", params, id);
    [&] { QTRY_COMPARE(s.host->engine().parkedCount(), before + 1); }();
    return reply;
}

// The events of an answer that became an event stream, read as they arrive.
class EventReader
{
public:
    explicit EventReader(QNetworkReply *reply)
        : m_reply(reply)
    {}
    // Runs the event loop until `count` events have arrived (true), or the answer ended or
    // five seconds passed without them (false).
    bool waitFor(std::size_t count)
    {
        QTimer bound;
        bound.setSingleShot(true);
        bound.start(5000);
        while (read(), events.size() < count && !m_reply->isFinished() && bound.isActive()) {
            QEventLoop loop;
            QObject::connect(m_reply, &QNetworkReply::readyRead, &loop, &QEventLoop::quit);
            QObject::connect(m_reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
            QObject::connect(&bound, &QTimer::timeout, &loop, &QEventLoop::quit);
            loop.exec();
        }
        read();
        return events.size() >= count;
    }
    // Runs the event loop until the answer has ended (true) or five seconds passed (false).
    bool waitForEnd()
    {
        QTimer bound;
        bound.setSingleShot(true);
        bound.start(5000);
        while (!m_reply->isFinished() && bound.isActive()) {
            QEventLoop loop;
            QObject::connect(m_reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
            QObject::connect(&bound, &QTimer::timeout, &loop, &QEventLoop::quit);
            loop.exec();
        }
        read();
        return m_reply->isFinished();
    }
    QByteArray contentType() const { return m_reply->rawHeader("Content-Type"); }
    int status() const
    {
        return m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    }

    std::vector<nlohmann::json> events;

private:
    void read()
    {
        m_buffer += m_reply->readAll();
        for (qsizetype end; (end = m_buffer.indexOf("\n\n")) >= 0; m_buffer.remove(0, end + 2))
            for (const QByteArray &line : m_buffer.left(end).split('\n'))
                if (line.startsWith("data: "))
                    events.push_back(
                        nlohmann::json::parse(line.mid(6).toStdString(), nullptr, false));
    }
    QNetworkReply *m_reply;
    QByteArray m_buffer;
};

// Sends `request` (a whole HTTP/1.1 message) on a fresh connection and returns the status code
// of the answer (0 if the connection closed without one). The server shares this thread, so
// the wait runs the event loop until the socket says something happened.
inline int rawStatus(quint16 port, const QByteArray &request)
{
    QTcpSocket socket;
    QEventLoop loop;
    QObject::connect(&socket, &QTcpSocket::readyRead, &loop, &QEventLoop::quit);
    QObject::connect(&socket, &QTcpSocket::disconnected, &loop, &QEventLoop::quit);
    QObject::connect(&socket, &QTcpSocket::errorOccurred, &loop, &QEventLoop::quit);
    socket.connectToHost(QHostAddress::LocalHost, port);
    socket.write(request);
    QByteArray answer;
    while (!answer.contains("\r\n") && socket.state() != QAbstractSocket::UnconnectedState) {
        loop.exec();
        answer += socket.readAll();
    }
    const QList<QByteArray> words = answer.split(' ');
    return words.size() > 1 ? words[1].toInt() : 0;
}

inline QByteArray rawPost(const QByteArray &headers, const QByteArray &body)
{
    return "POST /mcp HTTP/1.1\r\n" + headers +
           "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
}

} // namespace leasehold::test

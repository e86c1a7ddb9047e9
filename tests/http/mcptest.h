#pragma once

// An MCP client for protocol tests: JSON-RPC over the fixture's real loopback HTTP, with the
// session and protocol-version headers a real client sends, and a raw-socket exchange for the
// headers an HTTP library will not let a caller forge (Host).

#include "servicetest.h"

#include <QTcpSocket>

namespace leasehold::test {

using Headers = std::vector<std::pair<QByteArray, QByteArray>>;

class McpClient
{
public:
    McpClient(ServiceFixture &fixture, QByteArray bearer)
        : s(fixture)
        , key(std::move(bearer))
    {}

    QNetworkReply *send(const QByteArray &method, const QByteArray &body, const Headers &extra = {})
    {
        QNetworkRequest request(s.url(QStringLiteral("/mcp")));
        request.setRawHeader("Content-Type", "application/json");
        request.setRawHeader("Accept", "application/json, text/event-stream");
        if (!key.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + key);
        if (!session.isEmpty())
            request.setRawHeader("Mcp-Session-Id", session);
        if (!version.isEmpty())
            request.setRawHeader("MCP-Protocol-Version", version);
        for (const auto &[name, value] : extra)
            request.setRawHeader(name, value);
        return s.net.sendCustomRequest(request, method, body);
    }
    QNetworkReply *start(const std::string &method, const nlohmann::json &params, int id)
    {
        const nlohmann::json message = {
            {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
        return send("POST", QByteArray::fromStdString(message.dump()));
    }
    HttpResult post(const nlohmann::json &message, const Headers &extra = {})
    {
        return ServiceFixture::finish(
            send("POST", QByteArray::fromStdString(message.dump()), extra));
    }
    HttpResult rpc(const std::string &method,
                   const nlohmann::json &params = nlohmann::json::object(), int id = 1)
    {
        return ServiceFixture::finish(start(method, params, id));
    }
    // initialize; on success the session and negotiated version are kept for later requests.
    HttpResult initialize(const std::string &asked = "2025-11-25", const Headers &extra = {})
    {
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
    QByteArray session;
    QByteArray version;
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

#include "innerhttp.h"

#include <QNetworkReply>

using nlohmann::json;

InnerHttp::InnerHttp(QUrl url, QList<QPair<QByteArray, QByteArray>> headers, QObject *parent)
    : InnerTransport(parent)
    , m_url(std::move(url))
    , m_headers(std::move(headers))
{}

void InnerHttp::send(const json &outgoing)
{
    QNetworkRequest request(m_url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader("Accept", "application/json, text/event-stream");
    for (const auto &[name, value] : m_headers)
        request.setRawHeader(name, value);
    if (!m_session.isEmpty())
        request.setRawHeader("Mcp-Session-Id", m_session);
    if (!m_version.isEmpty())
        request.setRawHeader("MCP-Protocol-Version", m_version);
    const bool initialize =
        outgoing.is_object() && outgoing.value("method", json()) == "initialize";
    const json id = outgoing.is_object() && outgoing.contains("id") && outgoing.contains("method")
                        ? outgoing["id"]
                        : json();
    QNetworkReply *reply = m_net.post(request, QByteArray::fromStdString(outgoing.dump()));
    connect(reply, &QNetworkReply::finished, this, [this, reply, initialize, id] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray body = reply->readAll();
        if (initialize && !reply->rawHeader("Mcp-Session-Id").isEmpty())
            m_session = reply->rawHeader("Mcp-Session-Id");
        if (status == 202 || (status >= 200 && status < 300 && body.trimmed().isEmpty()))
            return; // a notification or an answer taken
        if (status >= 200 && status < 300) {
            if (reply->header(QNetworkRequest::ContentTypeHeader)
                    .toString()
                    .startsWith(QLatin1String("text/event-stream")))
                return readEvents(body);
            const json parsed = json::parse(body.begin(), body.end(), nullptr, false);
            if (initialize && parsed.is_object() && parsed.contains("result") &&
                parsed["result"].value("protocolVersion", json()).is_string())
                m_version = QByteArray::fromStdString(
                    parsed["result"]["protocolVersion"].get<std::string>());
            if (!parsed.is_discarded())
                emit message(parsed);
            return;
        }
        if (id.is_null())
            return;
        const QString why =
            status == 0 ? reply->errorString() : QStringLiteral("HTTP %1").arg(status);
        emit message({{"jsonrpc", "2.0"},
                      {"id", id},
                      {"error",
                       {{"code", -32603},
                        {"message", QStringLiteral("the inner server at %1 did not answer: %2")
                                        .arg(m_url.toString(), why)
                                        .toStdString()}}}});
    });
}

void InnerHttp::readEvents(const QByteArray &body)
{
    // Each event's data lines joined make one JSON-RPC message.
    QByteArray data;
    const auto flush = [&] {
        if (data.isEmpty())
            return;
        const json parsed = json::parse(data.begin(), data.end(), nullptr, false);
        if (!parsed.is_discarded())
            emit message(parsed);
        data.clear();
    };
    for (const QByteArray &raw : body.split('\n')) {
        const QByteArray line = raw.endsWith('\r') ? raw.chopped(1) : raw;
        if (line.isEmpty())
            flush();
        else if (line.startsWith("data:"))
            data += line.mid(line.startsWith("data: ") ? 6 : 5);
    }
    flush();
}

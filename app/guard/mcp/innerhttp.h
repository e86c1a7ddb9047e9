#pragma once

#include "innerserver.h"
#include "serviceclient.h"

#include <QNetworkAccessManager>

// An inner server reached over MCP's Streamable HTTP transport (--inner-url): each message is
// POSTed; a JSON answer or the events of an SSE answer come back as messages, and the session
// id the server gives at initialize is sent with every later request. A request the server
// cannot be reached for is answered with a JSON-RPC error, so no call waits for ever.
class InnerHttp : public InnerTransport
{
    Q_OBJECT

public:
    InnerHttp(QUrl url, QList<QPair<QByteArray, QByteArray>> headers, QObject *parent = nullptr);

    void start() override {}
    void send(const nlohmann::json &message) override;

private:
    void readEvents(const QByteArray &body);

    QUrl m_url;
    QList<QPair<QByteArray, QByteArray>> m_headers;
    QNetworkAccessManager m_net;
    QByteArray m_session;
    QByteArray m_version;
};

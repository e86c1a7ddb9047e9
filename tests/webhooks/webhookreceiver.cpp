#include "webhookreceiver.h"

#include <QDateTime>
#include <QMessageAuthenticationCode>

WebhookReceiver::WebhookReceiver(QObject *parent)
    : QObject(parent)
{
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, this, [this, socket] { readFrom(socket); });
            connect(socket, &QTcpSocket::disconnected, this, [this, socket] {
                m_buffers.remove(socket);
                socket->deleteLater();
            });
        }
    });
}

WebhookReceiver::~WebhookReceiver()
{
    // The connections go first, while what their handlers touch is still there.
    for (QTcpSocket *socket : m_server.findChildren<QTcpSocket *>()) {
        socket->disconnect(this);
        delete socket;
    }
}

bool WebhookReceiver::listen()
{
    return m_server.listen(QHostAddress::LocalHost, 0);
}

QString WebhookReceiver::url() const
{
    return QStringLiteral("http://127.0.0.1:%1/hook").arg(m_server.serverPort());
}

void WebhookReceiver::readFrom(QTcpSocket *socket)
{
    QByteArray &buffer = m_buffers[socket];
    buffer += socket->readAll();
    for (;;) {
        const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        Request request;
        const QList<QByteArray> lines = buffer.left(headEnd).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        request.path = first.value(1);
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines[i].indexOf(':');
            if (colon > 0)
                request.headers.insert(lines[i].left(colon).trimmed().toLower(),
                                       lines[i].mid(colon + 1).trimmed());
        }
        const qsizetype length = request.headers.value("content-length", "0").toLongLong();
        if (buffer.size() < headEnd + 4 + length)
            return;
        request.body = buffer.mid(headEnd + 4, length);
        buffer.remove(0, headEnd + 4 + length);
        m_requests.push_back(request);
        if (m_mode == Mode::Hang)
            continue; // never answers; the sender must cut the attempt itself
        const QByteArray text = m_status >= 200 && m_status < 300 ? "ok" : "no";
        socket->write("HTTP/1.1 " + QByteArray::number(m_status) + " X\r\nContent-Length: " +
                      QByteArray::number(text.size()) + "\r\n\r\n" + text);
    }
}

QList<QByteArray> WebhookReceiver::uniqueIds() const
{
    QList<QByteArray> ids;
    for (const Request &r : m_requests) {
        const QByteArray id = r.headers.value("x-leasehold-delivery");
        if (!ids.contains(id))
            ids << id;
    }
    return ids;
}

bool WebhookReceiver::signatureValid(const Request &request, const QByteArray &secret,
                                     qint64 toleranceS)
{
    // The receiver's side of docs/webhooks.md: t=<unix>,v1=<hex HMAC-SHA256(secret, t.body)>.
    QByteArray t, v1;
    for (const QByteArray &part : request.headers.value("x-leasehold-signature").split(',')) {
        if (part.startsWith("t="))
            t = part.mid(2);
        else if (part.startsWith("v1="))
            v1 = part.mid(3);
    }
    if (t.isEmpty() || v1.isEmpty())
        return false;
    if (std::abs(QDateTime::currentSecsSinceEpoch() - t.toLongLong()) > toleranceS)
        return false;
    const QByteArray expected =
        QMessageAuthenticationCode::hash(t + "." + request.body, secret, QCryptographicHash::Sha256)
            .toHex();
    return expected == v1;
}

#include "guardedtcpserver.h"

#include <QTcpSocket>
#include <QTimer>

namespace leasehold {

namespace {

void refuse(QTcpSocket *socket, const QByteArray &status, const QByteArray &json)
{
    socket->write("HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
                  QByteArray::number(json.size()) + "\r\nConnection: close\r\n\r\n" + json);
    socket->disconnectFromHost();
}

} // namespace

GuardedTcpServer::GuardedTcpServer(Limits limits, QObject *parent)
    : QTcpServer(parent)
    , m_limits(limits)
{}

void GuardedTcpServer::incomingConnection(qintptr handle)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(handle)) {
        delete socket;
        return;
    }
    if (m_open >= m_limits.maxConnections) {
        ++m_rejected;
        refuse(socket, "503 Service Unavailable",
               R"({"ok":false,"reason":"busy","error":"too many open connections"})");
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        return;
    }
    ++m_open;
    connect(socket, &QObject::destroyed, this, [this] { --m_open; });

    auto *idle = new QTimer(socket);
    idle->setSingleShot(true);
    idle->setInterval(m_limits.idleTimeoutMs);
    connect(idle, &QTimer::timeout, socket, [socket] { socket->abort(); });
    connect(socket, &QTcpSocket::bytesWritten, idle, qOverload<>(&QTimer::start));
    // Connected before QHttpServer's own slot, so this sees each batch of bytes first.
    connect(socket, &QTcpSocket::readyRead, socket, [this, socket, idle] {
        idle->start();
        inspect(socket);
    });
    idle->start();
    addPendingConnection(socket);
}

void GuardedTcpServer::inspect(QTcpSocket *socket)
{
    const QByteArray head = socket->peek(16 * 1024);
    const qsizetype end = head.indexOf("\r\n\r\n");
    if (end < 0) {
        if (head.size() >= 16 * 1024)
            refuse(socket, "431 Request Header Fields Too Large",
                   R"({"ok":false,"reason":"invalid_request","error":"headers are too large"})");
        return;
    }
    const QByteArray headers = head.left(end).toLower();
    const qsizetype at = headers.indexOf("\r\ncontent-length:");
    if (at < 0)
        return;
    const qsizetype valueStart = at + 17;
    const qsizetype lineEnd = headers.indexOf("\r\n", valueStart);
    bool ok = false;
    const qint64 length =
        headers.mid(valueStart, lineEnd < 0 ? -1 : lineEnd - valueStart).trimmed().toLongLong(&ok);
    if (ok && length > m_limits.maxBodyBytes) {
        socket->readAll(); // keep it from QHttpServer
        refuse(socket, "413 Payload Too Large",
               R"({"ok":false,"reason":"invalid_request","error":"body is larger than 1 MiB"})");
    }
}

} // namespace leasehold

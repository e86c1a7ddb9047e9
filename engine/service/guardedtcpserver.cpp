#include "guardedtcpserver.h"

#include <QElapsedTimer>
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

// Follows one connection's byte stream (headers, then Content-Length bytes of body, then the
// next request) without consuming it, so an oversized body is refused before QHttpServer
// buffers it.
class ConnectionGuard : public QObject
{
public:
    ConnectionGuard(QTcpSocket *socket, const GuardedTcpServer::Limits &limits)
        : QObject(socket)
        , m_socket(socket)
        , m_limits(limits)
    {
        // Activity only stamps a time; the timer is not re-armed per request (that churn showed
        // in profiles). When it fires it closes the connection or waits out the remainder.
        m_activity.start();
        m_idle.setSingleShot(true);
        connect(&m_idle, &QTimer::timeout, this, [this] {
            const qint64 quiet = m_activity.elapsed();
            if (quiet >= m_limits.idleTimeoutMs)
                m_socket->abort();
            else
                m_idle.start(int(m_limits.idleTimeoutMs - quiet));
        });
        connect(socket, &QTcpSocket::bytesWritten, this, [this] { m_activity.start(); });
        // Connected before QHttpServer's own slot, so each batch is seen before it is read.
        connect(socket, &QTcpSocket::readyRead, this, [this] {
            m_activity.start();
            inspect(m_socket->peek(m_socket->bytesAvailable()));
        });
        m_idle.start(m_limits.idleTimeoutMs);
    }

private:
    void inspect(const QByteArray &batch)
    {
        qsizetype at = 0;
        while (at < batch.size()) {
            if (m_bodyLeft > 0) {
                const qint64 take = std::min<qint64>(m_bodyLeft, batch.size() - at);
                m_bodyLeft -= take;
                at += take;
                continue;
            }
            const qsizetype before = m_header.size();
            m_header += batch.mid(at, kMaxHeaderBytes - before);
            const qsizetype end = m_header.indexOf("\r\n\r\n");
            if (end < 0) {
                if (m_header.size() >= kMaxHeaderBytes)
                    return refuse(
                        m_socket, "431 Request Header Fields Too Large",
                        R"({"ok":false,"reason":"invalid_request","error":"headers are too large"})");
                return;
            }
            at += end + 4 - before; // the part of this batch that completed the header block
            const qint64 length = contentLength(m_header.left(end));
            m_header.clear();
            if (length > m_limits.maxBodyBytes) {
                m_socket->readAll(); // keep it from QHttpServer
                return refuse(
                    m_socket, "413 Payload Too Large",
                    R"({"ok":false,"reason":"invalid_request","error":"body is larger than 1 MiB"})");
            }
            m_bodyLeft = std::max<qint64>(length, 0);
        }
    }

    static qint64 contentLength(const QByteArray &headerBlock)
    {
        const QByteArray headers = headerBlock.toLower();
        const qsizetype at = headers.indexOf("\r\ncontent-length:");
        if (at < 0)
            return 0;
        const qsizetype start = at + 17;
        const qsizetype end = headers.indexOf("\r\n", start);
        bool ok = false;
        const qint64 value =
            headers.mid(start, end < 0 ? -1 : end - start).trimmed().toLongLong(&ok);
        return ok ? value : 0;
    }

    static constexpr qsizetype kMaxHeaderBytes = 16 * 1024;
    QTcpSocket *m_socket;
    GuardedTcpServer::Limits m_limits;
    QTimer m_idle;
    QElapsedTimer m_activity;
    QByteArray m_header; // the current request's header block, as far as seen
    qint64 m_bodyLeft = 0;
};

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
    new ConnectionGuard(socket, m_limits);
    addPendingConnection(socket);
}

} // namespace leasehold

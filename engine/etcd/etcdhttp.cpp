#include "etcdhttp.h"

#include <QDeadlineTimer>
#include <QSslSocket>
#include <QTcpSocket>

namespace leasehold::etcd {

namespace {

constexpr qsizetype kMaxAnswer = 64 * 1024 * 1024; // etcd's own request limit is 1.5 MiB

// Reads what the socket has into `buffer`, waiting up to the deadline for at least one byte.
bool fill(QTcpSocket &socket, QByteArray &buffer, const QDeadlineTimer &deadline,
          std::string *error)
{
    if (socket.bytesAvailable() == 0 &&
        !socket.waitForReadyRead(int(std::max<qint64>(0, deadline.remainingTime())))) {
        *error = deadline.hasExpired() ? "no answer in time"
                                       : "connection lost: " + socket.errorString().toStdString();
        return false;
    }
    buffer += socket.readAll();
    if (buffer.size() > kMaxAnswer) {
        *error = "answer too large";
        return false;
    }
    return true;
}

} // namespace

HttpConnection::HttpConnection(QString host, quint16 port,
                               std::shared_ptr<const QSslConfiguration> tls)
    : m_host(std::move(host))
    , m_port(port)
    , m_tls(std::move(tls))
{}

HttpConnection::~HttpConnection() = default;

QString HttpConnection::endpoint() const
{
    return QStringLiteral("%1://%2:%3")
        .arg(m_tls ? QLatin1String("https") : QLatin1String("http"), m_host)
        .arg(m_port);
}

void HttpConnection::drop()
{
    if (m_socket)
        m_socket->abort();
    m_socket.reset();
}

std::optional<HttpConnection::Response> HttpConnection::post(const QByteArray &path,
                                                             const QByteArray &body, int timeoutMs,
                                                             Failure *failure, std::string *error)
{
    const QDeadlineTimer deadline(timeoutMs);
    // A kept connection the member closed meanwhile (it went away, or let an idle connection
    // go) is seen now, before anything is sent on it.
    if (m_socket && m_socket->bytesAvailable() == 0)
        m_socket->waitForReadyRead(0);
    if (m_socket && m_socket->bytesAvailable() > 0)
        drop(); // nothing is owed on an idle connection: whatever this is, it is not an answer
    if (!m_socket || m_socket->state() != QAbstractSocket::ConnectedState) {
        bool connected = false;
        QString why; // the TLS handshake's own words, when that is what failed
        if (m_tls) {
            auto socket = std::make_unique<QSslSocket>();
            socket->setSslConfiguration(*m_tls);
            socket->connectToHostEncrypted(m_host, m_port);
            connected =
                socket->waitForEncrypted(int(std::max<qint64>(1, deadline.remainingTime())));
            if (!connected && !socket->sslHandshakeErrors().isEmpty())
                why = socket->sslHandshakeErrors().first().errorString();
            m_socket = std::move(socket);
        } else {
            m_socket = std::make_unique<QTcpSocket>();
            m_socket->connectToHost(m_host, m_port);
            connected =
                m_socket->waitForConnected(int(std::max<qint64>(1, deadline.remainingTime())));
        }
        if (!connected) {
            *failure = Failure::NotSent;
            *error = "cannot connect to " + endpoint().toStdString() + ": " +
                     (!why.isEmpty()          ? why.toStdString()
                      : deadline.hasExpired() ? std::string("no answer in time")
                                              : m_socket->errorString().toStdString());
            drop();
            return std::nullopt;
        }
        m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    }
    QByteArray request =
        "POST " + path + " HTTP/1.1\r\nHost: " + m_host.toLatin1() + ':' +
        QByteArray::number(m_port) +
        "\r\nContent-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) +
        "\r\n\r\n" + body;
    m_socket->write(request);
    while (m_socket->bytesToWrite() > 0) {
        if (!m_socket->waitForBytesWritten(int(std::max<qint64>(1, deadline.remainingTime())))) {
            // The request did not leave whole, so no member can have acted on it.
            *failure = Failure::NotSent;
            *error = "cannot send to " + endpoint().toStdString() + ": " +
                     m_socket->errorString().toStdString();
            drop();
            return std::nullopt;
        }
    }
    Response response;
    std::string why;
    if (!readAnswer(&response, int(std::max<qint64>(1, deadline.remainingTime())), &why)) {
        *failure = Failure::NoAnswer;
        *error = endpoint().toStdString() + ": " + why;
        drop();
        return std::nullopt;
    }
    return response;
}

bool HttpConnection::readAnswer(Response *response, int timeoutMs, std::string *error)
{
    const QDeadlineTimer deadline(timeoutMs);
    QByteArray buffer;
    qsizetype headerEnd = -1;
    while ((headerEnd = buffer.indexOf("\r\n\r\n")) < 0) {
        if (!fill(*m_socket, buffer, deadline, error))
            return false;
    }
    const QList<QByteArray> lines = buffer.left(headerEnd).split('\n');
    const QList<QByteArray> status = lines.value(0).trimmed().split(' ');
    bool ok = false;
    response->status = status.value(1).toInt(&ok);
    if (!status.value(0).startsWith("HTTP/1.") || !ok) {
        *error = "not an HTTP answer";
        return false;
    }
    qsizetype length = -1;
    bool chunked = false;
    bool close = false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        const QByteArray name = lines[i].left(colon).trimmed().toLower();
        const QByteArray value = lines[i].mid(colon + 1).trimmed().toLower();
        if (name == "content-length")
            length = value.toLongLong();
        else if (name == "transfer-encoding")
            chunked = value.contains("chunked");
        else if (name == "connection")
            close = value == "close";
    }
    buffer.remove(0, headerEnd + 4);
    if (chunked) {
        for (;;) {
            qsizetype lineEnd = -1;
            while ((lineEnd = buffer.indexOf("\r\n")) < 0) {
                if (!fill(*m_socket, buffer, deadline, error))
                    return false;
            }
            const qsizetype size =
                buffer.left(lineEnd).split(';').value(0).trimmed().toLongLong(&ok, 16);
            if (!ok || size < 0 || size > kMaxAnswer) {
                *error = "a damaged chunked answer";
                return false;
            }
            while (buffer.size() < lineEnd + 2 + size + 2) {
                if (!fill(*m_socket, buffer, deadline, error))
                    return false;
            }
            response->body += buffer.mid(lineEnd + 2, size);
            buffer.remove(0, lineEnd + 2 + size + 2);
            if (size == 0)
                break; // no trailers are sent by etcd's gateway
        }
    } else if (length >= 0) {
        while (buffer.size() < length) {
            if (!fill(*m_socket, buffer, deadline, error))
                return false;
        }
        response->body = buffer.left(length);
    } else {
        *error = "an answer of unknown length";
        return false;
    }
    if (close)
        drop();
    return true;
}

} // namespace leasehold::etcd

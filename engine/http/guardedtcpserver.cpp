#include "guardedtcpserver.h"

#include <QElapsedTimer>
#include <QSocketNotifier>
#include <QTcpSocket>
#include <QTimer>

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

namespace leasehold {

namespace {

void refuse(QTcpSocket *socket, const QByteArray &status, const QByteArray &json)
{
    socket->write("HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
                  QByteArray::number(json.size()) + "\r\nConnection: close\r\n\r\n" + json);
    socket->disconnectFromHost();
}

constexpr qint64 kNever = std::numeric_limits<qint64>::max();

} // namespace

// Follows one connection's byte stream (headers, then Content-Length bytes of body, then the
// next request) without consuming it, so an oversized body is refused before QHttpServer
// buffers it, and knows at every moment whether the connection is idle, mid-request or waiting
// for its answer.
class ConnectionGuard : public QObject
{
public:
    ConnectionGuard(QTcpSocket *socket, GuardedTcpServer *server)
        : QObject(socket)
        , m_server(server)
        , m_socket(socket)
        , m_limits(server->limits())
    {
        m_clock.start();
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, [this] { onTimer(); });
        connect(socket, &QTcpSocket::bytesWritten, this, [this] { m_lastActivity = now(); });
        // Connected before QHttpServer's own slot, so each batch is seen before it is read.
        connect(socket, &QTcpSocket::readyRead, this,
                [this] { inspect(m_socket->peek(m_socket->bytesAvailable())); });
        armFor(m_limits.parkAfterMs);
    }
    ~ConnectionGuard() override
    {
        if (m_server)
            m_server->forget(this);
    }

    QTcpSocket *socket() const { return m_socket; }
    bool idle() const { return m_inFlight == 0 && m_header.isEmpty() && m_bodyLeft == 0; }

    // An answer was written: one request fewer under way.
    void finished()
    {
        m_inFlight = std::max(0, m_inFlight - 1);
        m_lastActivity = now();
        if (idle()) {
            m_server->becameIdle(this);
            if (!m_timer.isActive())
                armFor(m_lastActivity + m_limits.parkAfterMs);
        }
    }

    GuardedTcpServer *m_server;
    std::list<ConnectionGuard *>::iterator m_idleAt;
    bool m_listed = false; // in the server's idle list
    bool m_counted = true; // in the server's open count

private:
    qint64 now() const { return m_clock.elapsed(); }

    void armFor(qint64 deadline)
    {
        m_armedFor = deadline;
        m_timer.start(int(std::clamp<qint64>(deadline - now(), 0, 24LL * 3600 * 1000)));
    }

    // The timer is armed for the nearest deadline the connection's state had when it was set;
    // when it fires, the state decides: close, or wait out the remainder.
    void onTimer()
    {
        const qint64 t = now();
        m_armedFor = kNever;
        if (!m_header.isEmpty()) {
            if (t >= m_headStart + m_limits.headTimeoutMs)
                return timeOut("the request head did not arrive in time");
            return armFor(m_headStart + m_limits.headTimeoutMs);
        }
        if (m_bodyLeft > 0) {
            if (t >= m_lastRead + m_limits.bodyReadTimeoutMs)
                return timeOut("the request body stalled");
            return armFor(m_lastRead + m_limits.bodyReadTimeoutMs);
        }
        if (m_inFlight > 0)
            return; // waiting for our answer (a parked wait): never idle; finished() re-arms
        if (t >= m_lastActivity + m_limits.idleTimeoutMs)
            return m_socket->abort();
        if (t >= m_lastActivity + m_limits.parkAfterMs && m_socket->bytesToWrite() == 0 &&
            m_socket->bytesAvailable() == 0)
            return m_server->park(this); // destroys this guard with its socket
        armFor(m_lastActivity + (t < m_lastActivity + m_limits.parkAfterMs
                                     ? m_limits.parkAfterMs
                                     : m_limits.idleTimeoutMs));
    }

    void timeOut(const char *why)
    {
        ++m_server->m_timedOut;
        refuse(m_socket, "408 Request Timeout",
               QByteArray(R"({"ok":false,"reason":"request_timeout","error":")") + why +
                   R"( and the connection was closed"})");
    }

    void inspect(const QByteArray &batch)
    {
        const qint64 t = now();
        m_lastActivity = m_lastRead = t;
        if (idle())
            m_server->becameBusy(this);
        qsizetype at = 0;
        while (at < batch.size()) {
            if (m_bodyLeft > 0) {
                const qint64 take = std::min<qint64>(m_bodyLeft, batch.size() - at);
                m_bodyLeft -= take;
                at += take;
                if (m_bodyLeft == 0)
                    ++m_inFlight;
                continue;
            }
            const qsizetype before = m_header.size();
            if (before == 0)
                m_headStart = t;
            m_header += batch.mid(at, kMaxHeaderBytes - before);
            const qsizetype end = m_header.indexOf("\r\n\r\n");
            if (end < 0) {
                if (m_header.size() >= kMaxHeaderBytes)
                    return refuse(
                        m_socket, "431 Request Header Fields Too Large",
                        R"({"ok":false,"reason":"invalid_request","error":"headers are too large"})");
                break;
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
            if (m_bodyLeft == 0)
                ++m_inFlight;
        }
        // Mid-request: the head or body deadline applies, re-armed only when it is nearer than
        // what the timer waits for (a request that arrives whole never re-arms it).
        qint64 deadline = kNever;
        if (!m_header.isEmpty())
            deadline = m_headStart + m_limits.headTimeoutMs;
        else if (m_bodyLeft > 0)
            deadline = t + m_limits.bodyReadTimeoutMs;
        if (deadline != kNever && (!m_timer.isActive() || m_armedFor > deadline))
            armFor(deadline);
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
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_armedFor = kNever;
    qint64 m_lastActivity = 0; // last byte in or out
    qint64 m_lastRead = 0;     // last byte in
    qint64 m_headStart = 0;    // first byte of the current request head
    QByteArray m_header;       // the current request's header block, as far as seen
    qint64 m_bodyLeft = 0;
    int m_inFlight = 0; // requests seen whole and not yet answered
};

GuardedTcpServer::GuardedTcpServer(Limits limits, QObject *parent)
    : QTcpServer(parent)
    , m_limits(limits)
{
    m_clock.start();
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    if (m_epoll >= 0) {
        m_parkedReady = new QSocketNotifier(m_epoll, QSocketNotifier::Read, this);
        connect(m_parkedReady, &QSocketNotifier::activated, this, [this] { unparkReady(); });
    }
    m_sweep = new QTimer(this);
    m_sweep->setInterval(1000);
    connect(m_sweep, &QTimer::timeout, this, [this] { sweepParked(); });
}

GuardedTcpServer::~GuardedTcpServer()
{
    // The sockets (and their guards) are destroyed after this object's own part is gone.
    for (ConnectionGuard *guard : std::as_const(m_guards))
        guard->m_server = nullptr;
    for (const Parked &p : m_parked)
        ::close(p.fd);
    if (m_epoll >= 0)
        ::close(m_epoll);
}

void GuardedTcpServer::incomingConnection(qintptr handle)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(handle)) {
        delete socket;
        return;
    }
    if (openConnections() >= m_limits.maxConnections && !evictOne()) {
        ++m_rejected;
        refuse(socket, "503 Service Unavailable",
               R"({"ok":false,"reason":"busy","error":"too many open connections, all busy"})");
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        return;
    }
    admit(socket);
}

void GuardedTcpServer::admit(QTcpSocket *socket)
{
    ++m_open;
    auto *guard = new ConnectionGuard(socket, this);
    m_guards.insert(socket, guard);
    becameIdle(guard);
    addPendingConnection(socket);
}

bool GuardedTcpServer::evictOne()
{
    // Full: the connection idle longest makes room (its client reconnects when it needs to; an
    // agent with a request under way is never the one closed). Parked ones are idle longest.
    if (!m_parked.empty()) {
        ::close(unpark(m_parked.begin()));
        ++m_evicted;
        return true;
    }
    if (m_idle.empty())
        return false;
    ConnectionGuard *oldest = m_idle.front();
    becameBusy(oldest);
    oldest->m_counted = false;
    --m_open;
    ++m_evicted;
    oldest->socket()->abort();
    return true;
}

void GuardedTcpServer::park(ConnectionGuard *guard)
{
    QTcpSocket *socket = guard->socket();
    const int fd = int(socket->socketDescriptor());
    const int kept = m_epoll >= 0 && fd >= 0 ? ::fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (kept < 0)
        return; // stays in the event loop; the idle timeout still applies
    // Qt's descriptor number now names a throwaway socket, so whatever closing the QTcpSocket
    // does to it cannot touch the connection, which lives on in `kept`.
    const int placeholder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (placeholder < 0 || ::dup3(placeholder, fd, O_CLOEXEC) < 0) {
        if (placeholder >= 0)
            ::close(placeholder);
        ::close(kept);
        return;
    }
    ::close(placeholder);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = kept;
    if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, kept, &ev) != 0) {
        ::close(kept);
        socket->abort();
        return;
    }
    m_parkedByFd[kept] = m_parked.insert(m_parked.end(), {kept, m_clock.elapsed()});
    becameBusy(guard);
    guard->m_counted = false;
    --m_open;
    socket->abort(); // QHttpServer lets go of it; the guard goes with it
    if (!m_sweep->isActive())
        m_sweep->start();
}

void GuardedTcpServer::unparkReady()
{
    epoll_event events[64];
    const int n = epoll_wait(m_epoll, events, 64, 0);
    for (int i = 0; i < n; ++i) {
        auto it = m_parkedByFd.find(events[i].data.fd);
        if (it == m_parkedByFd.end())
            continue;
        const int fd = unpark(it->second);
        // Its next request (or its goodbye) arrived: back into the event loop as a connection.
        auto *socket = new QTcpSocket(this);
        if (!socket->setSocketDescriptor(fd)) {
            ::close(fd);
            delete socket;
            continue;
        }
        admit(socket);
    }
    if (n > 0)
        emit newConnection();
}

int GuardedTcpServer::unpark(std::list<Parked>::iterator parked)
{
    const int fd = parked->fd;
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    m_parkedByFd.erase(fd);
    m_parked.erase(parked);
    return fd;
}

void GuardedTcpServer::sweepParked()
{
    const qint64 now = m_clock.elapsed();
    const qint64 limit = m_limits.idleTimeoutMs - m_limits.parkAfterMs;
    while (!m_parked.empty() && now - m_parked.front().since >= limit)
        ::close(unpark(m_parked.begin()));
    if (m_parked.empty())
        m_sweep->stop();
}

void GuardedTcpServer::requestFinished(QTcpSocket *socket)
{
    if (ConnectionGuard *guard = m_guards.value(socket))
        guard->finished();
}

void GuardedTcpServer::becameIdle(ConnectionGuard *guard)
{
    if (guard->m_listed)
        m_idle.erase(guard->m_idleAt);
    guard->m_idleAt = m_idle.insert(m_idle.end(), guard);
    guard->m_listed = true;
}

void GuardedTcpServer::becameBusy(ConnectionGuard *guard)
{
    if (!guard->m_listed)
        return;
    m_idle.erase(guard->m_idleAt);
    guard->m_listed = false;
}

void GuardedTcpServer::forget(ConnectionGuard *guard)
{
    becameBusy(guard);
    m_guards.remove(guard->socket());
    if (guard->m_counted)
        --m_open;
}

int raiseFileLimit(int *raisedFrom)
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return 1024;
    if (raisedFrom)
        *raisedFrom = int(std::min<rlim_t>(limit.rlim_cur, std::numeric_limits<int>::max()));
    if (limit.rlim_cur < limit.rlim_max) {
        rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            limit = raised;
    }
    return int(std::min<rlim_t>(limit.rlim_cur, std::numeric_limits<int>::max()));
}

int defaultMaxConnections(int fileLimit)
{
    // Each connection is one descriptor; keep 256 for everything else, and at least 64.
    return std::max(64, fileLimit - 256);
}

} // namespace leasehold

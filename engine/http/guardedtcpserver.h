#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QTcpServer>

#include <list>
#include <unordered_map>

class QSocketNotifier;
class QTcpSocket;
class QTimer;

namespace leasehold {

class ConnectionGuard;

// The listening socket in front of QHttpServer, closing the gaps QtHttpServer 6.4 leaves open.
// It follows each connection's byte stream and
// - answers 413 to a request whose declared Content-Length exceeds the body cap, and 431 to a
//   header block over 16 KiB, before either is buffered;
// - answers 408 and closes a connection whose request head has not arrived whole within
//   `headTimeoutMs` of its first byte, or whose body stalls longer than `bodyReadTimeoutMs`
//   between reads, so half-sent requests cannot hold slots;
// - closes connections idle (no request under way, none unanswered) for `idleTimeoutMs`;
// - caps open connections; at the cap a newcomer is admitted by closing the connection that
//   has been idle longest. A connection with a request unanswered (a parked wait) is never idle.
//   Only when every connection is busy is the newcomer refused (503 busy).
// - parks connections idle for `parkAfterMs`: their descriptor leaves Qt's event loop (whose
//   cost grows with every descriptor it polls) for one epoll set of its own, and comes back as
//   a fresh connection when its next request arrives. Ten thousand idle agents then cost the
//   engine thread nothing per request.
class GuardedTcpServer : public QTcpServer
{
    Q_OBJECT

public:
    struct Limits
    {
        int maxConnections = 512;
        int idleTimeoutMs = 120'000;
        int headTimeoutMs = 10'000;
        int bodyReadTimeoutMs = 10'000;
        int parkAfterMs = 2'000;
        qint64 maxBodyBytes = 1 << 20;
    };

    explicit GuardedTcpServer(Limits limits, QObject *parent = nullptr);
    ~GuardedTcpServer() override;

    // The transport wrote the answer to one request on `socket`.
    void requestFinished(QTcpSocket *socket);

    int openConnections() const { return m_open + int(m_parked.size()); }
    int parkedConnections() const { return int(m_parked.size()); }
    quint64 rejectedConnections() const { return m_rejected; }
    quint64 evictedConnections() const { return m_evicted; }
    quint64 timedOutRequests() const { return m_timedOut; }
    const Limits &limits() const { return m_limits; }

protected:
    void incomingConnection(qintptr handle) override;

private:
    friend class ConnectionGuard;
    // Takes an open socket into the guard's care and hands it to QHttpServer.
    void admit(QTcpSocket *socket);
    // Makes room at the cap by closing the connection idle longest; false when none is idle.
    bool evictOne();
    void park(ConnectionGuard *guard);
    void unparkReady();
    void sweepParked();
    struct Parked
    {
        int fd;
        qint64 since; // ms on m_clock
    };
    // Takes a parked connection out of the epoll set and the lists; returns its descriptor,
    // which the caller now owns (to close, or to serve again).
    int unpark(std::list<Parked>::iterator parked);
    // Called by the guards as their connection changes between idle and busy.
    void becameIdle(ConnectionGuard *guard);
    void becameBusy(ConnectionGuard *guard);
    void forget(ConnectionGuard *guard);

    Limits m_limits;
    int m_open = 0;
    quint64 m_rejected = 0;
    quint64 m_evicted = 0;
    quint64 m_timedOut = 0;
    std::list<ConnectionGuard *> m_idle; // longest idle first
    QHash<QTcpSocket *, ConnectionGuard *> m_guards;
    int m_epoll = -1;
    QSocketNotifier *m_parkedReady = nullptr;
    std::list<Parked> m_parked; // parked longest ago first
    std::unordered_map<int, std::list<Parked>::iterator> m_parkedByFd;
    QTimer *m_sweep = nullptr;
    QElapsedTimer m_clock;
};

// The number of file descriptors this process may open, after raising its soft limit to the
// hard one; `raisedFrom` is set to the soft limit found. Logged by the caller.
int raiseFileLimit(int *raisedFrom = nullptr);

// The default connection cap for a process that may open `fileLimit` descriptors: room is kept
// for the database, logs, the workspace tools and the listening socket.
int defaultMaxConnections(int fileLimit);

} // namespace leasehold

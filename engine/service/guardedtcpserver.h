#pragma once

#include <QTcpServer>

namespace leasehold {

// The listening socket in front of QHttpServer, closing the gaps QtHttpServer 6.4 leaves open:
// it caps open connections, closes connections idle for too long, and answers 413 to a request
// whose declared Content-Length exceeds the body cap before the body is buffered.
class GuardedTcpServer : public QTcpServer
{
    Q_OBJECT

public:
    struct Limits
    {
        int maxConnections = 512;
        int idleTimeoutMs = 120'000;
        qint64 maxBodyBytes = 1 << 20;
    };

    explicit GuardedTcpServer(Limits limits, QObject *parent = nullptr);
    int openConnections() const { return m_open; }
    quint64 rejectedConnections() const { return m_rejected; }

protected:
    void incomingConnection(qintptr handle) override;

private:
    Limits m_limits;
    int m_open = 0;
    quint64 m_rejected = 0;
};

} // namespace leasehold

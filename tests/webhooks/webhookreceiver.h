#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

#include <vector>

// A webhook receiver for tests: a small HTTP/1.1 server on 127.0.0.1 (port 0) that records
// every POST it is sent (headers, body) and answers as told: 200, an error status, or never
// (a receiver that hangs). It checks X-Leasehold-Signature the way docs/webhooks.md tells a
// receiver to, and counts deliveries once per id (as a receiver deduplicating by id does).
//
// Thread: the test's main thread.
class WebhookReceiver : public QObject
{
    Q_OBJECT

public:
    enum class Mode { Answer, Hang };
    struct Request
    {
        QByteArray path;
        QHash<QByteArray, QByteArray> headers; // names in lower case
        QByteArray body;
    };

    explicit WebhookReceiver(QObject *parent = nullptr);
    ~WebhookReceiver() override;
    bool listen();
    QString url() const;

    void setMode(Mode mode) { m_mode = mode; }
    void setStatus(int status) { m_status = status; }

    const std::vector<Request> &requests() const { return m_requests; }
    // The delivery ids seen, once each, in the order they first arrived.
    QList<QByteArray> uniqueIds() const;
    // Whether `request` carries a valid signature for `secret` (timestamp within `toleranceS`).
    static bool signatureValid(const Request &request, const QByteArray &secret,
                               qint64 toleranceS = 300);

private:
    void readFrom(QTcpSocket *socket);

    QTcpServer m_server;
    Mode m_mode = Mode::Answer;
    int m_status = 200;
    std::vector<Request> m_requests;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

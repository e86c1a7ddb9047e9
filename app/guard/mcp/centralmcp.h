#pragma once

#include "serviceclient.h"

#include <QNetworkAccessManager>
#include <QObject>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>

// The guard's MCP session with the central Leasehold (Streamable HTTP at <url>/mcp, under the
// agent's key): where its lock_acquire, lock_release and lock_status calls go, so that waits,
// FIFO order, deadlock refusals and their wording are the service's own. The session is opened
// on first use and opened again when the service no longer knows it (it restarted). A call
// that cannot be answered is answered with `ok = false` and the reason, never left hanging.
class CentralMcp : public QObject
{
    Q_OBJECT

public:
    struct Answer
    {
        bool ok = false;
        nlohmann::json result; // the JSON-RPC result when ok
        QString problem;       // why not
    };
    using Done = std::function<void(Answer)>;

    explicit CentralMcp(ServiceClient::Settings settings, QObject *parent = nullptr);

    // Sends `method` with `params`; returns the call's id, for cancel().
    qint64 call(const QString &method, nlohmann::json params, Done done);
    // notifications/cancelled for call `id` (a parked lock_acquire gives up and takes nothing).
    void cancel(qint64 id, const QString &reason);

private:
    struct Pending
    {
        QString method;
        nlohmann::json params;
        Done done;
        bool retried = false;
    };
    void ensureSession(std::function<void(QString problem)> ready);
    void post(const nlohmann::json &message,
              std::function<void(ServiceClient::Reply, QByteArray)> done, int timeoutMs);
    void send(qint64 id);

    ServiceClient::Settings m_settings;
    QNetworkAccessManager m_net;
    QByteArray m_session;
    bool m_opening = false;
    std::vector<std::function<void(QString)>> m_waitingForSession;
    std::map<qint64, Pending> m_pending;
    qint64 m_nextId = 1;
};

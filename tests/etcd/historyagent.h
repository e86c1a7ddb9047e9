#pragma once

#include "historychecker.h"

#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QObject>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

class QNetworkReply;

// One simulated agent for the history: acquires one of a few resources (TTL 5 s), holds it a
// moment, renews it, releases, and again; follows the leader through redirects, standbys that
// know no leader yet and instances that died, and records every acknowledged grant with the
// window it may rely on (to the TTL counted from the acquire, or from an acknowledged renewal,
// and no further than the release). An acquire whose answer never came may have been granted:
// it is not recorded, and released like any other; a renewal whose answer never came extends
// nothing.
class HistoryAgent : public QObject
{
    Q_OBJECT

public:
    HistoryAgent(QNetworkAccessManager &net, std::string did,
                 std::function<QStringList()> instances, const QElapsedTimer &clock,
                 std::vector<GrantRecord> &history)
        : m_net(net)
        , m_did(std::move(did))
        , m_instances(std::move(instances))
        , m_clock(clock)
        , m_history(history)
    {}
    void start() { acquire(); }
    void stop() { m_stopping = true; }
    bool idle() const { return m_idle; }
    int renewals() const { return m_renewals; } // acknowledged

public:
    static constexpr qint64 kTtlMs = 5'000; // each grant's TTL

private:
    void acquire();
    void renew();
    void release();
    // Sends the request of the current phase again (to the leader, after a redirect).
    void again();
    void post(const nlohmann::json &body, const char *route);
    void answered(QNetworkReply *reply, qint64 sent);

    QNetworkAccessManager &m_net;
    std::string m_did;
    std::function<QStringList()> m_instances;
    const QElapsedTimer &m_clock;
    std::vector<GrantRecord> &m_history;
    QString m_url;
    int m_next = 0;
    enum class Phase { Acquiring, Renewing, Releasing };
    Phase m_phase = Phase::Acquiring;
    std::string m_leaseId;
    int m_renewals = 0;
    bool m_stopping = false;
    bool m_idle = false;
    std::string m_resource;
    std::optional<GrantRecord> m_grant;
    qint64 m_releaseSent = -1;
};

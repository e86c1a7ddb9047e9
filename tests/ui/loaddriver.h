#pragma once

// Synthetic agents for the responsiveness check: `rate` requests a second over HTTP, each agent
// alternating acquire and release of its own path, with at most kMaxInFlight outstanding (so
// a slow server slows the driver instead of growing a queue). Every answer waits for its group
// commit, so the driver spreads its requests over several connection pools (one pool keeps six
// connections to a host) to let many answers share one fsync. Runs on its own thread.

#include <QElapsedTimer>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>

#include <atomic>

class LoadDriver : public QObject
{
    Q_OBJECT

public:
    LoadDriver(QString url, QList<QPair<QString, QByteArray>> agents, int rate)
        : m_url(std::move(url))
        , m_agents(std::move(agents))
        , m_rate(rate)
    {
        m_holding.resize(m_agents.size());
    }

    void start()
    {
        for (int i = 0; i < kPools; ++i)
            m_nets.push_back(new QNetworkAccessManager(this));
        m_timer = new QTimer(this);
        m_timer->setTimerType(Qt::PreciseTimer);
        m_timer->setInterval(10);
        connect(m_timer, &QTimer::timeout, this, &LoadDriver::tick);
        m_clock.start();
        m_timer->start();
    }

    std::atomic<quint64> completed{0};
    std::atomic<quint64> failed{0};
    std::atomic<qint64> elapsedMs{0};

private:
    void tick()
    {
        elapsedMs = m_clock.elapsed();
        const quint64 due = quint64(m_clock.elapsed()) * quint64(m_rate) / 1000;
        while (m_sent < due && m_inFlight < kMaxInFlight) {
            send(int(m_sent % quint64(m_agents.size())));
            ++m_sent;
        }
        m_sent = std::max(m_sent, due); // what could not be sent in time is not made up later
    }

    void send(int agent)
    {
        if (m_busy.contains(agent))
            return;
        const bool release = m_holding[agent];
        QNetworkRequest request(
            QUrl(m_url + (release ? QStringLiteral("/api/v1/acp/coordination/release")
                                  : QStringLiteral("/api/v1/acp/coordination/lease"))));
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          QByteArrayLiteral("application/json"));
        request.setRawHeader("Authorization", "Bearer " + m_agents[agent].second);
        const QJsonObject body{{"resource", QStringLiteral("fs:load/%1").arg(agent)},
                               {"ttlMs", 30'000}};
        ++m_inFlight;
        m_busy.insert(agent, true);
        QNetworkReply *r = m_nets[agent % kPools]->post(
            request, QJsonDocument(body).toJson(QJsonDocument::Compact));
        connect(r, &QNetworkReply::finished, this, [this, r, agent, release] {
            --m_inFlight;
            m_busy.remove(agent);
            const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (status == 200) {
                m_holding[agent] = !release;
                ++completed;
            } else {
                ++failed;
            }
            r->deleteLater();
        });
    }

    static constexpr int kMaxInFlight = 48;
    static constexpr int kPools = 4;
    QString m_url;
    QList<QPair<QString, QByteArray>> m_agents;
    QList<bool> m_holding;
    QHash<int, bool> m_busy;
    int m_rate;
    int m_inFlight = 0;
    quint64 m_sent = 0;
    QList<QNetworkAccessManager *> m_nets;
    QTimer *m_timer = nullptr;
    QElapsedTimer m_clock;
};

#include "historyagent.h"

#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QTimer>
#include <QUrl>

using nlohmann::json;

namespace {

const QString kBase = QStringLiteral("/api/v1/acp/coordination");

} // namespace

void HistoryAgent::acquire()
{
    if (m_stopping) {
        m_idle = true;
        return;
    }
    m_phase = Phase::Acquiring;
    m_resource = "lock:h/" + std::to_string(QRandomGenerator::global()->bounded(3));
    post({{"actorDid", m_did}, {"resources", {m_resource}}, {"ttlMs", kTtlMs}}, "/lease");
}

void HistoryAgent::renew()
{
    m_phase = Phase::Renewing;
    post({{"actorDid", m_did}, {"resource", m_resource}, {"leaseId", m_leaseId}, {"ttlMs", kTtlMs}},
         "/renew");
}

void HistoryAgent::release()
{
    m_phase = Phase::Releasing;
    post({{"actorDid", m_did}}, "/release");
}

void HistoryAgent::again()
{
    switch (m_phase) {
    case Phase::Acquiring:
        return acquire();
    case Phase::Renewing:
        return renew();
    case Phase::Releasing:
        return release();
    }
}

void HistoryAgent::post(const json &body, const char *route)
{
    if (m_url.isEmpty())
        m_url = m_instances().value(m_next++ % 2);
    QNetworkRequest request(QUrl(m_url + kBase + route));
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(3'000);
    const qint64 sent = m_clock.elapsed();
    if (m_phase == Phase::Releasing && m_grant && m_releaseSent < 0)
        m_releaseSent = sent; // the holder stops relying on it from here
    QNetworkReply *reply = m_net.post(request, QByteArray::fromStdString(body.dump()));
    connect(reply, &QNetworkReply::finished, this, [this, reply, sent] {
        reply->deleteLater();
        answered(reply, sent);
    });
}

void HistoryAgent::answered(QNetworkReply *reply, qint64 sent)
{
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const json body = json::parse(reply->readAll().toStdString(), nullptr, false);
    if (status == 307) { // the leader is elsewhere: ask it, at once
        const QUrl leader(QString::fromUtf8(reply->rawHeader("Location")));
        m_url = leader.adjusted(QUrl::RemovePath | QUrl::RemoveQuery).toString();
        return again();
    }
    if (status == 0 || status == 503) { // dead, or no leader known yet
        m_url.clear();
        // An acquire that may have been granted is released before anything else; a renewal
        // that may not have been made is given up (the grant's window stands as it was).
        const bool unknown = m_phase == Phase::Acquiring && status == 0;
        const bool acquireAgain = m_phase == Phase::Acquiring && !unknown;
        QTimer::singleShot(100, this, [this, acquireAgain] {
            if (acquireAgain)
                acquire();
            else
                release();
        });
        return;
    }
    if (m_phase == Phase::Acquiring) {
        if (status == 200) {
            m_grant = GrantRecord{
                m_resource,        m_did,        body["lease"]["token"].get<std::uint64_t>(), sent,
                m_clock.elapsed(), sent + kTtlMs};
            m_leaseId = body["lease"]["leaseId"].get<std::string>();
            m_releaseSent = -1;
            QTimer::singleShot(20, this, &HistoryAgent::renew);
        } else { // refused: held by another
            QTimer::singleShot(20, this, &HistoryAgent::acquire);
        }
        return;
    }
    if (m_phase == Phase::Renewing) {
        if (status == 200 && m_grant) { // relied on for a TTL from when the renewal was sent
            m_grant->untilMs = std::max(m_grant->untilMs, sent + kTtlMs);
            ++m_renewals;
        }
        QTimer::singleShot(20, this, &HistoryAgent::release);
        return;
    }
    if (m_grant) {
        m_grant->untilMs = std::min(m_grant->untilMs, m_releaseSent);
        m_history.push_back(*m_grant);
        m_grant.reset();
    }
    QTimer::singleShot(10, this, &HistoryAgent::acquire);
}

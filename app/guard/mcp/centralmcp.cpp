#include "centralmcp.h"

#include <QNetworkReply>

using nlohmann::json;

namespace {

constexpr int kCallTimeoutMs = 120'000; // a lock_acquire may park for up to 90 s
constexpr const char *kVersion = "2025-06-18";

} // namespace

CentralMcp::CentralMcp(ServiceClient::Settings settings, QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
{}

void CentralMcp::post(const json &message,
                      std::function<void(ServiceClient::Reply, QByteArray)> done, int timeoutMs)
{
    ServiceClient::Settings s = m_settings;
    s.timeoutMs = timeoutMs;
    QNetworkRequest request = ServiceClient::request(s, QStringLiteral("/mcp"));
    request.setRawHeader("Accept", "application/json, text/event-stream");
    request.setRawHeader("MCP-Protocol-Version", kVersion);
    if (!m_session.isEmpty())
        request.setRawHeader("Mcp-Session-Id", m_session);
    QNetworkReply *reply = m_net.post(request, QByteArray::fromStdString(message.dump()));
    connect(reply, &QNetworkReply::finished, this, [reply, done = std::move(done)] {
        ServiceClient::Reply r = ServiceClient::read(reply);
        const QByteArray session = reply->rawHeader("Mcp-Session-Id");
        reply->deleteLater();
        done(std::move(r), session);
    });
}

void CentralMcp::ensureSession(std::function<void(QString)> ready)
{
    if (!m_session.isEmpty())
        return ready({});
    m_waitingForSession.push_back(std::move(ready));
    if (m_opening)
        return;
    m_opening = true;
    const json init = {{"jsonrpc", "2.0"},
                       {"id", 0},
                       {"method", "initialize"},
                       {"params",
                        {{"protocolVersion", kVersion},
                         {"capabilities", json::object()},
                         {"clientInfo", {{"name", "leasehold-guard"}, {"version", "1"}}}}}};
    post(
        init,
        [this](ServiceClient::Reply r, QByteArray session) {
            m_opening = false;
            QString problem;
            if (r.status != 200 || session.isEmpty())
                problem = QStringLiteral("Leasehold at %1 did not open an MCP session: %2")
                              .arg(m_settings.base.toString(), r.explanation());
            else
                m_session = session;
            if (problem.isEmpty())
                post(
                    {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                    [](ServiceClient::Reply, QByteArray) {}, 10'000);
            auto waiting = std::move(m_waitingForSession);
            m_waitingForSession.clear();
            for (auto &w : waiting)
                w(problem);
        },
        m_settings.timeoutMs);
}

qint64 CentralMcp::call(const QString &method, json params, Done done)
{
    const qint64 id = m_nextId++;
    m_pending[id] = {method, std::move(params), std::move(done)};
    send(id);
    return id;
}

void CentralMcp::send(qint64 id)
{
    ensureSession([this, id](QString problem) {
        auto it = m_pending.find(id);
        if (it == m_pending.end())
            return;
        if (!problem.isEmpty()) {
            Done done = std::move(it->second.done);
            m_pending.erase(it);
            return done({false, {}, problem});
        }
        const json message = {{"jsonrpc", "2.0"},
                              {"id", id},
                              {"method", it->second.method.toStdString()},
                              {"params", it->second.params}};
        post(
            message,
            [this, id](ServiceClient::Reply r, QByteArray) {
                auto at = m_pending.find(id);
                if (at == m_pending.end())
                    return;
                if (r.status == 404 && !at->second.retried) {
                    // The service no longer knows the session (it restarted): open another, once.
                    at->second.retried = true;
                    m_session.clear();
                    return send(id);
                }
                Done done = std::move(at->second.done);
                m_pending.erase(at);
                if (r.status == 200 && r.body.is_object() && r.body.contains("result"))
                    return done({true, r.body["result"], {}});
                QString why = r.explanation();
                if (r.body.is_object() && r.body.contains("error") && r.body["error"].is_object())
                    why = QString::fromStdString(r.body["error"].value("message", std::string()));
                done({false,
                      {},
                      QStringLiteral("Leasehold at %1 did not answer: %2")
                          .arg(m_settings.base.toString(), why)});
            },
            kCallTimeoutMs);
    });
}

void CentralMcp::cancel(qint64 id, const QString &reason)
{
    if (!m_pending.count(id) || m_session.isEmpty())
        return;
    post(
        {{"jsonrpc", "2.0"},
         {"method", "notifications/cancelled"},
         {"params", {{"requestId", id}, {"reason", reason.toStdString()}}}},
        [](ServiceClient::Reply, QByteArray) {}, 10'000);
}

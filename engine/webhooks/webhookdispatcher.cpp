#include "webhookdispatcher.h"

#include "webhookpayload.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRandomGenerator>
#include <QUrl>

#include <algorithm>
#include <limits>

Q_LOGGING_CATEGORY(lcWebhooks, "leasehold.webhooks", QtInfoMsg)

namespace leasehold {

using nlohmann::json;

namespace {

std::int64_t nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

// Where an endpoint sends, for the log: its host only (a URL's path may itself be a secret).
QString hostOf(const std::string &url)
{
    return QUrl(QString::fromStdString(url)).host();
}

json deliveryJson(const WebhookDelivery &d)
{
    return {{"id", d.id},
            {"event", d.event},
            {"state", deliveryStateName(d.state)},
            {"attempts", d.attempts},
            {"createdAt", d.createdAt},
            {"nextAt", d.state == WebhookDelivery::State::Pending ? json(d.nextAt) : json()},
            {"doneAt", d.doneAt == 0 ? json() : json(d.doneAt)},
            {"lastStatus", d.lastStatus == 0 ? json() : json(d.lastStatus)},
            {"lastError", d.lastError.empty() ? json() : json(d.lastError)}};
}

} // namespace

WebhookDispatcher::WebhookDispatcher(WebhookOptions options, std::atomic<int> *endpointCount,
                                     QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_endpointCount(endpointCount)
    , m_timer(this) // a child, so it moves to the delivery thread with the dispatcher
    , m_troubleTimer(this)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &WebhookDispatcher::pump);
    m_troubleTimer.setInterval(30'000);
    connect(&m_troubleTimer, &QTimer::timeout, this, &WebhookDispatcher::reportTroubles);
}

WebhookDispatcher::~WebhookDispatcher() = default;

bool WebhookDispatcher::open(QString *error)
{
    if (!m_outbox.open(m_options.path, error))
        return false;
    m_net = new QNetworkAccessManager(this);
    m_net->setAutoDeleteReplies(true);
    std::vector<WebhookEndpoint> stored = m_outbox.endpoints();
    for (const WebhookEndpoint &e : stored) {
        const bool named = std::any_of(m_options.configured.begin(), m_options.configured.end(),
                                       [&](const WebhookEndpoint &c) { return c.id == e.id; });
        if (e.configured && !named)
            m_outbox.removeEndpoint(e.id); // no longer in the config file
        else if (!e.configured)
            m_endpoints[e.id].config = e;
    }
    for (WebhookEndpoint e : m_options.configured) {
        e.configured = true;
        if (e.createdAt == 0)
            e.createdAt = nowMs();
        m_outbox.putEndpoint(e);
        m_endpoints[e.id].config = e;
    }
    m_outbox.prune(nowMs() - 7LL * 24 * 3600 * 1000);
    countEndpoints();
    m_troubleTimer.start();
    reportTroubles();
    pump();
    return true;
}

void WebhookDispatcher::setTroubleSink(std::function<void(std::vector<WebhookTrouble>)> sink)
{
    m_troubleSink = std::move(sink);
}

std::vector<WebhookTrouble> WebhookDispatcher::troubles() const
{
    std::vector<WebhookTrouble> out;
    const std::int64_t hourAgo = nowMs() - 3'600'000;
    for (const auto &[id, endpoint] : m_endpoints) {
        WebhookTrouble t;
        t.failedLastHour = m_outbox.tally(id, hourAgo).failedRecently;
        const std::optional<WebhookDelivery> head = m_outbox.head(id);
        t.retrying = head && head->attempts > 0;
        if (t.failedLastHour == 0 && !t.retrying)
            continue;
        t.id = id;
        t.host = hostOf(endpoint.config.url).toStdString();
        if (t.retrying) {
            t.lastError = head->lastError;
        } else {
            for (const WebhookDelivery &d : m_outbox.recent(id, 16))
                if (d.state == WebhookDelivery::State::Failed) {
                    t.lastError = d.lastError;
                    break;
                }
        }
        out.push_back(std::move(t));
    }
    return out;
}

void WebhookDispatcher::reportTroubles()
{
    if (m_troubleSink)
        m_troubleSink(troubles());
}

void WebhookDispatcher::countEndpoints()
{
    m_endpointCount->store(int(m_endpoints.size()));
}

void WebhookDispatcher::publish(const std::vector<WebhookEvent> &events)
{
    std::vector<WebhookDelivery> deliveries;
    const std::int64_t now = nowMs();
    for (const WebhookEvent &event : events) {
        for (const auto &[id, endpoint] : m_endpoints) {
            if (!endpoint.config.wants(event.name))
                continue;
            WebhookDelivery d;
            d.id = newDeliveryId();
            d.endpoint = id;
            d.event = event.name;
            d.body = webhookBody(event, d.id, endpoint.config.format);
            d.createdAt = now;
            d.nextAt = now;
            deliveries.push_back(std::move(d));
        }
    }
    if (!deliveries.empty())
        queue(std::move(deliveries));
}

void WebhookDispatcher::queue(std::vector<WebhookDelivery> deliveries)
{
    m_unsaved.insert(m_unsaved.end(), std::make_move_iterator(deliveries.begin()),
                     std::make_move_iterator(deliveries.end()));
    pump();
}

std::optional<WebhookEndpoint> WebhookDispatcher::add(WebhookEndpoint endpoint, std::string *error)
{
    if (std::string problem = checkWebhookEndpoint(endpoint); !problem.empty()) {
        *error = problem;
        return std::nullopt;
    }
    endpoint.id = newWebhookId();
    endpoint.configured = false;
    endpoint.createdAt = nowMs();
    if (!m_outbox.putEndpoint(endpoint)) {
        qCWarning(lcWebhooks) << "the outbox could not record webhook" << endpoint.id.c_str()
                              << "for" << hostOf(endpoint.url) << ":" << m_outbox.lastError();
        *error = "the outbox could not record the endpoint (see the log)";
        return std::nullopt;
    }
    m_endpoints[endpoint.id].config = endpoint;
    countEndpoints();
    qCInfo(lcWebhooks) << "webhook" << endpoint.id.c_str() << "added for" << hostOf(endpoint.url);
    return endpoint;
}

bool WebhookDispatcher::remove(const std::string &id, std::string *error, int *status)
{
    const auto it = m_endpoints.find(id);
    if (it == m_endpoints.end()) {
        *status = 404;
        *error = "no webhook " + id.substr(0, 64) + " (see ctl webhooks list)";
        return false;
    }
    if (it->second.config.configured) {
        *status = 409;
        *error = "webhook " + id + " is set in the config file; remove it there and restart";
        return false;
    }
    m_outbox.removeEndpoint(id);
    m_endpoints.erase(it);
    std::erase_if(m_unsaved, [&](const WebhookDelivery &d) { return d.endpoint == id; });
    countEndpoints();
    reportTroubles();
    qCInfo(lcWebhooks) << "webhook" << id.c_str() << "removed";
    return true;
}

std::optional<std::string> WebhookDispatcher::test(const std::string &id)
{
    const auto it = m_endpoints.find(id);
    if (it == m_endpoints.end())
        return std::nullopt;
    const std::int64_t now = nowMs();
    WebhookDelivery d;
    d.id = newDeliveryId();
    d.endpoint = id;
    d.event = "test";
    d.body = webhookBody(testEvent(id, now), d.id, it->second.config.format);
    d.createdAt = now;
    d.nextAt = now;
    const std::string deliveryId = d.id;
    queue({std::move(d)});
    return deliveryId;
}

json WebhookDispatcher::list(int recentPerEndpoint) const
{
    json out = json::array();
    const std::int64_t hourAgo = nowMs() - 3'600'000;
    for (const auto &[id, endpoint] : m_endpoints) {
        const WebhookEndpoint &e = endpoint.config;
        const WebhookTally t = m_outbox.tally(id, hourAgo);
        json recent = json::array();
        for (const WebhookDelivery &d : m_outbox.recent(id, recentPerEndpoint))
            recent.push_back(deliveryJson(d));
        const auto unsaved =
            std::count_if(m_unsaved.begin(), m_unsaved.end(),
                          [&id = id](const WebhookDelivery &d) { return d.endpoint == id; });
        out.push_back({{"id", id},
                       {"url", e.url},
                       {"events", e.events.empty() ? json::array({"all"}) : json(e.events)},
                       {"format", e.format},
                       {"secret", "set"},
                       {"configured", e.configured},
                       {"createdAt", e.createdAt},
                       {"pending", t.pending + unsaved},
                       {"delivered", t.delivered},
                       {"failed", t.failed},
                       {"failedLastHour", t.failedRecently},
                       {"recent", std::move(recent)}});
    }
    return out;
}

std::int64_t WebhookDispatcher::retryDelay(std::int64_t attempts) const
{
    // Doubles from firstRetryMs, capped at maxRetryMs; then "equal jitter": half of it fixed,
    // half random, so receivers coming back are not hit by every instance at once.
    double delay = double(m_options.firstRetryMs);
    for (std::int64_t i = 1; i < attempts && delay < double(m_options.maxRetryMs); ++i)
        delay *= 2;
    delay = std::min(delay, double(m_options.maxRetryMs));
    return std::int64_t(delay / 2 + QRandomGenerator::global()->bounded(delay / 2 + 1));
}

void WebhookDispatcher::pump()
{
    if (!m_unsaved.empty() && m_outbox.enqueue(m_unsaved))
        m_unsaved.clear();
    const std::int64_t now = nowMs();
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (auto &[id, endpoint] : m_endpoints) {
        if (endpoint.inFlight)
            continue;
        const std::optional<WebhookDelivery> head = m_outbox.head(id);
        if (!head)
            continue;
        if (head->nextAt > now) {
            next = std::min(next, head->nextAt);
            continue;
        }
        send(endpoint, *head);
    }
    if (!m_unsaved.empty())
        next = std::min(next, now + 1000); // the disk refused them: try again in a second
    if (next != std::numeric_limits<std::int64_t>::max())
        m_timer.start(int(std::clamp<std::int64_t>(next - now, 0, 3'600'000)));
}

void WebhookDispatcher::send(Endpoint &endpoint, const WebhookDelivery &delivery)
{
    const WebhookEndpoint &e = endpoint.config;
    QNetworkRequest request(QUrl(QString::fromStdString(e.url)));
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    request.setHeader(QNetworkRequest::UserAgentHeader, "leasehold-webhooks");
    request.setRawHeader("X-Leasehold-Delivery", QByteArray::fromStdString(delivery.id));
    request.setRawHeader("X-Leasehold-Event", QByteArray::fromStdString(delivery.event));
    request.setRawHeader(
        "X-Leasehold-Signature",
        webhookSignature(QByteArray::fromStdString(e.secret), nowMs() / 1000, delivery.body));
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    endpoint.inFlight = true;
    QNetworkReply *reply = m_net->post(request, delivery.body);
    // The whole attempt, not only a silence, is bounded: a receiver that trickles is cut too.
    QTimer::singleShot(m_options.timeoutMs, reply, [reply] { reply->abort(); });
    const std::string id = e.id;
    connect(reply, &QNetworkReply::finished, this, [this, reply, id, delivery] {
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        std::string error;
        if (reply->error() == QNetworkReply::OperationCanceledError)
            error = "no answer within " + std::to_string(m_options.timeoutMs) + " ms";
        else if (status == 0)
            error = reply->errorString().toStdString();
        else if (status < 200 || status > 299)
            error = "HTTP " + std::to_string(status);
        attempted(id, delivery, status, error);
    });
}

void WebhookDispatcher::attempted(const std::string &endpoint, const WebhookDelivery &d, int status,
                                  const std::string &error)
{
    const auto it = m_endpoints.find(endpoint);
    if (it == m_endpoints.end())
        return; // removed meanwhile (its deliveries with it)
    it->second.inFlight = false;
    const std::int64_t now = nowMs();
    const std::int64_t attempts = d.attempts + 1;
    if (error.empty()) {
        m_outbox.markDelivered(d.seq, status, now);
    } else if (now - d.createdAt >= m_options.retryForMs) {
        m_outbox.markFailed(d.seq, attempts, status, error, now);
        qCWarning(lcWebhooks) << "webhook" << endpoint.c_str() << "("
                              << hostOf(it->second.config.url) << "): gave up delivery"
                              << d.id.c_str() << "after" << attempts
                              << "attempts:" << error.c_str();
    } else {
        // The last attempt falls at the bound, so "retried for an hour" means an hour.
        const std::int64_t at =
            std::min(now + retryDelay(attempts), d.createdAt + m_options.retryForMs);
        m_outbox.markRetry(d.seq, attempts, at, status, error);
        if (attempts == 1)
            qCInfo(lcWebhooks) << "webhook" << endpoint.c_str() << "("
                               << hostOf(it->second.config.url) << "):" << error.c_str()
                               << "- retrying";
    }
    if (!error.empty() || d.attempts > 0)
        reportTroubles(); // a failure, or a success that may end one
    pump();
}

} // namespace leasehold

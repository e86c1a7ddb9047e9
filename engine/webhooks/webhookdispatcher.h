#pragma once

#include "healthcheck.h"
#include "webhookoutbox.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QTimer>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

class QNetworkAccessManager;

namespace leasehold {

// Delivery settings (docs/webhooks.md): how long a delivery is retried before it is marked
// failed, the first and the longest pause between attempts (doubled each time, with jitter),
// and how long one attempt may take before it is cut.
struct WebhookOptions
{
    QString path; // the outbox file
    std::int64_t retryForMs = 3'600'000;
    std::int64_t firstRetryMs = 1'000;
    std::int64_t maxRetryMs = 300'000;
    int timeoutMs = 10'000;
    std::vector<WebhookEndpoint> configured; // from the config file
};

// Sends the outbox's deliveries: per endpoint one at a time, oldest first (a delivery that
// keeps failing holds back the later ones of its endpoint until it is given up, so a receiver
// sees them in order), each signed afresh on every attempt, cut after the timeout, retried with
// exponential back-off and jitter until `retryForMs` after it was queued, then marked failed.
// Queues the deliveries of each published event for the endpoints that want it.
//
// Thread: the delivery thread, which owns it and its QNetworkAccessManager; nothing here ever
// runs on the engine thread (Webhooks hands work over by queued calls).
class WebhookDispatcher : public QObject
{
    Q_OBJECT

public:
    explicit WebhookDispatcher(WebhookOptions options, std::atomic<int> *endpointCount,
                               QObject *parent = nullptr);
    ~WebhookDispatcher() override;

    // Opens the outbox, puts the configured endpoints in it (dropping configured ones the
    // file no longer names) and starts sending what an earlier run left pending.
    bool open(QString *error);

    // Queues a delivery of each event for every endpoint that wants it.
    void publish(const std::vector<WebhookEvent> &events);

    // Adds an endpoint at run time; its id, or nothing with `error` naming the field.
    std::optional<WebhookEndpoint> add(WebhookEndpoint endpoint, std::string *error);
    // Removes a run-time endpoint; false with `error` (unknown, or from the config file).
    bool remove(const std::string &id, std::string *error, int *status);
    // Queues a test delivery to `id` (whatever its events); the delivery's id.
    std::optional<std::string> test(const std::string &id);

    // Every endpoint (secrets shown as "set"), with its tally and last deliveries.
    nlohmann::json list(int recentPerEndpoint) const;

    // Told the endpoints whose deliveries fail (for the health check) after each attempt, each
    // change of the endpoints, and every 30 s (so an hour-old failure ages out).
    void setTroubleSink(std::function<void(std::vector<WebhookTrouble>)> sink);

private:
    struct Endpoint
    {
        WebhookEndpoint config;
        bool inFlight = false;
    };
    void pump();
    void send(Endpoint &endpoint, const WebhookDelivery &delivery);
    void attempted(const std::string &endpoint, const WebhookDelivery &delivery, int status,
                   const std::string &error);
    void queue(std::vector<WebhookDelivery> deliveries);
    std::int64_t retryDelay(std::int64_t attempts) const;
    void countEndpoints();
    std::vector<WebhookTrouble> troubles() const;
    void reportTroubles();

    WebhookOptions m_options;
    std::atomic<int> *m_endpointCount;
    WebhookOutbox m_outbox;
    QNetworkAccessManager *m_net = nullptr;
    QTimer m_timer; // the next retry that is due
    QTimer m_troubleTimer;
    std::function<void(std::vector<WebhookTrouble>)> m_troubleSink;
    std::map<std::string, Endpoint> m_endpoints;
    // Deliveries the disk refused to queue: tried again on each pump, in order.
    std::vector<WebhookDelivery> m_unsaved;
};

} // namespace leasehold

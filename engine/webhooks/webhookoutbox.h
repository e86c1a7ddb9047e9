#pragma once

#include "webhookevents.h"

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leasehold {

// One delivery as the outbox keeps it. `seq` orders the deliveries of an endpoint; `id` is the
// delivery's identity on the wire, the same on every attempt.
struct WebhookDelivery
{
    enum class State { Pending, Delivered, Failed };
    std::int64_t seq = 0;
    std::string id;
    std::string endpoint;
    std::string event;
    QByteArray body;
    std::int64_t createdAt = 0;
    std::int64_t attempts = 0;
    std::int64_t nextAt = 0;
    State state = State::Pending;
    int lastStatus = 0; // the receiver's HTTP status on the last attempt (0: none)
    std::string lastError;
    std::int64_t doneAt = 0; // delivered or failed at
};
const char *deliveryStateName(WebhookDelivery::State state);

// How an endpoint's deliveries stand.
struct WebhookTally
{
    std::int64_t pending = 0;
    std::int64_t delivered = 0;
    std::int64_t failed = 0;
    std::int64_t failedRecently = 0; // failed at or after the `since` asked for
};

// The durable outbox: endpoints added at run time and every delivery until it is delivered
// or given up, in one SQLite file of its own (webhooks.db in the data directory), so that a
// delivery queued before a crash is still sent after it. A file of its own, not a table of
// the lease store's: its writes never wait on, nor delay, the group commit that answers grants,
// and cluster mode (whose lease store is etcd) keeps it the same way.
//
// Thread: one thread only (the delivery thread), the one that called open().
class WebhookOutbox
{
public:
    WebhookOutbox();
    ~WebhookOutbox();
    WebhookOutbox(const WebhookOutbox &) = delete;
    WebhookOutbox &operator=(const WebhookOutbox &) = delete;

    // Opens (creating) the file at `path`, readable by its owner only (it holds the secrets).
    bool open(const QString &path, QString *error);

    std::vector<WebhookEndpoint> endpoints() const;
    bool putEndpoint(const WebhookEndpoint &endpoint);
    // Removes the endpoint and the deliveries it still had pending.
    bool removeEndpoint(const std::string &id);

    // Queues `deliveries` in one transaction; false (nothing queued) if the disk refused.
    bool enqueue(const std::vector<WebhookDelivery> &deliveries);
    // The endpoint's oldest pending delivery.
    std::optional<WebhookDelivery> head(const std::string &endpoint) const;
    bool markDelivered(std::int64_t seq, int status, std::int64_t at);
    bool markRetry(std::int64_t seq, std::int64_t attempts, std::int64_t nextAt, int status,
                   const std::string &error);
    bool markFailed(std::int64_t seq, std::int64_t attempts, int status, const std::string &error,
                    std::int64_t at);
    // The endpoint's newest `limit` deliveries, newest first, without their bodies.
    std::vector<WebhookDelivery> recent(const std::string &endpoint, int limit) const;
    WebhookTally tally(const std::string &endpoint, std::int64_t failedSince) const;
    // Forgets delivered and failed deliveries done before `before`.
    void prune(std::int64_t before);
    // Why the last write the disk refused failed.
    QString lastError() const { return m_lastError; }

private:
    QString m_connection;
    QString m_lastError;
};

} // namespace leasehold

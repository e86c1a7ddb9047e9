#pragma once

#include "webhookevents.h"

#include <QByteArray>

#include <cstdint>
#include <string>

namespace leasehold {

// The bytes one delivery sends, built once when it is queued and sent unchanged on every
// attempt (so a receiver that deduplicates by `id` sees the same body each time).
//   json:  {"id", "timestamp" (ISO 8601, UTC), "at" (ms), "event", "kind", "summary", "details"}
//   slack: {"text": "[leasehold] <event>: <summary>", "id", "event"} (Slack-compatible)
QByteArray webhookBody(const WebhookEvent &event, const std::string &deliveryId,
                       const std::string &format);

// The X-Leasehold-Signature header's value for `body` sent at `unixSeconds`:
// "t=<unixSeconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>".
QByteArray webhookSignature(const QByteArray &secret, std::int64_t unixSeconds,
                            const QByteArray &body);

// A fresh delivery id (a UUID without braces), unique across instances and restarts.
std::string newDeliveryId();

} // namespace leasehold

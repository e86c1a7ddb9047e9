#pragma once

#include "consolewebhooks.h"

#include <nlohmann/json.hpp>

#include <QString>

#include <cstdint>

class QObject;

namespace leasehold {
class Webhooks;
}

// The console's webhook levers on `webhooks`: each runs on the delivery thread and answers on
// `context`'s (the engine thread's), turning the dispatcher's JSON into the console's plain
// values, so the console itself never sees JSON.
leasehold::WebhookLevers webhookLevers(leasehold::Webhooks &webhooks, QObject *context);

// One delivery of GET /admin/webhooks in words, for ctl's table and the console's list:
// "delivered 3 s ago", "pending, 4 attempts (HTTP 503)".
QString webhookDeliveryText(const nlohmann::json &delivery, std::int64_t now);

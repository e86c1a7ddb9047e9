#pragma once

#include "consolewebhooks.h"

class QObject;

namespace leasehold {
class Webhooks;
}

// The console's webhook levers on `webhooks`: each runs on the delivery thread and answers on
// `context`'s (the engine thread's), turning the dispatcher's JSON into the console's plain
// values, so the console itself never sees JSON.
leasehold::WebhookLevers webhookLevers(leasehold::Webhooks &webhooks, QObject *context);

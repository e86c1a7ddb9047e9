#pragma once

#include "ledgerevent.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasehold {

struct StoreHealth;

// The short, stable names an endpoint subscribes to (`--events deadlock,expired`), each with
// what it tells; `test` is sent only by `ctl webhooks test` and needs no subscription.
struct WebhookEventName
{
    const char *name;
    const char *tells;
};
const std::vector<WebhookEventName> &webhookEventNames();
bool isWebhookEventName(std::string_view name);

// One thing worth telling an operator who is not watching: its event name, what it came from
// (a ledger kind, or service.store / service.leader / service.hot_resource), when, one sentence
// for a person, and the details as JSON (the ledger event itself where there is one).
struct WebhookEvent
{
    std::string name;
    std::string kind;
    std::int64_t at = 0; // ms since the epoch
    std::string summary;
    nlohmann::json details = nlohmann::json::object();
};

// The webhook event a ledger event is, or nothing (most events are not one). Cheap for the
// kinds that are not: a switch on the kind, no allocation. Release requests are matched by
// their kind's name (coordination.release_request.raised|declined|overdue).
std::optional<WebhookEvent> webhookEventFromLedger(const LedgerEvent &event,
                                                   std::string_view kindName);
WebhookEvent storeHealthEvent(const StoreHealth &health, std::int64_t at);
WebhookEvent leaderEvent(const std::string &leader, std::int64_t term, std::int64_t at);
WebhookEvent hotResourceEvent(const std::string &resource, std::int64_t refusals,
                              std::int64_t threshold, std::int64_t at);
WebhookEvent testEvent(const std::string &endpointId, std::int64_t at);

// One receiver: where, with which secret, for which events (empty: all), in which format
// ("json", or "slack": `{"text": ...}`). `configured` endpoints come from the config file and
// are changed there, not by `ctl webhooks`.
struct WebhookEndpoint
{
    std::string id;
    std::string url;
    std::string secret;
    std::vector<std::string> events;
    std::string format = "json";
    bool configured = false;
    std::int64_t createdAt = 0;

    bool wants(const std::string &event) const;
};

// What is wrong with `e` as an endpoint, naming the field ("url must be an http:// or
// https:// URL"), or an empty string.
std::string checkWebhookEndpoint(const WebhookEndpoint &e);
// The id a configured endpoint keeps across restarts (from its URL): "config-<8 hex>".
std::string configuredWebhookId(const std::string &url);
// A fresh id for an endpoint added at run time: "wh-<8 hex>".
std::string newWebhookId();

} // namespace leasehold

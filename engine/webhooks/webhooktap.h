#pragma once

#include "webhooks.h"

#include <QObject>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace leasehold {

class EngineHost;
struct LedgerEvent;
struct StoreHealth;

// The engine thread's side of the webhooks: hears every ledger event and store health change
// of one host, picks the few an operator is told of, counts refusals per resource per minute
// (a hot resource is told once per minute it stays hot) and publishes them. With no endpoint
// configured it returns at once; with some, a ledger event that is not one costs a switch.
//
// Thread: the engine thread (the host's).
class WebhookTap : public QObject
{
    Q_OBJECT

public:
    // `hotRefusalsPerMinute`: refusals on one resource within a minute that make it hot.
    WebhookTap(EngineHost &host, Webhooks &webhooks, std::int64_t hotRefusalsPerMinute,
               QObject *parent = nullptr);

    // Cluster mode: this instance now leads (only the leader delivers).
    void leaderChanged(const std::string &leader, std::int64_t term);

    void onEvent(const LedgerEvent &event);
    void onStoreHealth(const StoreHealth &health);

private:
    void countRefusal(const LedgerEvent &event);

    EngineHost &m_host;
    Webhooks &m_webhooks;
    std::int64_t m_hotThreshold;
    struct Window
    {
        std::int64_t start = 0; // ms: the minute this count is of
        std::int64_t refusals = 0;
        bool told = false;
    };
    std::unordered_map<std::string, Window> m_refusals;
};

} // namespace leasehold

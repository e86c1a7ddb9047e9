#include "webhooktap.h"

#include "enginehost.h"
#include "webhookevents.h"

namespace leasehold {

namespace {
constexpr std::int64_t kMinuteMs = 60'000;
constexpr std::size_t kMaxTracked = 10'000; // resources counted at once, at most
} // namespace

WebhookTap::WebhookTap(EngineHost &host, Webhooks &webhooks, std::int64_t hotRefusalsPerMinute,
                       QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_webhooks(webhooks)
    , m_hotThreshold(hotRefusalsPerMinute)
{
    connect(&host, &EngineHost::eventRecorded, this, &WebhookTap::onEvent);
    connect(&host, &EngineHost::storeHealthChanged, this, &WebhookTap::onStoreHealth);
}

void WebhookTap::onEvent(const LedgerEvent &event)
{
    if (!m_webhooks.hasEndpoints())
        return;
    if (event.kind == EventKind::Refused)
        countRefusal(event);
    if (std::optional<WebhookEvent> e = webhookEventFromLedger(event, eventKindName(event.kind)))
        m_webhooks.publish(std::move(*e));
}

void WebhookTap::countRefusal(const LedgerEvent &event)
{
    if (event.resource.empty() || m_hotThreshold <= 0)
        return;
    if (m_refusals.size() >= kMaxTracked && !m_refusals.contains(event.resource)) {
        std::erase_if(m_refusals, [&](const auto &entry) {
            return event.at - entry.second.start >= kMinuteMs;
        });
        if (m_refusals.size() >= kMaxTracked)
            return;
    }
    Window &w = m_refusals[event.resource];
    if (event.at - w.start >= kMinuteMs)
        w = {event.at, 0, false};
    ++w.refusals;
    if (w.refusals >= m_hotThreshold && !w.told) {
        w.told = true;
        m_webhooks.publish(hotResourceEvent(event.resource, w.refusals, m_hotThreshold, event.at));
    }
}

void WebhookTap::onStoreHealth(const StoreHealth &health)
{
    if (m_webhooks.hasEndpoints())
        m_webhooks.publish(storeHealthEvent(health, m_host.clock().nowMs()));
}

void WebhookTap::leaderChanged(const std::string &leader, std::int64_t term)
{
    if (m_webhooks.hasEndpoints())
        m_webhooks.publish(leaderEvent(leader, term, m_host.clock().nowMs()));
}

} // namespace leasehold

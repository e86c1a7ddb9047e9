#include "mcpsubscriptions.h"

#include <chrono>

namespace leasehold {

using nlohmann::json;

namespace {

constexpr const char *kSubscriptionId = "io.modelcontextprotocol/subscriptionId";

QByteArray notification(const char *method, json params)
{
    return QByteArray::fromStdString(
        json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}}.dump());
}

} // namespace

McpSubscriptions::McpSubscriptions(EngineHost &host, std::int64_t coalesceMs, QObject *parent)
    : QObject(parent)
{
    m_coalesce.setSingleShot(true);
    m_coalesce.setInterval(std::chrono::milliseconds(std::max<std::int64_t>(coalesceMs, 10)));
    connect(&m_coalesce, &QTimer::timeout, this, &McpSubscriptions::flush);
    // Every change of state is recorded as a ledger event: one signal covers them all.
    connect(&host, &EngineHost::eventRecorded, this, &McpSubscriptions::changed);
}

bool McpSubscriptions::listenable(const std::string &uri)
{
    return uri == "leasehold://status" || uri == "leasehold://queue";
}

std::uint64_t McpSubscriptions::open(const json &requestId, const json &notifications, Send send)
{
    Listener listener{requestId, {}, std::move(send)};
    json honoured = json::object();
    if (notifications.is_object() && notifications.contains("resourceSubscriptions") &&
        notifications["resourceSubscriptions"].is_array()) {
        for (const json &uri : notifications["resourceSubscriptions"])
            if (uri.is_string() && listenable(uri.get<std::string>()))
                listener.uris.insert(uri.get<std::string>());
        if (!listener.uris.empty())
            honoured["resourceSubscriptions"] = listener.uris;
    }
    if (!listener.send(
            notification("notifications/subscriptions/acknowledged",
                         {{"_meta", {{kSubscriptionId, requestId}}}, {"notifications", honoured}})))
        return 0;
    const std::uint64_t handle = m_next++;
    m_listeners.emplace(handle, std::move(listener));
    return handle;
}

void McpSubscriptions::close(std::uint64_t handle)
{
    m_listeners.erase(handle);
}

void McpSubscriptions::changed()
{
    if (!m_listeners.empty() && !m_coalesce.isActive())
        m_coalesce.start();
}

void McpSubscriptions::flush()
{
    for (auto it = m_listeners.begin(); it != m_listeners.end();) {
        bool open = true;
        for (const std::string &uri : it->second.uris) {
            open = it->second.send(notification(
                "notifications/resources/updated",
                {{"_meta", {{kSubscriptionId, it->second.subscriptionId}}}, {"uri", uri}}));
            if (!open)
                break;
        }
        it = open ? std::next(it) : m_listeners.erase(it);
    }
}

} // namespace leasehold

#include "mcpprogress.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace leasehold {

using nlohmann::json;

McpProgress::McpProgress(EngineHost &host, std::int64_t everyMs, QObject *parent)
    : QObject(parent)
    , m_host(host)
{
    m_timer.setInterval(std::chrono::milliseconds(std::max<std::int64_t>(everyMs, 10)));
    connect(&m_timer, &QTimer::timeout, this, &McpProgress::tick);
}

void McpProgress::follow(std::uint64_t waitId, json progressToken, Send send)
{
    Call call{std::move(progressToken), std::move(send)};
    const std::optional<WaiterInfo> wait = m_host.engine().parkedWait(waitId);
    if (!notify(call, wait ? &*wait : nullptr, m_host.clock().nowMs()))
        return;
    m_calls.emplace(waitId, std::move(call));
    if (!m_timer.isActive())
        m_timer.start();
}

void McpProgress::tick()
{
    const TimeMs now = m_host.clock().nowMs();
    for (auto it = m_calls.begin(); it != m_calls.end();) {
        const std::optional<WaiterInfo> wait = m_host.engine().parkedWait(it->first);
        if (!notify(it->second, wait ? &*wait : nullptr, now))
            it = m_calls.erase(it);
        else
            ++it;
    }
    if (m_calls.empty())
        m_timer.stop();
}

bool McpProgress::notify(Call &call, const WaiterInfo *wait, TimeMs now)
{
    if (!wait)
        return false;
    const double waited = double(std::max<TimeMs>(0, now - wait->since));
    const double progress = std::max(waited, call.last + 1);
    call.last = progress;
    std::string message = "waiting for " + wait->resource;
    if (!wait->holder.empty())
        message += ", held by " + wait->holder;
    message += "; " + std::to_string(std::int64_t(waited / 1000)) + " s of " +
               std::to_string((wait->deadline - wait->since) / 1000) + " s";
    const json event = {{"jsonrpc", "2.0"},
                        {"method", "notifications/progress"},
                        {"params",
                         {{"progressToken", call.token},
                          {"progress", progress},
                          {"total", double(std::max<TimeMs>(wait->deadline - wait->since, 0))},
                          {"message", message}}}};
    return call.send(QByteArray::fromStdString(event.dump()));
}

} // namespace leasehold

#pragma once

#include "enginehost.h"

#include <QObject>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <unordered_map>

namespace leasehold {

// Progress notifications for parked tool calls (lock_acquire or coordination_lease_acquire
// waiting for a holder) whose request asked for them with `_meta.progressToken` and whose
// client reads an event stream. The first goes out as the call parks and says whom it waits
// for; then one every `everyMs` until the wait ends. `progress` is the time waited and `total`
// the wait's budget, both in milliseconds, so a client whose request timeout resets on
// progress (the SDKs' resetTimeoutOnProgress) waits out the whole budget in its place in the
// queue, however short its own timeout. Works the same in 2025 sessions and 2026 requests.
//
// One timer serves every followed call; each tick reads only the followed waits.
//
// Thread: the engine thread.
class McpProgress : public QObject
{
    Q_OBJECT

public:
    // Sends one event on the call's answer stream; false once that stream is gone.
    using Send = std::function<bool(const QByteArray &event)>;

    McpProgress(EngineHost &host, std::int64_t everyMs, QObject *parent = nullptr);

    // Follows parked wait `waitId`: notifies now, then every interval while it is parked.
    void follow(std::uint64_t waitId, nlohmann::json progressToken, Send send);
    std::size_t following() const { return m_calls.size(); }

private:
    struct Call
    {
        nlohmann::json token;
        Send send;
        double last = -1; // the progress sent last: each must be larger
    };
    void tick();
    // False when the call is no longer parked or its stream is gone.
    bool notify(Call &call, const WaiterInfo *wait, TimeMs now);

    EngineHost &m_host;
    std::unordered_map<std::uint64_t, Call> m_calls; // by engine wait id
    QTimer m_timer;
};

} // namespace leasehold

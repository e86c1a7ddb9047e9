#pragma once

#include "enginehost.h"

#include <QObject>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace leasehold {

// MCP 2026-07-28 `subscriptions/listen` for the resources `leasehold://status` and
// `leasehold://queue`: a long-lived answer stream on which a client (an operator's dashboard,
// an agent watching the queue) hears `notifications/resources/updated` when the fleet's state
// changes, instead of polling. The first message is `notifications/subscriptions/acknowledged`
// with the part of the filter honoured (these two URIs; the lists never change, so their
// list-changed types are not offered); every message carries the listen request's id as
// `_meta["io.modelcontextprotocol/subscriptionId"]`. Changes are coalesced: at most one update
// per resource and listener every `coalesceMs`, however busy the engine. A listener ends when
// its client closes the stream.
//
// Thread: the engine thread.
class McpSubscriptions : public QObject
{
    Q_OBJECT

public:
    using Send = std::function<bool(const QByteArray &event)>;

    McpSubscriptions(EngineHost &host, std::int64_t coalesceMs, QObject *parent = nullptr);

    // The resources one can listen to.
    static bool listenable(const std::string &uri);
    // Opens a listener for request `requestId` with filter `notifications` (the request's
    // params.notifications) on `send`, and sends its acknowledgement. Returns its handle (0
    // when the stream was already gone).
    std::uint64_t open(const nlohmann::json &requestId, const nlohmann::json &notifications,
                       Send send);
    void close(std::uint64_t handle);
    std::size_t listeners() const { return m_listeners.size(); }

private:
    struct Listener
    {
        nlohmann::json subscriptionId;
        std::set<std::string> uris;
        Send send;
    };
    void changed();
    void flush();

    std::map<std::uint64_t, Listener> m_listeners;
    std::uint64_t m_next = 1;
    QTimer m_coalesce;
};

} // namespace leasehold

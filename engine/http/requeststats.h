#pragma once

#include "leasestore.h"

#include <QByteArray>

#include <array>
#include <cstdint>
#include <map>
#include <optional>

namespace leasehold {

struct Snapshot;

// Request counts by status and a latency histogram, rendered with the engine's counters as
// Prometheus text for GET /metrics.
class RequestStats
{
public:
    // What the transport knows that the engine does not.
    struct Gauges
    {
        int openConnections = 0;
        int mcpSessions = 0;
        int liveAgents = 0;
        std::optional<StoreStats> store;       // none: state in memory only
        const char *storeHealth = "ok";        // StoreHealth::reasonName()
        std::uint64_t storeGivenBack = 0;      // grants given back: not durable in time
        std::uint64_t connectionsEvicted = 0;  // idle connections closed to admit newcomers
        std::uint64_t connectionsRejected = 0; // refused: every connection busy
        std::uint64_t requestsTimedOut = 0;    // 408: the head or body did not arrive in time
        int maxConnections = 0;
        int parkedConnections = 0;         // idle, out of the event loop's poll set
        int watchers = 0;                  // open watch streams
        std::uint64_t watchersCutSlow = 0; // watch streams cut off for not reading
    };

    void record(int status, double seconds);
    QByteArray prometheus(const Snapshot &snapshot, const Gauges &gauges) const;
    std::uint64_t count() const { return m_count; }

private:
    static constexpr std::array<double, 10> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                        0.025,  0.05,  0.1,    0.5,   1.0};
    std::array<std::uint64_t, kBuckets.size()> m_bucketCounts{};
    std::uint64_t m_count = 0;
    double m_sum = 0;
    std::map<int, std::uint64_t> m_byStatus;
};

} // namespace leasehold

#include "requeststats.h"

#include "leasetypes.h"
#include "snapshot.h"

#include <string_view>

namespace leasehold {

void RequestStats::record(int status, double seconds)
{
    ++m_count;
    m_sum += seconds;
    ++m_byStatus[status];
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
        if (seconds <= kBuckets[i])
            ++m_bucketCounts[i];
    }
}

QByteArray RequestStats::prometheus(const Snapshot &s, const Gauges &gauges) const
{
    QByteArray out;
    auto metric = [&out](const char *name, const char *type, const char *help) {
        out += QByteArray("# HELP ") + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n';
    };
    auto line = [&out](const QByteArray &name, double value) {
        out += name + ' ' + QByteArray::number(value, 'g', 12) + '\n';
    };
    std::size_t parked = 0;
    for (const WaiterInfo &w : s.waiters)
        parked += w.parked ? 1 : 0;
    metric("leasehold_leases", "gauge", "Leases held now.");
    line("leasehold_leases", double(s.leases.size()));
    metric("leasehold_waiters", "gauge", "Waiters by kind.");
    line("leasehold_waiters{kind=\"parked\"}", double(parked));
    line("leasehold_waiters{kind=\"want\"}", double(s.waiters.size() - parked));
    metric("leasehold_deadlock_pairs", "gauge", "Pairs of agents waiting on each other.");
    line("leasehold_deadlock_pairs", double(s.deadlocks.size()));
    metric("leasehold_pins", "gauge", "Pins in flight.");
    line("leasehold_pins", double(s.pins.size()));
    metric("leasehold_grants_total", "counter", "Leases granted.");
    line("leasehold_grants_total", double(s.counters.grants));
    metric("leasehold_refusals_total", "counter", "Refusals by reason.");
    for (std::size_t i = 0; i < s.counters.refusals.size(); ++i)
        line("leasehold_refusals_total{reason=\"" +
                 QByteArray::fromStdString(std::string(refusalName(RefusalReason(i)))) + "\"}",
             double(s.counters.refusals[i]));
    metric("leasehold_releases_total", "counter", "Leases released by their holder.");
    line("leasehold_releases_total", double(s.counters.releases));
    metric("leasehold_expiries_total", "counter", "Leases taken back at expiry.");
    line("leasehold_expiries_total", double(s.counters.expiries));
    metric("leasehold_paused", "gauge", "1 while admissions are paused.");
    line("leasehold_paused", s.paused ? 1 : 0);
    metric("leasehold_open_connections", "gauge", "Open HTTP connections.");
    line("leasehold_open_connections", gauges.openConnections);
    metric("leasehold_mcp_sessions", "gauge", "MCP sessions open now.");
    line("leasehold_mcp_sessions", gauges.mcpSessions);
    metric("leasehold_live_agents", "gauge", "Agents with an MCP session seen recently.");
    line("leasehold_live_agents", gauges.liveAgents);
    metric("leasehold_store_persistent", "gauge",
           "1 when state is kept on disk; 0 when it is in memory only (--in-memory).");
    line("leasehold_store_persistent", gauges.store ? 1 : 0);
    if (gauges.store) {
        metric("leasehold_store_queued_ops", "gauge", "Store operations waiting for the writer.");
        line("leasehold_store_queued_ops", double(gauges.storeQueued));
        metric("leasehold_store_batches_total", "counter", "Store transactions committed.");
        line("leasehold_store_batches_total", double(gauges.storeBatches));
        metric("leasehold_store_dropped_events_total", "counter",
               "Ledger events not stored because the write queue was full.");
        line("leasehold_store_dropped_events_total", double(gauges.storeDroppedEvents));
        metric("leasehold_store_failed_batches_total", "counter",
               "Store transactions that failed and were retried.");
        line("leasehold_store_failed_batches_total", double(gauges.storeFailedBatches));
        metric("leasehold_store_healthy", "gauge",
               "1 while the store records changes; 0 while it cannot (grants are refused).");
        line("leasehold_store_healthy", std::string_view(gauges.storeHealth) == "ok" ? 1 : 0);
        metric("leasehold_store_problem", "gauge", "1 for the store's current state.");
        line("leasehold_store_problem{state=\"" + QByteArray(gauges.storeHealth) + "\"}", 1);
        metric("leasehold_store_refused_changes_total", "counter",
               "Grants refused or given back because the store could not record them.");
        line("leasehold_store_refused_changes_total",
             double(gauges.storeGivenBack +
                    s.counters.refusals[std::size_t(RefusalReason::StoreUnavailable)]));
    }
    metric("leasehold_parked_connections", "gauge",
           "Open connections idle long enough to be parked outside the event loop.");
    line("leasehold_parked_connections", gauges.parkedConnections);
    metric("leasehold_max_connections", "gauge", "The cap on open HTTP connections.");
    line("leasehold_max_connections", gauges.maxConnections);
    metric("leasehold_connections_evicted_total", "counter",
           "Idle connections closed to admit a newcomer at the cap.");
    line("leasehold_connections_evicted_total", double(gauges.connectionsEvicted));
    metric("leasehold_connections_rejected_total", "counter",
           "Connections refused at the cap because every one was busy.");
    line("leasehold_connections_rejected_total", double(gauges.connectionsRejected));
    metric("leasehold_requests_timed_out_total", "counter",
           "Requests closed with 408: head or body too slow.");
    line("leasehold_requests_timed_out_total", double(gauges.requestsTimedOut));
    metric("leasehold_http_responses_total", "counter", "HTTP responses by status.");
    for (const auto &[status, n] : m_byStatus)
        line("leasehold_http_responses_total{status=\"" + QByteArray::number(status) + "\"}",
             double(n));
    metric("leasehold_http_request_duration_seconds", "histogram",
           "Time from request to answer (parked waits included).");
    for (std::size_t i = 0; i < kBuckets.size(); ++i)
        line("leasehold_http_request_duration_seconds_bucket{le=\"" +
                 QByteArray::number(kBuckets[i]) + "\"}",
             double(m_bucketCounts[i]));
    line("leasehold_http_request_duration_seconds_bucket{le=\"+Inf\"}", double(m_count));
    line("leasehold_http_request_duration_seconds_sum", m_sum);
    line("leasehold_http_request_duration_seconds_count", double(m_count));
    return out;
}

} // namespace leasehold

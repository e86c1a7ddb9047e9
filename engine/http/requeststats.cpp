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
    // A metric with one unlabelled value.
    auto single = [&](const char *name, const char *type, const char *help, double value) {
        metric(name, type, help);
        line(name, value);
    };
    std::size_t parked = 0;
    for (const WaiterInfo &w : s.waiters)
        parked += w.parked ? 1 : 0;
    single("leasehold_leases", "gauge", "Leases held now.", double(s.leases.size()));
    metric("leasehold_waiters", "gauge", "Waiters by kind.");
    line("leasehold_waiters{kind=\"parked\"}", double(parked));
    line("leasehold_waiters{kind=\"want\"}", double(s.waiters.size() - parked));
    single("leasehold_deadlock_pairs", "gauge", "Pairs of agents waiting on each other.",
           double(s.deadlocks.size()));
    single("leasehold_pins", "gauge", "Pins in flight.", double(s.pins.size()));
    single("leasehold_grants_total", "counter", "Leases granted.", double(s.counters.grants));
    metric("leasehold_refusals_total", "counter", "Refusals by reason.");
    for (std::size_t i = 0; i < s.counters.refusals.size(); ++i)
        line("leasehold_refusals_total{reason=\"" +
                 QByteArray::fromStdString(std::string(refusalName(RefusalReason(i)))) + "\"}",
             double(s.counters.refusals[i]));
    single("leasehold_releases_total", "counter", "Leases released by their holder.",
           double(s.counters.releases));
    single("leasehold_expiries_total", "counter", "Leases taken back at expiry.",
           double(s.counters.expiries));
    single("leasehold_paused", "gauge", "1 while admissions are paused.", s.paused ? 1 : 0);
    single("leasehold_open_connections", "gauge", "Open HTTP connections.", gauges.openConnections);
    single("leasehold_mcp_sessions", "gauge", "MCP sessions open now.", gauges.mcpSessions);
    single("leasehold_watch_streams", "gauge", "Watch streams open now.", gauges.watchers);
    single("leasehold_watch_cut_total", "counter",
           "Watch streams cut off because their client did not read.",
           double(gauges.watchersCutSlow));
    single("leasehold_live_agents", "gauge", "Agents with an MCP session seen recently.",
           gauges.liveAgents);
    single("leasehold_store_persistent", "gauge",
           "1 when state is kept on disk; 0 when it is in memory only (--in-memory).",
           gauges.store ? 1 : 0);
    if (gauges.store) {
        single("leasehold_store_queued_ops", "gauge", "Store operations waiting for the writer.",
               double(gauges.store->queued));
        single("leasehold_store_batches_total", "counter", "Store transactions committed.",
               double(gauges.store->batches));
        single("leasehold_store_dropped_events_total", "counter",
               "Ledger events not stored because the write queue was full.",
               double(gauges.store->droppedEvents));
        single("leasehold_store_failed_batches_total", "counter",
               "Store transactions that failed and were retried.",
               double(gauges.store->failedBatches));
        const CommitTimes::Counts &times = gauges.store->commitTimes;
        metric("leasehold_store_commit_duration_seconds", "histogram",
               "Time to make one batch of changes durable (transaction and fsync, or etcd's "
               "round trip); answers to changes wait for it.");
        std::uint64_t upTo = 0;
        for (std::size_t i = 0; i < CommitTimes::kBounds.size(); ++i) {
            upTo += times.buckets[i];
            line("leasehold_store_commit_duration_seconds_bucket{le=\"" +
                     QByteArray::number(CommitTimes::kBounds[i]) + "\"}",
                 double(upTo));
        }
        line("leasehold_store_commit_duration_seconds_bucket{le=\"+Inf\"}", double(times.count));
        line("leasehold_store_commit_duration_seconds_sum", times.sumSeconds);
        line("leasehold_store_commit_duration_seconds_count", double(times.count));
        if (gauges.store->archive) {
            single("leasehold_store_archived_partitions_total", "counter",
                   "Sealed ledger partitions moved into the archive file.",
                   double(gauges.store->archivedParts));
            single("leasehold_store_archive_failures_total", "counter",
                   "Attempts to move a sealed ledger partition that failed and were retried.",
                   double(gauges.store->archiveFailures));
            single("leasehold_store_archive_backlog_partitions", "gauge",
                   "Sealed ledger partitions in the live file still waiting to be moved into "
                   "the archive; one that keeps growing means the archiver never catches up.",
                   double(gauges.store->archiveBacklog));
        }
        single("leasehold_store_healthy", "gauge",
               "1 while the store records changes; 0 while it cannot (grants are refused).",
               std::string_view(gauges.storeHealth) == "ok" ? 1 : 0);
        metric("leasehold_store_problem", "gauge", "1 for the store's current state.");
        line("leasehold_store_problem{state=\"" + QByteArray(gauges.storeHealth) + "\"}", 1);
        metric("leasehold_store_refused_changes_total", "counter",
               "Grants refused or given back because the store could not record them.");
        line("leasehold_store_refused_changes_total",
             double(gauges.storeGivenBack +
                    s.counters.refusals[std::size_t(RefusalReason::StoreUnavailable)]));
    }
    single("leasehold_parked_connections", "gauge",
           "Open connections idle long enough to be parked outside the event loop.",
           gauges.parkedConnections);
    single("leasehold_max_connections", "gauge", "The cap on open HTTP connections.",
           gauges.maxConnections);
    single("leasehold_connections_evicted_total", "counter",
           "Idle connections closed to admit a newcomer at the cap.",
           double(gauges.connectionsEvicted));
    single("leasehold_connections_rejected_total", "counter",
           "Connections refused at the cap because every one was busy.",
           double(gauges.connectionsRejected));
    single("leasehold_requests_timed_out_total", "counter",
           "Requests closed with 408: head or body too slow.", double(gauges.requestsTimedOut));
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

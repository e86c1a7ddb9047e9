#pragma once

#include "ledgerevent.h"
#include "snapshot.h"

#include <QString>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace leasehold {

// What an operator paged at night asks first, answered in one list: the findings of the health
// check, each with the command that fixes it. `ctl doctor`, GET /health and the console's
// Health page all show this one list (docs/operating.md, "When you are paged").
enum class HealthSeverity { Info, Warning, Critical };
const char *healthSeverityName(HealthSeverity severity);

struct HealthFinding
{
    HealthSeverity severity = HealthSeverity::Info;
    std::string code;  // stable, for scripts: "store", "disk", "not_live", "deadlock", ...
    QString what;      // one sentence
    QString fix;       // the command that fixes it; empty when there is none
    std::string agent; // the agent it is about, when one is
};

// The last hour's incidents, counted from the ledger events as they are recorded: deadlocks
// refused, force releases, leases that expired on their holders. Counted in minutes, so a storm
// costs no memory (at most 61 buckets) and a count is an hour give or take a minute. Fed on one
// thread (the engine's).
class IncidentWindow
{
public:
    static constexpr TimeMs kWindowMs = 3'600'000;
    struct Counts
    {
        int deadlocks = 0;
        int forced = 0;
        int expired = 0;
        friend bool operator==(const Counts &, const Counts &) = default;
    };

    void note(const LedgerEvent &event);
    // Within the hour before `now`.
    Counts counts(TimeMs now) const;

private:
    struct Minute
    {
        TimeMs minute = 0; // at / 60 000
        Counts counts;
    };
    void trim(TimeMs now);
    std::deque<Minute> m_minutes; // oldest first
};

// A webhook endpoint whose deliveries fail: some failed for good in the last hour, or the oldest
// pending one has been tried and is being retried. Kept by the delivery thread (refreshed after
// each attempt and every 30 s), so reading it never waits on the outbox.
struct WebhookTrouble
{
    std::string id;
    std::string host; // the URL's host only: its path may itself be a secret
    std::int64_t failedLastHour = 0;
    bool retrying = false;
    std::string lastError;
    friend bool operator==(const WebhookTrouble &, const WebhookTrouble &) = default;
};

// What the health check knows beyond the engine's snapshot.
struct HealthFacts
{
    std::string storeHealth = "ok";  // StoreHealth::reasonName()
    std::string storeProblem;        // its phrase when not ok
    QString dataDir;                 // where the store writes; empty: in memory
    std::int64_t diskFreeBytes = -1; // -1: not known (no store, or not measured)
    std::int64_t diskTotalBytes = -1;
    std::int64_t minFreeBytes = 1024LL * 1024 * 1024; // below it: a warning (a sixteenth: critical)
    bool clustered = false;
    std::string clusterRole;    // "leader", "standby"
    std::string clusterLeader;  // known leader's URL
    bool clusterLapsed = false; // leading, but its etcd session unconfirmed
    std::string clusterProblem;
    std::int64_t clusterFollowAgeMs = -1; // a standby: since its ledger copy last caught up
    IncidentWindow::Counts lastHour;
    std::vector<WebhookTrouble> webhooks;
};

// The findings for `snapshot` and `facts` at `now`, the worst first.
std::vector<HealthFinding> healthFindings(const Snapshot &snapshot, const HealthFacts &facts,
                                          TimeMs now);
HealthSeverity worstOf(const std::vector<HealthFinding> &findings);

} // namespace leasehold

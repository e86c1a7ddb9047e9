#pragma once

#include "consoleframe.h"

#include <QString>

#include <deque>
#include <map>
#include <optional>
#include <vector>

// Something an operator should hear about at once.
struct Incident
{
    enum class Kind { Deadlock, Expiry, Suspension, Store, Overdue };
    Kind kind = Kind::Deadlock;
    QString agent;    // who was refused, whose lease expired, who was suspended, who did not answer
    QString resource; // empty for a suspension and the store
    QString text;     // one sentence for a notification
    std::int64_t at = 0;
    std::uint64_t seq = 0;
};

// Whether a ledger event is an incident, and which: the one rule the notifications, the
// highlighted ledger rows and the views share.
std::optional<Incident::Kind> incidentKind(const leasehold::LedgerEvent &event);

// A deadlock refusal as the ledger recorded it, with the cycle it would have closed.
struct DeadlockRecord
{
    std::uint64_t seq = 0;
    std::int64_t at = 0;
    QString agent;                           // the agent refused
    QString resource;                        // what it asked for
    QString holder;                          // who holds it
    QString waitingOn;                       // what the holder itself waits for
    QString cycle;                           // "a -> b -> a"
    std::vector<leasehold::CycleStep> steps; // the cycle: each agent waits for its resource
};

// What the console remembers across frames: the latest frame, recent deadlock refusals, recent
// expiries by agent, and trust samples for the trend column. Fed one frame at a time.
//
// Thread: the UI thread.
class ConsoleState
{
public:
    // Takes in `frame`; returns the incidents its events carry, oldest first.
    std::vector<Incident> absorb(leasehold::ConsoleFramePtr frame);

    const leasehold::ConsoleFrame *frame() const { return m_frame.get(); }
    const std::deque<DeadlockRecord> &deadlocks() const { return m_deadlocks; }
    // The latest expiry of one of `did`'s leases (0: none remembered).
    std::int64_t lastExpiry(const std::string &did) const;
    // `did`'s trust score each time it changed (time, score), oldest first: at most
    // kTrustPoints, the last always kept.
    const std::deque<std::pair<std::int64_t, double>> &trustHistory(const std::string &did) const;
    // How far `did`'s trust moved over about the last minute.
    double trustTrend(const std::string &did, double now) const;
    // Grants and refusals per second over the last second or so.
    double grantRate() const { return m_grantRate; }
    double refusalRate() const { return m_refusalRate; }
    double requestRate() const { return m_requestRate; }
    // Refusals of the last kRefusalMemoryMs (at most kRefusalMemory of them): (time, resource),
    // oldest first.
    const std::deque<std::pair<std::int64_t, std::string>> &recentRefusals() const
    {
        return m_refusals;
    }
    // How many refusals have been added to recentRefusals() since the start: the newest
    // `refusalsRecorded() - n` of them came after a reader that saw n.
    std::uint64_t refusalsRecorded() const { return m_refusalsRecorded; }

    static constexpr std::size_t kDeadlockMemory = 200;
    static constexpr std::int64_t kTrendWindowMs = 60'000;
    static constexpr std::int64_t kRefusalMemoryMs = 60'000;
    static constexpr std::size_t kTrustPoints = 64;
    static constexpr std::size_t kRefusalMemory = 20'000;

private:
    leasehold::ConsoleFramePtr m_frame;
    std::deque<DeadlockRecord> m_deadlocks; // newest last
    std::deque<std::pair<std::int64_t, std::string>> m_refusals;
    std::uint64_t m_refusalsRecorded = 0;
    std::map<std::string, std::deque<std::pair<std::int64_t, double>>> m_trustHistory;
    std::map<std::string, std::int64_t> m_lastExpiry;
    // (time, did -> score), one sample every few seconds, newest last
    std::deque<std::pair<std::int64_t, std::map<std::string, double>>> m_trust;
    std::int64_t m_rateBaseAt = 0;
    leasehold::Counters m_rateBase;
    std::uint64_t m_requestBase = 0;
    double m_requestRate = 0;
    double m_grantRate = 0;
    double m_refusalRate = 0;
};

#pragma once

#include "consoleframe.h"

#include <QString>

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

// What the console's timeline draws, built from the ledger: bars for who held what from when to
// when and for parked waits, and marks for expiries, refusals, deadlocks, levers and guarded
// changes. Fed every frame's events (so nothing is missed while the timeline is not shown), and
// pages of the stored ledger for what the console did not see: before it started, a burst
// the feed skipped, or beyond the live part's bounds.
//
// The live part holds the last kHorizonMs at most, and at most kMaxBars bars and kMaxMarks
// marks. A frame that skipped events is squared with its snapshot (leases the events did not
// show are added from their grant time, bars whose lease is gone end at the frame's time) and
// its gap remembered. Stored history, for one filter at a time, is merged in without doubles:
// a lease is one bar (the live one when both have it), an event one mark.
//
// Thread: the UI thread.
class TimelineModel
{
public:
    static constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();

    struct Bar
    {
        enum class Kind { Held, Waited };
        // How it ended. Held: Released, Expired, Admin (a lever), Gone (seen missing from a
        // snapshot). Waited: Granted, GaveUp (timed out, cancelled or refused).
        enum class End { Open, Released, Expired, Admin, Gone, Granted, GaveUp };
        Kind kind = Kind::Held;
        End end = End::Open;
        std::string resource;
        std::string agent;
        std::string leaseId; // held only
        std::uint64_t token = 0;
        leasehold::Mode mode = leasehold::Mode::Write;
        std::int64_t from = 0;
        std::int64_t to = kOpen;
        std::uint64_t seq = 0; // the event that began it (a snapshot's last seq if none)
        std::string reason;    // how a wait ended ("timeout", "deadlock"...), how a lease ended
    };
    struct Mark
    {
        enum class Kind { Expiry, Refusal, Deadlock, Lever, Change };
        Kind kind = Kind::Refusal;
        std::int64_t at = 0;
        std::uint64_t seq = 0;
        std::string resource; // empty: the whole fleet (release all, pause)
        std::string agent;    // whom it concerns: refused, expired, the lever's target
        QString text;         // one line for a tooltip, in the ledger view's words
    };
    enum class LaneBy { Resource, Agent };
    // One row of the picture: a resource's (or an agent's) bars and marks in a window.
    struct Lane
    {
        std::string name;
        std::vector<const Bar *> bars;
        std::vector<const Mark *> marks;
    };

    // Takes in a frame: its events, then (on the first frame and after skipped events) its
    // snapshot's leases.
    void absorb(const leasehold::ConsoleFrame &frame);
    // Takes in a page of the stored ledger, oldest first, read with `filter`; a different
    // filter drops the history held for the previous one.
    void absorbHistory(const leasehold::LedgerFilter &filter,
                       const std::vector<leasehold::LedgerEvent> &events);
    void clearHistory();
    // The filter the history was read with (nothing while none is held).
    const std::optional<leasehold::LedgerFilter> &historyFilter() const { return m_historyFilter; }

    // The lanes with anything in [from, to], by name; `filter` keeps names containing it. The
    // live snapshot's parked waits are open bars. Marks for the whole fleet (release all, a
    // pause) are in fleetMarks(), not in every lane.
    std::vector<Lane> lanes(LaneBy by, std::int64_t from, std::int64_t to,
                            const std::string &filter) const;
    std::vector<const Mark *> fleetMarks(std::int64_t from, std::int64_t to) const;
    // Stretches of time whose events the feed skipped (a burst beyond its bound), oldest first.
    const std::deque<std::pair<std::int64_t, std::int64_t>> &gaps() const { return m_gaps; }

    // The first sequence number the live part took in: what lies before it only the store has.
    std::uint64_t firstLiveSeq() const { return m_firstLiveSeq; }
    // The first frame's time: before it, only the store knows what happened.
    std::int64_t liveSince() const { return m_liveSince; }
    std::int64_t now() const { return m_now; }
    std::size_t liveBars() const { return m_live.bars.size(); }
    std::size_t liveMarks() const { return m_live.marks.size(); }

    static constexpr std::int64_t kHorizonMs = 60 * 60'000;
    static constexpr std::size_t kMaxBars = 100'000;
    static constexpr std::size_t kMaxMarks = 50'000;
    static constexpr std::size_t kMaxGaps = 100;

private:
    // Bars and marks from one source, with each lease's bar found by its id.
    struct Track
    {
        std::vector<Bar> bars;
        std::deque<Mark> marks;
        std::unordered_map<std::string, std::size_t> byLease; // leaseId -> index in bars

        void take(const leasehold::LedgerEvent &e);
        // Opens a bar for lease `leaseId`, found by its id from now on.
        void hold(const std::string &resource, const std::string &agent, const std::string &leaseId,
                  std::uint64_t token, leasehold::Mode mode, std::int64_t from, std::uint64_t seq);
        void reindex();
    };
    void squareWith(const leasehold::Snapshot &snapshot, std::int64_t since);
    void prune();

    Track m_live;
    Track m_history;
    std::optional<leasehold::LedgerFilter> m_historyFilter;
    std::vector<Bar> m_parked; // the latest snapshot's parked waits
    std::deque<std::pair<std::int64_t, std::int64_t>> m_gaps;
    std::int64_t m_now = 0;
    std::uint64_t m_firstLiveSeq = 0;
    std::int64_t m_liveSince = 0;
    std::int64_t m_prunedAt = 0;
};

#include "timelinemodel.h"

#include "ledgermodel.h"
#include "wording.h"

#include <algorithm>
#include <map>
#include <unordered_set>

using namespace leasehold;

namespace {

using Bar = TimelineModel::Bar;
using Mark = TimelineModel::Mark;

// "did:agent:c refused: lease_held · acquire, holder did:agent:a": who, what, why, and the facts
// in the words the ledger view and `ctl ledger` use.
QString markText(const LedgerEvent &e)
{
    const QString kind = LedgerModel::shortKind(e.kind);
    const QString reason = QString::fromStdString(e.reason);
    QString text = QString::fromStdString(e.actorDid) + QLatin1Char(' ') + kind;
    if (!reason.isEmpty() && reason != kind) // "expired: expired" says nothing twice
        text += QStringLiteral(": ") + reason;
    const QString facts = eventSummary(e);
    return facts.isEmpty() ? text : text + QStringLiteral(" · ") + facts;
}

bool overlaps(const Bar &b, std::int64_t from, std::int64_t to)
{
    return b.from <= to && b.to >= from;
}

} // namespace

void TimelineModel::Track::take(const LedgerEvent &e)
{
    auto closeLease = [&](Bar::End end) {
        const auto it = byLease.find(e.leaseId);
        if (it == byLease.end() || bars[it->second].end != Bar::End::Open)
            return; // its grant is older than what this track holds
        Bar &b = bars[it->second];
        b.to = std::max(b.from, e.at);
        b.end = end;
        b.reason = e.reason;
    };
    auto waited = [&](Bar::End end) {
        if (e.facts.waitedMs < 0)
            return;
        Bar w;
        w.kind = Bar::Kind::Waited;
        w.end = end;
        w.resource = e.resource;
        w.agent = e.actorDid;
        w.mode = e.facts.mode;
        w.from = e.at - e.facts.waitedMs;
        w.to = e.at;
        w.seq = e.seq;
        w.reason = end == Bar::End::Granted ? std::string("granted") : e.reason;
        bars.push_back(std::move(w));
    };
    auto mark = [&](Mark::Kind kind, const std::string &agent) {
        marks.push_back({kind, e.at, e.seq, e.resource, agent, markText(e)});
    };
    switch (e.kind) {
    case EventKind::Granted: {
        waited(Bar::End::Granted);
        if (byLease.count(e.leaseId) && bars[byLease[e.leaseId]].end == Bar::End::Open)
            return; // a grant that extended a lease it holds: one bar
        return hold(e.resource, e.actorDid, e.leaseId, e.token, e.facts.mode, e.at, e.seq);
    }
    case EventKind::Released:
        return closeLease(e.reason == "admin" ? Bar::End::Admin : Bar::End::Released);
    case EventKind::Expired:
        closeLease(Bar::End::Expired);
        return mark(Mark::Kind::Expiry, e.actorDid);
    case EventKind::Refused:
        waited(Bar::End::GaveUp);
        return mark(e.reason == "deadlock" ? Mark::Kind::Deadlock : Mark::Kind::Refusal,
                    e.actorDid);
    case EventKind::AdminReleaseHolder:
    case EventKind::AdminReleaseAll:
    case EventKind::AdminReleaseLease:
    case EventKind::AdminSuspend:
    case EventKind::AdminPause:
        return mark(Mark::Kind::Lever, e.facts.target);
    case EventKind::WorkspaceMutation:
        return mark(Mark::Kind::Change, e.actorDid);
    case EventKind::ReleaseRequestRaised:
    case EventKind::ReleaseRequestOverdue:
        return mark(Mark::Kind::Lever, e.facts.holder);
    case EventKind::ReleaseRequestDeclined:
        return;
    case EventKind::Pinned:
    case EventKind::Unpinned:
        return;
    }
}

void TimelineModel::Track::hold(const std::string &resource, const std::string &agent,
                                const std::string &leaseId, std::uint64_t token, Mode mode,
                                std::int64_t from, std::uint64_t seq)
{
    Bar b;
    b.resource = resource;
    b.agent = agent;
    b.leaseId = leaseId;
    b.token = token;
    b.mode = mode;
    b.from = from;
    b.seq = seq;
    byLease[leaseId] = bars.size();
    bars.push_back(std::move(b));
}

void TimelineModel::Track::reindex()
{
    byLease.clear();
    for (std::size_t i = 0; i < bars.size(); ++i) {
        if (bars[i].kind == Bar::Kind::Held)
            byLease[bars[i].leaseId] = i;
    }
}

void TimelineModel::absorb(const ConsoleFrame &frame)
{
    const Snapshot &s = frame.snapshot;
    const bool first = m_firstLiveSeq == 0;
    if (first) {
        m_firstLiveSeq = frame.events.empty() ? s.lastSeq + 1 : frame.events.front().seq;
        m_liveSince = frame.events.empty() ? s.at : frame.events.front().at;
    }
    for (const LedgerEvent &e : frame.events)
        m_live.take(e);
    // Without every event, only the snapshot says what is held: square the bars with it.
    if (first || frame.eventsSkipped > 0)
        squareWith(s, first ? 0 : m_now);
    if (!first && frame.eventsSkipped > 0) {
        m_gaps.emplace_back(m_now, frame.events.empty() ? s.at : frame.events.front().at);
        if (m_gaps.size() > kMaxGaps)
            m_gaps.pop_front();
    }
    m_parked.clear();
    for (const WaiterInfo &w : s.waiters) {
        if (!w.parked)
            continue;
        Bar b;
        b.kind = Bar::Kind::Waited;
        b.resource = w.resource;
        b.agent = w.actorDid;
        b.mode = w.mode;
        b.from = w.since;
        b.reason = w.holder.empty() ? std::string() : "behind " + w.holder;
        m_parked.push_back(std::move(b));
    }
    m_now = s.at;
    if (m_now - m_prunedAt >= 10'000 || m_live.bars.size() > kMaxBars ||
        m_live.marks.size() > kMaxMarks)
        prune();
}

void TimelineModel::squareWith(const Snapshot &snapshot, std::int64_t since)
{
    std::unordered_set<std::string_view> live;
    for (const LeaseInfo &l : snapshot.leases) {
        live.insert(l.leaseId);
        if (m_live.byLease.count(l.leaseId) || (since > 0 && l.grantedAt < since))
            continue; // known, or granted before the gap (its bar was dropped or never seen)
        m_live.hold(l.resource, l.holder, l.leaseId, l.token, l.mode, l.grantedAt,
                    snapshot.lastSeq);
    }
    for (Bar &b : m_live.bars) {
        if (b.kind == Bar::Kind::Held && b.end == Bar::End::Open && !live.count(b.leaseId)) {
            b.end = Bar::End::Gone;
            b.to = snapshot.at;
        }
    }
}

void TimelineModel::prune()
{
    m_prunedAt = m_now;
    const std::int64_t horizon = m_now - kHorizonMs;
    std::vector<Bar> &bars = m_live.bars;
    auto ended = [](const Bar &b) { return b.end != Bar::End::Open; };
    std::int64_t cut = horizon;
    const auto endedCount = std::size_t(std::count_if(bars.begin(), bars.end(), ended));
    if (bars.size() > kMaxBars && endedCount > 0) {
        // Beyond the bound: the bars that ended longest ago go, down to three quarters of it.
        std::vector<std::int64_t> ends;
        ends.reserve(endedCount);
        for (const Bar &b : bars) {
            if (ended(b))
                ends.push_back(b.to);
        }
        const std::size_t excess = std::min(ends.size(), bars.size() - kMaxBars * 3 / 4);
        std::nth_element(ends.begin(), ends.begin() + std::ptrdiff_t(excess - 1), ends.end());
        cut = std::max(cut, ends[excess - 1] + 1);
    }
    const std::size_t before = bars.size();
    std::erase_if(bars, [&](const Bar &b) { return ended(b) && b.to < cut; });
    if (bars.size() != before)
        m_live.reindex();
    std::deque<Mark> &marks = m_live.marks;
    while (!marks.empty() && (marks.front().at < horizon || marks.size() > kMaxMarks))
        marks.pop_front();
    while (!m_gaps.empty() && m_gaps.front().second < horizon)
        m_gaps.pop_front();
}

void TimelineModel::absorbHistory(const LedgerFilter &filter,
                                  const std::vector<LedgerEvent> &events)
{
    if (m_historyFilter && *m_historyFilter != filter)
        clearHistory();
    m_historyFilter = filter;
    for (const LedgerEvent &e : events)
        m_history.take(e);
}

void TimelineModel::clearHistory()
{
    m_history = {};
    m_historyFilter.reset();
}

std::vector<TimelineModel::Lane> TimelineModel::lanes(LaneBy by, std::int64_t from, std::int64_t to,
                                                      const std::string &filter) const
{
    std::map<std::string_view, Lane> rows;
    auto laneOf = [&](const std::string &resource, const std::string &agent) -> Lane * {
        const std::string &name = by == LaneBy::Resource ? resource : agent;
        if (name.empty() || (!filter.empty() && name.find(filter) == std::string::npos))
            return nullptr;
        Lane &lane = rows[name];
        if (lane.name.empty())
            lane.name = name;
        return &lane;
    };
    // Live first, so a lease both have is drawn as the live part knows it (with its end).
    for (const std::vector<Bar> *bars : {&m_live.bars, &m_parked, &m_history.bars}) {
        const bool history = bars == &m_history.bars;
        for (const Bar &b : *bars) {
            if (!overlaps(b, from, to) ||
                (history && b.kind == Bar::Kind::Held && m_live.byLease.count(b.leaseId)))
                continue;
            if (Lane *lane = laneOf(b.resource, b.agent))
                lane->bars.push_back(&b);
        }
    }
    for (const std::deque<Mark> *marks : {&m_live.marks, &m_history.marks}) {
        for (const Mark &m : *marks) {
            if (m.at < from || m.at > to || (by == LaneBy::Resource && m.resource.empty()))
                continue;
            if (Lane *lane = laneOf(m.resource, m.agent))
                lane->marks.push_back(&m);
        }
    }
    std::vector<Lane> out;
    out.reserve(rows.size());
    for (auto &[name, lane] : rows) {
        // An event both parts hold (a wait's end, a mark) is drawn once.
        auto bySeq = [](const auto *a, const auto *b) { return a->seq < b->seq; };
        auto sameSeq = [](const auto *a, const auto *b) { return a->seq == b->seq; };
        std::stable_sort(lane.marks.begin(), lane.marks.end(), bySeq);
        lane.marks.erase(std::unique(lane.marks.begin(), lane.marks.end(), sameSeq),
                         lane.marks.end());
        auto waits = std::stable_partition(lane.bars.begin(), lane.bars.end(), [](const Bar *b) {
            return b->kind == Bar::Kind::Held || b->seq == 0;
        });
        std::stable_sort(waits, lane.bars.end(), bySeq);
        lane.bars.erase(std::unique(waits, lane.bars.end(), sameSeq), lane.bars.end());
        out.push_back(std::move(lane));
    }
    return out;
}

std::vector<const TimelineModel::Mark *> TimelineModel::fleetMarks(std::int64_t from,
                                                                   std::int64_t to) const
{
    std::vector<const Mark *> out;
    for (const std::deque<Mark> *marks : {&m_history.marks, &m_live.marks}) {
        for (const Mark &m : *marks) {
            if (m.resource.empty() && m.kind == Mark::Kind::Lever && m.at >= from && m.at <= to)
                out.push_back(&m);
        }
    }
    return out;
}

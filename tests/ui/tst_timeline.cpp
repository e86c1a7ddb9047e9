// The timeline as a function of frames and stored pages: a real engine with a manual clock
// makes the snapshots and ledger events, and the bars and marks are checked against the ledger
// the engine wrote; then the page draws them, answers hovering, clicks and keys, and reads the
// store a page at a time for what the console did not see.

#include "consolestate.h"
#include "framefixture.h"
#include "timelinemodel.h"
#include "timelinepage.h"
#include "timelineview.h"

#include <QComboBox>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>

using namespace leasehold;
using namespace leasehold::test;

namespace {

using Bar = TimelineModel::Bar;
using Mark = TimelineModel::Mark;
using LaneBy = TimelineModel::LaneBy;

constexpr std::int64_t kAll = TimelineModel::kOpen - 1;

// One bar as text: "held did:agent:a 1000..5000 released" (times from `t0`; "now" while open).
QString describe(const Bar &b, std::int64_t t0)
{
    static const char *ends[] = {"open", "released", "expired", "admin",
                                 "gone", "granted",  "gave-up"};
    return QStringLiteral("%1 %2 %3..%4 %5")
        .arg(b.kind == Bar::Kind::Held ? "held" : "waited", QString::fromStdString(b.agent))
        .arg(b.from - t0)
        .arg(b.to == TimelineModel::kOpen ? QStringLiteral("now") : QString::number(b.to - t0))
        .arg(QLatin1String(ends[int(b.end)]));
}

QStringList barsOf(const TimelineModel::Lane &lane, std::int64_t t0)
{
    QStringList out;
    for (const Bar *b : lane.bars)
        out << describe(*b, t0);
    out.sort();
    return out;
}

QStringList marksOf(const TimelineModel::Lane &lane, std::int64_t t0)
{
    static const char *kinds[] = {"expiry", "refusal", "deadlock", "lever", "change"};
    QStringList out;
    for (const Mark *m : lane.marks)
        out << QStringLiteral("%1 %2 %3")
                   .arg(QLatin1String(kinds[int(m->kind)]), QString::fromStdString(m->agent))
                   .arg(m->at - t0);
    return out;
}

const TimelineModel::Lane *laneNamed(const std::vector<TimelineModel::Lane> &lanes,
                                     const std::string &name)
{
    for (const TimelineModel::Lane &l : lanes) {
        if (l.name == name)
            return &l;
    }
    return nullptr;
}

} // namespace

class TestTimeline : public QObject, private FrameFixture
{
    Q_OBJECT

private slots:
    void init() { resetFrames(); }
    void cleanup() { finish(); }

    void barsMatchTheLedgersGrantAndReleaseTimes();
    void expiriesAndLeversAreMarked();
    void aSkippedBurstIsSquaredWithTheSnapshot();
    void storedHistoryMergesWithoutDoubles();
    void theLivePartKeepsItsBounds();
    void thePageShowsWhatIsUnderThePointerAndOpensTheLease();
    void thePageReadsTheStoreAPageAtATime();

private:
    // a holds parser.cpp from t0 for 5 s; b waits for it from t0+2 s and holds it from t0+5 s
    // to t0+10 s; c is refused it at t0+6 s.
    void contendForTheParser()
    {
        m_engine->acquire(req("did:agent:a", {"src/parser.cpp"}, Mode::Write, 0, 600'000));
        m_clock.advance(2000);
        m_engine->acquire(req("did:agent:b", {"src/parser.cpp"}, Mode::Write, 60'000, 600'000));
        m_clock.advance(3000);
        m_engine->release("did:agent:a", {});
        m_clock.advance(1000);
        m_engine->acquire(req("did:agent:c", {"src/parser.cpp"}));
        m_clock.advance(4000);
        m_engine->release("did:agent:b", {});
    }
};

void TestTimeline::barsMatchTheLedgersGrantAndReleaseTimes()
{
    TimelineModel model;
    model.absorb(*frame()); // the console starts before anything happens
    const std::int64_t t0 = m_clock.nowMs();
    contendForTheParser();
    model.absorb(*frame());

    const auto lanes = model.lanes(LaneBy::Resource, t0 - 1, kAll, {});
    QCOMPARE(lanes.size(), 1u);
    QCOMPARE(lanes[0].name, "fs:src/parser.cpp");
    QCOMPARE(barsOf(lanes[0], t0), QStringList({"held did:agent:a 0..5000 released",
                                                "held did:agent:b 5000..10000 released",
                                                "waited did:agent:b 2000..5000 granted"}));
    QCOMPARE(marksOf(lanes[0], t0), QStringList({"refusal did:agent:c 6000"}));
    // Every grant in the ledger begins a bar of its lease at its time; every release ends one.
    int checked = 0;
    for (const LedgerEvent &e : m_listener.events) {
        for (const Bar *b : lanes[0].bars) {
            if (b->leaseId != e.leaseId || b->kind != Bar::Kind::Held)
                continue;
            if (e.kind == EventKind::Granted) {
                QCOMPARE(b->from, e.at);
                ++checked;
            }
            if (e.kind == EventKind::Released) {
                QCOMPARE(b->to, e.at);
                ++checked;
            }
        }
    }
    QCOMPARE(checked, 4);

    // By agent: b's lane has its wait and its lease, c's the refusal.
    const auto byAgent = model.lanes(LaneBy::Agent, t0 - 1, kAll, {});
    QCOMPARE(byAgent.size(), 3u);
    QCOMPARE(barsOf(*laneNamed(byAgent, "did:agent:b"), t0),
             QStringList({"held did:agent:b 5000..10000 released",
                          "waited did:agent:b 2000..5000 granted"}));
    QCOMPARE(marksOf(*laneNamed(byAgent, "did:agent:c"), t0),
             QStringList({"refusal did:agent:c 6000"}));
    // The window and the filter choose: before b's lease, nothing of b's; "lexer" matches none.
    QCOMPARE(model.lanes(LaneBy::Agent, t0, t0 + 1999, "agent:b").size(), 0u);
    QVERIFY(model.lanes(LaneBy::Resource, t0 - 1, kAll, "lexer").empty());
}

void TestTimeline::expiriesAndLeversAreMarked()
{
    TimelineModel model;
    model.absorb(*frame());
    const std::int64_t t0 = m_clock.nowMs();
    m_engine->acquire(req("did:agent:a", {"src/a.cpp"}, Mode::Write, 0, 1000));
    m_engine->acquire(req("did:agent:b", {"src/b.cpp"}, Mode::Write, 0, 600'000));
    m_engine->acquire(req("did:agent:c", {"src/c.cpp"}, Mode::Write, 0, 600'000));
    m_clock.advance(2000);
    m_engine->expireDue();
    m_engine->releaseLease("did:op:root", m_engine->snapshot().leases[0].leaseId);
    m_clock.advance(1000);
    m_engine->pause("did:op:root", true);
    model.absorb(*frame());

    const auto lanes = model.lanes(LaneBy::Resource, t0, kAll, {});
    QCOMPARE(barsOf(*laneNamed(lanes, "fs:src/a.cpp"), t0),
             QStringList({"held did:agent:a 0..2000 expired"}));
    QCOMPARE(marksOf(*laneNamed(lanes, "fs:src/a.cpp"), t0),
             QStringList({"expiry did:agent:a 2000"}));
    const TimelineModel::Lane *b = laneNamed(lanes, "fs:src/b.cpp");
    QCOMPARE(barsOf(*b, t0), QStringList({"held did:agent:b 0..2000 admin"}));
    QCOMPARE(marksOf(*b, t0).size(), 1);
    QVERIFY(marksOf(*b, t0).front().startsWith("lever"));
    QCOMPARE(barsOf(*laneNamed(lanes, "fs:src/c.cpp"), t0),
             QStringList({"held did:agent:c 0..now open"}));
    // The pause concerns the whole fleet: a fleet mark, in no lane.
    const auto fleet = model.fleetMarks(t0, kAll);
    QCOMPARE(fleet.size(), 1u);
    QCOMPARE(fleet[0]->at, t0 + 3000);
    QVERIFY(fleet[0]->text.contains("paused"));
    m_engine->pause("did:op:root", false);
}

void TestTimeline::aSkippedBurstIsSquaredWithTheSnapshot()
{
    TimelineModel model;
    model.absorb(*frame());
    const std::int64_t t0 = m_clock.nowMs();
    m_engine->acquire(req("did:agent:a", {"src/a.cpp"}, Mode::Write, 0, 600'000));
    m_clock.advance(500);
    m_engine->acquire(req("did:agent:b", {"src/b.cpp"}, Mode::Write, 0, 600'000));
    m_clock.advance(500);
    // The feed skipped the whole burst: the frame carries only the snapshot.
    auto burst = std::make_shared<ConsoleFrame>(*frame());
    burst->eventsSkipped = burst->events.size();
    burst->events.clear();
    model.absorb(*burst);
    auto lanes = model.lanes(LaneBy::Resource, t0, kAll, {});
    QCOMPARE(barsOf(*laneNamed(lanes, "fs:src/a.cpp"), t0),
             QStringList({"held did:agent:a 0..now open"}));
    QCOMPARE(barsOf(*laneNamed(lanes, "fs:src/b.cpp"), t0),
             QStringList({"held did:agent:b 500..now open"}));
    QCOMPARE(model.gaps().size(), 1u);
    QCOMPARE(model.gaps().front(), std::make_pair(t0, t0 + 1000));

    // a's release is skipped too: its bar ends where the snapshot first lacked it.
    m_clock.advance(1000);
    m_engine->release("did:agent:a", {});
    auto again = std::make_shared<ConsoleFrame>(*frame());
    again->eventsSkipped = again->events.size();
    again->events.clear();
    model.absorb(*again);
    lanes = model.lanes(LaneBy::Resource, t0, kAll, {});
    QCOMPARE(barsOf(*laneNamed(lanes, "fs:src/a.cpp"), t0),
             QStringList({"held did:agent:a 0..2000 gone"}));
    QCOMPARE(model.gaps().size(), 2u);
    m_engine->release("did:agent:b", {});
}

void TestTimeline::storedHistoryMergesWithoutDoubles()
{
    const std::int64_t t0 = m_clock.nowMs();
    // Before the console starts: a holds and lets go, b takes the parser and c is refused it.
    m_engine->acquire(req("did:agent:a", {"src/parser.cpp"}, Mode::Write, 0, 600'000));
    m_clock.advance(1000);
    m_engine->release("did:agent:a", {});
    m_clock.advance(1000);
    m_engine->acquire(req("did:agent:b", {"src/parser.cpp"}, Mode::Write, 0, 600'000));
    m_engine->acquire(req("did:agent:c", {"src/parser.cpp"}));
    frame(); // what the console never saw

    TimelineModel model;
    m_clock.advance(1000);
    model.absorb(*frame()); // starts now: b's lease comes from the snapshot
    m_clock.advance(2000);
    m_engine->acquire(req("did:agent:c", {"src/parser.cpp"}));
    m_engine->release("did:agent:b", {});
    model.absorb(*frame());
    QCOMPARE(
        barsOf(*laneNamed(model.lanes(LaneBy::Resource, t0, kAll, {}), "fs:src/parser.cpp"), t0),
        QStringList({"held did:agent:b 2000..5000 released"}));

    // The store's page for the parser covers all of it, overlapping what the live part has.
    LedgerFilter filter;
    filter.resource = "fs:src/parser.cpp";
    std::vector<LedgerEvent> stored;
    for (const LedgerEvent &e : m_listener.events) {
        if (filter.matches(e))
            stored.push_back(e);
    }
    model.absorbHistory(filter, stored);
    const auto lanes = model.lanes(LaneBy::Resource, t0, kAll, {});
    QCOMPARE(
        barsOf(*laneNamed(lanes, "fs:src/parser.cpp"), t0),
        QStringList({"held did:agent:a 0..1000 released", "held did:agent:b 2000..5000 released"}));
    QCOMPARE(marksOf(*laneNamed(lanes, "fs:src/parser.cpp"), t0),
             QStringList({"refusal did:agent:c 2000", "refusal did:agent:c 5000"}));
    // Another filter's history replaces it.
    filter.resource = "fs:src/lexer.cpp";
    model.absorbHistory(filter, {});
    QCOMPARE(
        barsOf(*laneNamed(model.lanes(LaneBy::Resource, t0, kAll, {}), "fs:src/parser.cpp"), t0),
        QStringList({"held did:agent:b 2000..5000 released"}));
}

void TestTimeline::theLivePartKeepsItsBounds()
{
    TimelineModel model;
    model.absorb(*frame());
    const std::int64_t t0 = m_clock.nowMs();
    m_engine->acquire(
        req("did:agent:keep", {"lock:deploy/production"}, Mode::Write, 0, 24 * 3600'000));
    // More ended leases than the bound, one millisecond apart.
    const std::size_t pairs = TimelineModel::kMaxBars + 5'000;
    for (std::size_t i = 0; i < pairs; ++i) {
        m_engine->acquire(req("did:agent:busy", {"src/hot.cpp"}, Mode::Write, 0, 600'000));
        m_clock.advance(1);
        m_engine->release("did:agent:busy", {});
    }
    model.absorb(*frame());
    QVERIFY(model.liveBars() <= TimelineModel::kMaxBars);
    // The newest are kept, and the lease still held, however old.
    const auto lanes = model.lanes(LaneBy::Resource, t0, kAll, {});
    const TimelineModel::Lane *hot = laneNamed(lanes, "fs:src/hot.cpp");
    QVERIFY(hot && hot->bars.size() >= TimelineModel::kMaxBars / 2);
    QCOMPARE(hot->bars.back()->to, m_clock.nowMs());
    QCOMPARE(barsOf(*laneNamed(lanes, "lock:deploy/production"), t0),
             QStringList({"held did:agent:keep 0..now open"}));
    // An hour on, the ended bars are gone; the held lease is not.
    m_clock.advance(TimelineModel::kHorizonMs + 1000);
    model.absorb(*frame());
    QCOMPARE(model.liveBars(), 1u);
    m_engine->release("did:agent:keep", {});
}

void TestTimeline::thePageShowsWhatIsUnderThePointerAndOpensTheLease()
{
    TimelinePage page;
    ConsoleState state;
    auto feed = [&] {
        ConsoleFramePtr f = frame();
        page.absorb(*f);
        state.absorb(f);
        page.showState(state);
    };
    feed();
    contendForTheParser();
    m_engine->acquire(req("did:agent:d", {"src/parser.cpp"}, Mode::Write, 0, 600'000));
    m_clock.advance(1000);
    feed();
    page.resize(1000, 400);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    TimelineView *view = page.view();
    QCOMPARE(view->lanes().size(), 1u);
    QVERIFY(page.summary().contains("1 held now"));

    // Hovering d's lease names it; clicking it asks for it in Holders, live.
    const Bar *held = nullptr;
    for (const Bar *b : view->lanes()[0].bars) {
        if (b->agent == "did:agent:d")
            held = b;
    }
    QVERIFY(held);
    const QRect rect = view->barRect(*held);
    QVERIFY(!rect.isNull());
    const QString tip = view->describeAt(rect.center());
    QVERIFY2(tip.contains("did:agent:d") && tip.contains(QString::fromStdString(held->leaseId)),
             qPrintable(tip));
    QVERIFY(tip.contains("held now"));
    QSignalSpy opened(&page, &TimelinePage::leaseActivated);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(opened.count(), 1);
    QCOMPARE(opened[0][0].toString(), QString::fromStdString(held->leaseId));
    QCOMPARE(opened[0][2].toBool(), true);
    // b's wait is hatched under a's bar: the lower strip at its time tells of the wait.
    for (const Bar *b : view->lanes()[0].bars) {
        if (b->kind == Bar::Kind::Waited)
            QVERIFY(view->describeAt(view->barRect(*b).center()).contains("waited"));
    }
    // A frame taken in between drawings: the lanes (which point into the model) are worked
    // out again when next read, never read stale.
    m_engine->acquire(req("did:agent:e", {"src/lexer.cpp"}, Mode::Write, 0, 600'000));
    page.absorb(*frame());
    QCOMPARE(view->lanes().size(), 2u);
    QCOMPARE(view->lanes()[0].name, "fs:src/lexer.cpp");
    for (const Bar *b : view->lanes()[1].bars) {
        if (b->agent == "did:agent:d")
            held = b; // bars are found anew: the model may have moved them
    }
    QVERIFY(view->describeAt(view->barRect(*held).center()).contains("did:agent:d"));
    m_engine->release("did:agent:e", {});
    // c's refusal is a mark.
    const QPoint refusal = view->markPoint(*view->lanes()[1].marks.front());
    const QString refused = view->describeAt(refusal);
    QVERIFY2(refused.contains("did:agent:c refused: lease_held · acquire, holder did:agent:"),
             qPrintable(refused));

    // The keyboard: + zooms in, Left leaves live time, End follows it again, Enter opens the
    // picked lane's newest lease.
    view->setFocus();
    const std::int64_t span = view->spanMs();
    auto *spanBox = page.findChild<QComboBox *>("timelineSpan");
    QCOMPARE(spanBox->currentData().toLongLong(), span);
    QTest::keyClick(view, Qt::Key_Plus);
    QCOMPARE(view->spanMs(), span / 2);
    QCOMPARE(spanBox->currentIndex(), -1); // 2.5 min is none of its widths
    QTest::keyClick(view, Qt::Key_Minus);
    QCOMPARE(spanBox->currentData().toLongLong(), span);
    QTest::keyClick(view, Qt::Key_Plus);
    QTest::keyClick(view, Qt::Key_Left);
    QVERIFY(!view->following());
    QTest::keyClick(view, Qt::Key_End);
    QVERIFY(view->following());
    QTest::keyClick(view, Qt::Key_Down);
    QCOMPARE(view->currentLane(), 0);
    QTest::keyClick(view, Qt::Key_Down); // lexer.cpp, then parser.cpp
    QCOMPARE(view->currentLane(), 1);
    QTest::keyClick(view, Qt::Key_Return);
    QCOMPARE(opened.count(), 2);
    QCOMPARE(opened[1][0].toString(), QString::fromStdString(held->leaseId));

    // A dark desktop: the lanes are drawn on the palette's own base, the names in its text.
    QPalette dark;
    dark.setColor(QPalette::Base, QColor(30, 30, 30));
    dark.setColor(QPalette::AlternateBase, QColor(40, 40, 40));
    dark.setColor(QPalette::Window, QColor(45, 45, 45));
    dark.setColor(QPalette::Text, QColor(230, 230, 230));
    dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
    page.setPalette(dark);
    const QImage picture = view->viewport()->grab().toImage();
    const int emptyRow = TimelineView::kAxisHeight + 3 * TimelineView::kLaneHeight;
    QVERIFY(picture.pixelColor(TimelineView::kGutter + 10, emptyRow).lightness() < 60);
    const QColor bar = picture.pixelColor(view->barRect(*held).center());
    QVERIFY(bar.lightness() > 60); // a lease still stands out on it
    m_engine->release("did:agent:d", {});
}

void TestTimeline::thePageReadsTheStoreAPageAtATime()
{
    TimelinePage page;
    struct Asked
    {
        std::uint64_t since;
        std::size_t limit;
        LedgerFilter filter;
    };
    std::vector<Asked> asked;
    page.setHistoryReader([&](std::uint64_t since, std::size_t limit, const LedgerFilter &f) {
        asked.push_back({since, limit, f});
        return quint64(asked.size());
    });
    ConsoleState state;
    m_clock.advance(3 * 60'000);
    m_engine->acquire(req("did:agent:a", {"src/parser.cpp"}, Mode::Write, 0, 600'000));
    frame(); // before the console
    ConsoleFramePtr f = frame();
    page.absorb(*f);
    state.absorb(f);
    page.showState(state);
    page.resize(900, 300);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    // Shown with no name: the newest events before the console started, in one read.
    QCOMPARE(asked.size(), 1u);
    QCOMPARE(asked[0].since, 0u);
    QCOMPARE(asked[0].limit, TimelinePage::kFleetHistory);
    QVERIFY(asked[0].filter.resource.empty() && asked[0].filter.actor.empty());
    QCOMPARE(asked[0].filter.fromAt % 60'000, 0);
    QVERIFY(asked[0].filter.fromAt <= page.view()->windowStart());

    // A resource's name: its ledger over the window, a page at a time, until a page is short.
    page.filterEdit()->setText("fs:src/parser.cpp");
    QCOMPARE(asked.size(), 2u);
    QCOMPARE(asked[1].filter.resource, "fs:src/parser.cpp");
    QCOMPARE(asked[1].since, 0u);
    QCOMPARE(asked[1].limit, TimelinePage::kHistoryPage);
    QVERIFY(page.readingHistory());
    page.takeHistory(1, std::make_shared<std::vector<LedgerEvent>>()); // stale: ignored
    QCOMPARE(asked.size(), 2u);
    std::vector<LedgerEvent> full(TimelinePage::kHistoryPage, m_listener.events.front());
    for (std::size_t i = 0; i < full.size(); ++i)
        full[i].seq = i + 1;
    page.takeHistory(2, std::make_shared<std::vector<LedgerEvent>>(full));
    QCOMPARE(asked.size(), 3u);
    QCOMPARE(asked[2].since, TimelinePage::kHistoryPage);
    QCOMPARE(asked[2].filter.resource, "fs:src/parser.cpp");
    page.takeHistory(3, std::make_shared<std::vector<LedgerEvent>>(m_listener.events));
    QCOMPARE(asked.size(), 3u);
    QVERIFY(!page.readingHistory());
    QCOMPARE(page.historyEvents(), TimelinePage::kHistoryPage + m_listener.events.size());
    QVERIFY(page.summary().contains("for fs:src/parser.cpp"));
    // Narrowing the window reads nothing more; widening it past what was read reads again.
    page.view()->setSpanMs(60'000);
    QCOMPARE(asked.size(), 3u);
    page.view()->setSpanMs(30 * 60'000);
    QCOMPARE(asked.size(), 4u);
    QVERIFY(asked[3].filter.fromAt < asked[2].filter.fromAt);
    // A DID by agent.
    page.findChild<QComboBox *>("timelineLanes")->setCurrentIndex(1);
    page.filterEdit()->setText("did:agent:a");
    QCOMPARE(asked.back().filter.actor, "did:agent:a");
    QVERIFY(asked.back().filter.resource.empty());
    m_engine->release("did:agent:a", {});
}

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"

// The agent detail as a function of frames: a real engine with a manual clock makes the
// snapshots and ledger events; what the detail says of one agent is checked against what the
// engine did, then the page's lists, trust line, ledger and levers, and the release requests
// it made or that were made of it.

#include "agentdetail.h"
#include "agentdetailpage.h"
#include "consolestate.h"
#include "framefixture.h"
#include "ledgermodel.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>
#include <QTreeWidget>

using namespace leasehold;
using namespace leasehold::test;

class TestAgentDetail : public QObject, private FrameFixture
{
    Q_OBJECT

private slots:
    void init() { resetFrames(); }
    void cleanup() { finish(); }

    void detailFollowsTheEngine();
    void trustIsRememberedAsItChanges();
    void thePageShowsTheAgentAndPullsItsLevers();
    void releaseRequestsShowWithTheirAgeAndOverdueOnesForceRelease();

private:
    // a holds two files and wants b's lock (holding, it may not park: a want); c waits, parked,
    // for one of a's files.
    void busy()
    {
        m_engine->acquire(req("did:agent:b", {"lock:db"}));
        m_engine->acquire(req("did:agent:a", {"src/z.cpp", "src/a.cpp"}));
        m_engine->acquire(req("did:agent:a", {"lock:db"}, Mode::Write, 60'000));
        QVERIFY(std::holds_alternative<Parked>(
            m_engine->acquire(req("did:agent:c", {"src/a.cpp"}, Mode::Write, 60'000))));
    }
};

void TestAgentDetail::detailFollowsTheEngine()
{
    busy();
    ServiceFacts facts;
    facts.keysByAgent = {{"did:agent:a", 2}};
    ConsoleState state;
    state.absorb(frame(facts));
    const AgentDetail a = AgentDetail::of(state, QStringLiteral("did:agent:a"));
    QVERIFY(a.known);
    QCOMPARE(a.leases.size(), 2u);
    QCOMPARE(a.leases[0].resource, std::string("fs:src/a.cpp")); // by resource
    QCOMPARE(a.leases[1].resource, std::string("fs:src/z.cpp"));
    QCOMPARE(a.waits.size(), 1u);
    QCOMPARE(a.waits[0].resource, std::string("lock:db"));
    QVERIFY(!a.waits[0].parked);
    QCOMPARE(a.waits[0].holder, std::string("did:agent:b"));
    QCOMPARE(a.keys, 2);
    const AgentDetail c = AgentDetail::of(state, QStringLiteral("did:agent:c"));
    QVERIFY(c.leases.empty());
    QCOMPARE(c.waits.size(), 1u);
    QVERIFY(c.waits[0].parked);
    QCOMPARE(c.waits[0].holder, std::string("did:agent:a"));
    QCOMPARE(c.keys, 0);
    QVERIFY(!AgentDetail::of(state, QStringLiteral("did:agent:nobody")).known);
    m_engine->release("did:agent:b", {});
    m_engine->release("did:agent:a", {});
}

void TestAgentDetail::trustIsRememberedAsItChanges()
{
    m_engine->acquire(req("did:agent:a", {"lock:x"}, Mode::Write, 0, 1000));
    ConsoleState state;
    state.absorb(frame());
    const double before = AgentDetail::of(state, QStringLiteral("did:agent:a")).trust;
    state.absorb(frame()); // the same score: not a change
    QCOMPARE(state.trustHistory("did:agent:a").size(), 1u);
    // The lease runs out without a release: trust falls, and the fall is remembered.
    m_clock.advance(1001);
    m_engine->expireDue();
    state.absorb(frame());
    const AgentDetail a = AgentDetail::of(state, QStringLiteral("did:agent:a"));
    QVERIFY(a.trust < before);
    QCOMPARE(a.expiries, 1u);
    QCOMPARE(a.trustHistory.size(), 2u);
    QCOMPARE(a.trustHistory.front().second, before);
    QCOMPARE(a.trustHistory.back().second, a.trust);
    QCOMPARE(a.trustHistory.back().first, state.frame()->snapshot.at);
}

void TestAgentDetail::thePageShowsTheAgentAndPullsItsLevers()
{
    busy();
    ConsoleState state;
    ConsoleFramePtr f = frame();
    state.absorb(f);
    LedgerModel ledger;
    ledger.append(f->events);
    AgentDetailPage page(&ledger);
    page.resize(420, 700);
    page.show();
    page.showState(state);
    page.setAgent(QStringLiteral("did:agent:a"));
    QCOMPARE(page.leases()->topLevelItemCount(), 2);
    QCOMPARE(page.leases()->topLevelItem(0)->text(0), QStringLiteral("fs:src/a.cpp"));
    QCOMPARE(page.waits()->topLevelItemCount(), 1);
    QCOMPARE(page.waits()->topLevelItem(0)->text(2), QStringLiteral("did:agent:b"));
    QVERIFY2(page.facts().contains(QStringLiteral("trust")), qPrintable(page.facts()));
    // Its ledger only: a's grant and its wait, not b's or c's events.
    QAbstractItemModel *rows = page.ledger()->model();
    QVERIFY(rows->rowCount() > 0);
    for (int r = 0; r < rows->rowCount(); ++r)
        QCOMPARE(rows->index(r, LedgerModel::Agent).data().toString(),
                 QStringLiteral("did:agent:a"));
    QVERIFY(rows->rowCount() < ledger.rowCount());
    QCOMPARE(page.sparkline()->points().size(), 1); // one score so far

    // The levers name the agent shown.
    QSignalSpy release(&page, &AgentDetailPage::releaseHolderRequested);
    QSignalSpy suspend(&page, &AgentDetailPage::suspendRequested);
    page.findChild<QPushButton *>(QStringLiteral("agentRelease"))->click();
    page.findChild<QPushButton *>(QStringLiteral("agentSuspend"))->click();
    QCOMPARE(release.count(), 1);
    QCOMPARE(release.last().at(0).toString(), QStringLiteral("did:agent:a"));
    QCOMPARE(suspend.count(), 1);
    QCOMPARE(suspend.last().at(1).toBool(), true);

    // Suspended by the engine: the page says so and offers the way back.
    m_engine->suspend("did:op:test", "did:agent:a", true);
    f = frame();
    state.absorb(f);
    page.showState(state);
    QVERIFY(page.facts().contains(QStringLiteral("SUSPENDED")));
    QCOMPARE(page.findChild<QPushButton *>(QStringLiteral("agentSuspend"))->text(),
             QStringLiteral("Unsuspend"));
    m_engine->suspend("did:op:test", "did:agent:a", false);
    m_engine->release("did:agent:b", {});
    m_engine->release("did:agent:a", {});
}

void TestAgentDetail::releaseRequestsShowWithTheirAgeAndOverdueOnesForceRelease()
{
    busy(); // c waits, parked, for a's src/a.cpp
    ReleaseRequestAsk ask;
    ask.requester = "did:agent:c";
    ask.resource = name("src/a.cpp");
    ask.reason = "my turn";
    ask.urgency = Urgency::High;
    ask.deadlineMs = 10'000; // before a's leases (30 s) expire
    const auto raised = m_engine->raiseReleaseRequest(ask);
    QVERIFY(std::holds_alternative<ReleaseRequestInfo>(raised));
    const std::string leaseId = std::get<ReleaseRequestInfo>(raised).leaseId;
    m_clock.advance(4'000);
    ConsoleState state;
    ConsoleFramePtr f = frame();
    state.absorb(f);
    // In both agents' details, with its age.
    const AgentDetail a = AgentDetail::of(state, QStringLiteral("did:agent:a"));
    const AgentDetail c = AgentDetail::of(state, QStringLiteral("did:agent:c"));
    QCOMPARE(a.requests.size(), 1u);
    QCOMPARE(c.requests.size(), 1u);
    QCOMPARE(a.at - a.requests[0].raisedAt, 4'000);
    LedgerModel ledger;
    AgentDetailPage page(&ledger);
    page.show();
    page.showState(state);
    page.setAgent(QStringLiteral("did:agent:a"));
    QCOMPARE(page.requests()->topLevelItemCount(), 1);
    QTreeWidgetItem *row = page.requests()->topLevelItem(0);
    QCOMPARE(row->text(0), QStringLiteral("fs:src/a.cpp"));
    QCOMPARE(row->text(1), QStringLiteral("of it, by did:agent:c"));
    QCOMPARE(row->text(2), QStringLiteral("high"));
    QCOMPARE(row->text(3), QStringLiteral("4 s"));
    QCOMPARE(row->text(4), QStringLiteral("in 6 s"));
    page.requests()->setCurrentItem(row);
    QVERIFY(!page.forceRelease()->isEnabled()); // not overdue yet
    // The deadline passes unanswered: one click force-releases the lease it names.
    m_clock.advance(6'000);
    m_engine->expireDue();
    state.absorb(frame());
    page.showState(state);
    QCOMPARE(page.requests()->topLevelItemCount(), 1);
    row = page.requests()->topLevelItem(0);
    QCOMPARE(row->text(4), QStringLiteral("OVERDUE"));
    page.requests()->setCurrentItem(row);
    QVERIFY(page.forceRelease()->isEnabled());
    QSignalSpy force(&page, &AgentDetailPage::releaseLeaseRequested);
    page.forceRelease()->click();
    QCOMPARE(force.count(), 1);
    QCOMPARE(force.last().at(0).toString(), QString::fromStdString(leaseId));
    page.setReadOnly(true); // a standby's console pulls no lever
    QVERIFY(!page.forceRelease()->isEnabled());
    m_engine->release("did:agent:b", {});
    m_engine->release("did:agent:a", {});
}

QTEST_MAIN(TestAgentDetail)
#include "tst_agentdetail.moc"

#include "enginetest.h"

#include <QTest>

#include <set>

using namespace leasehold;
using namespace leasehold::test;

class TstLeaseEngine : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void freeSetIsGrantedWithFullShape();
    void secondAgentIsRefusedWithHolderAndTimes();
    void refusalCarriesFirstContendedResource();
    void multiResourceIsAllOrNothing();
    void reacquireExtendsSameLease();
    void readUpgradeGetsNewToken();
    void ttlIsClamped_data();
    void ttlIsClamped();
    void readsShareWritesExclude_data();
    void readsShareWritesExclude();
    void exclusivePatternMakesReadsExclusive();
    void aGlobByExtensionFindsItsNamesAsFilesComeAndGo();
    void ancestorsAndDescendantsConflict();
    void tokensStrictlyIncrease();
    void leaseIdsAreUnguessableAndUnique();
    void releaseEarnsTrust();
    void releaseRefusals_data();
    void releaseRefusals();
    void bareReleaseFreesEverything();
    void expiredLeaseCostsTrust();
    void trustIsClamped();
    void nextDeadlineIsTheEarliestExpiry();
    void renewExtendsOrRefuses();
    void adminReleasesMoveNoTrust();
    void suspendedAgentIsRefused();
    void pausedAdmissionsAreRefused();
    void snapshotIsConsistent();
    void everyDecisionIsAnEvent();
};

void TstLeaseEngine::init()
{
    EngineConfig config;
    config.exclusivePatterns = {"**/*.sqlite"};
    config.trustMin = -12;
    config.trustMax = 2;
    reset(config);
}

void TstLeaseEngine::cleanup()
{
    finish();
}

void TstLeaseEngine::freeSetIsGrantedWithFullShape()
{
    const auto r = m_engine->acquire(req("did:agent:a", {"lock:deploy/production"}));
    QVERIFY(isGrant(r));
    const LeaseInfo &l = grantOf(r).leases.at(0);
    QVERIFY(l.leaseId.rfind("ls_", 0) == 0);
    QCOMPARE(l.resource, std::string("lock:deploy/production"));
    QCOMPARE(l.holder, std::string("did:agent:a"));
    QCOMPARE(l.mode, Mode::Write);
    QCOMPARE(l.token, 1u);
    QCOMPARE(l.grantedAt, m_clock.nowMs());
    QCOMPARE(l.ttlMs, 30'000);
    QCOMPARE(l.expiresAt, m_clock.nowMs() + 30'000);
    QVERIFY(!l.extended);
}

void TstLeaseEngine::secondAgentIsRefusedWithHolderAndTimes()
{
    QVERIFY(isGrant(m_engine->acquire(req("did:agent:release-1", {"lock:deploy/production"}))));
    m_clock.advance(4'000);
    const auto r = m_engine->acquire(req("did:agent:release-2", {"lock:deploy/production"}));
    QVERIFY(std::holds_alternative<Refusal>(r));
    const Refusal &no = refusalOf(r);
    QCOMPARE(no.reason, RefusalReason::LeaseHeld);
    QCOMPARE(no.holder, std::string("did:agent:release-1"));
    QCOMPARE(no.heldForMs, 4'000);
    QCOMPARE(no.expiresInMs, 26'000);
    QCOMPARE(no.resource, std::string("lock:deploy/production"));
    QVERIFY(no.stampede.has_value());
    QCOMPARE(no.stampede->waiters, 0);
    QCOMPARE(no.stampede->waitMs, 25);
}

void TstLeaseEngine::refusalCarriesFirstContendedResource()
{
    QVERIFY(isGrant(m_engine->acquire(req("b", {"src/two.cpp"}))));
    const auto r = m_engine->acquire(req("a", {"src/one.cpp", "src/two.cpp"}));
    QCOMPARE(refusalOf(r).resource, std::string("fs:src/two.cpp"));
}

void TstLeaseEngine::multiResourceIsAllOrNothing()
{
    QVERIFY(isGrant(m_engine->acquire(req("b", {"src/b.cpp"}))));
    const auto r = m_engine->acquire(req("a", {"src/a.cpp", "src/b.cpp", "src/c.cpp"}));
    QVERIFY(std::holds_alternative<Refusal>(r));
    QCOMPARE(m_engine->leaseCount(), 1u);
    QVERIFY(isGrant(m_engine->acquire(req("c", {"src/a.cpp", "src/c.cpp"}))));
    const auto both = m_engine->acquire(req("d", {"lock:x", "lock:y"}));
    QCOMPARE(grantOf(both).leases.size(), 2u);
}

void TstLeaseEngine::reacquireExtendsSameLease()
{
    const auto first = m_engine->acquire(req("a", {"src/a.cpp"}));
    m_clock.advance(10'000);
    const auto again = m_engine->acquire(req("a", {"src/a.cpp"}, Mode::Write, 0, 60'000));
    const LeaseInfo &l1 = grantOf(first).leases[0];
    const LeaseInfo &l2 = grantOf(again).leases[0];
    QCOMPARE(l2.leaseId, l1.leaseId);
    QCOMPARE(l2.token, l1.token);
    QCOMPARE(l2.grantedAt, l1.grantedAt);
    QCOMPARE(l2.expiresAt, m_clock.nowMs() + 60'000);
    QVERIFY(l2.extended);
    QCOMPARE(m_engine->leaseCount(), 1u);
    // A read request on a held write keeps the write.
    const auto read = m_engine->acquire(req("a", {"src/a.cpp"}, Mode::Read));
    QCOMPARE(grantOf(read).leases[0].mode, Mode::Write);
}

void TstLeaseEngine::readUpgradeGetsNewToken()
{
    const auto read = m_engine->acquire(req("a", {"src/a.cpp"}, Mode::Read));
    const auto write = m_engine->acquire(req("a", {"src/a.cpp"}, Mode::Write));
    QCOMPARE(grantOf(write).leases[0].leaseId, grantOf(read).leases[0].leaseId);
    QCOMPARE(grantOf(write).leases[0].mode, Mode::Write);
    QVERIFY(grantOf(write).leases[0].token > grantOf(read).leases[0].token);
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"src/a.cpp"}, Mode::Read))));
    // With another reader present the upgrade is refused.
    QVERIFY(isGrant(m_engine->acquire(req("c", {"src/r.cpp"}, Mode::Read))));
    QVERIFY(isGrant(m_engine->acquire(req("d", {"src/r.cpp"}, Mode::Read))));
    const auto up = m_engine->acquire(req("c", {"src/r.cpp"}, Mode::Write));
    QCOMPARE(refusalOf(up).holder, std::string("d"));
}

void TstLeaseEngine::ttlIsClamped_data()
{
    QTest::addColumn<qint64>("asked");
    QTest::addColumn<qint64>("granted");
    QTest::newRow("default") << qint64(-1) << qint64(30'000);
    QTest::newRow("below min") << qint64(10) << qint64(1'000);
    QTest::newRow("zero") << qint64(0) << qint64(1'000);
    QTest::newRow("in range") << qint64(120'000) << qint64(120'000);
    QTest::newRow("above max") << qint64(90'000'000) << qint64(3'600'000);
}

void TstLeaseEngine::ttlIsClamped()
{
    QFETCH(qint64, asked);
    QFETCH(qint64, granted);
    std::optional<std::int64_t> ttl;
    if (asked >= 0)
        ttl = asked;
    const auto r = m_engine->acquire(req("a", {"lock:t"}, Mode::Write, 0, ttl));
    QCOMPARE(grantOf(r).leases[0].ttlMs, granted);
}

void TstLeaseEngine::readsShareWritesExclude_data()
{
    QTest::addColumn<int>("held");
    QTest::addColumn<int>("asked");
    QTest::addColumn<bool>("granted");
    const int r = int(Mode::Read), w = int(Mode::Write), d = int(Mode::Delete);
    QTest::newRow("read+read") << r << r << true;
    QTest::newRow("read+write") << r << w << false;
    QTest::newRow("write+read") << w << r << false;
    QTest::newRow("write+write") << w << w << false;
    QTest::newRow("delete+read") << d << r << false;
    QTest::newRow("read+delete") << r << d << false;
}

void TstLeaseEngine::readsShareWritesExclude()
{
    QFETCH(int, held);
    QFETCH(int, asked);
    QFETCH(bool, granted);
    QVERIFY(isGrant(m_engine->acquire(req("a", {"src/x"}, Mode(held)))));
    QCOMPARE(isGrant(m_engine->acquire(req("b", {"src/x"}, Mode(asked)))), granted);
}

void TstLeaseEngine::exclusivePatternMakesReadsExclusive()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"data/app.sqlite"}, Mode::Read))));
    const auto r = m_engine->acquire(req("b", {"data/app.sqlite"}, Mode::Read));
    QCOMPARE(refusalOf(r).holder, std::string("a"));
    // A shared read on the folder still collides with the exclusive read below it.
    QVERIFY(!isGrant(m_engine->acquire(req("c", {"data"}, Mode::Read))));
    QVERIFY(isGrant(m_engine->acquire(req("c", {"data/notes.txt"}, Mode::Read))));
}

// A glob that fixes an extension (`*.ts`) reads only the children with it: the trie's index of
// them follows names as they come and go, the removal of emptied nodes (past the idle cap) too.
void TstLeaseEngine::aGlobByExtensionFindsItsNamesAsFilesComeAndGo()
{
    auto file = [](int i) { return "big/f" + std::to_string(i) + (i % 3 ? ".cpp" : ".d.ts"); };
    for (int i = 0; i < 3000; ++i)
        QVERIFY(isGrant(m_engine->acquire(req("a", {file(i)}))));
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"big/*.ts"}))).holder, std::string("a"));
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"big/f3*.d.ts"}))).holder, std::string("a"));
    QVERIFY(isGrant(m_engine->acquire(req("b", {"big/*.h"}))));
    QVERIFY(isGrant(m_engine->acquire(req("b", {"big/*.ts?"}))));
    // All but one .ts file released: their nodes leave the trie, and its index with them.
    std::vector<ResourceName> gone;
    for (int i = 0; i < 3000; ++i)
        if (i != 2997)
            gone.push_back(name(file(i)));
    m_engine->release("a", gone);
    m_engine->checkInvariants();
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"big/*.ts"}))).heldResource,
             std::string("fs:big/f2997.d.ts"));
    m_engine->release("a", {name(file(2997))});
    QVERIFY(isGrant(m_engine->acquire(req("b", {"big/*.ts"}))));
}

void TstLeaseEngine::ancestorsAndDescendantsConflict()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"fs:src"}))));
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"src/app.cpp"}))).holder, std::string("a"));
    QVERIFY(isGrant(m_engine->acquire(req("b", {"srcx/app.cpp"}))));
    QVERIFY(isGrant(m_engine->acquire(req("c", {"lock:deploy/production"}))));
    QCOMPARE(refusalOf(m_engine->acquire(req("d", {"lock:deploy"}))).holder, std::string("c"));
    QCOMPARE(refusalOf(m_engine->acquire(req("d", {"."}))).reason, RefusalReason::LeaseHeld);
    // An agent never conflicts with itself.
    QVERIFY(isGrant(m_engine->acquire(req("a", {"src/app.cpp"}))));
}

void TstLeaseEngine::tokensStrictlyIncrease()
{
    std::uint64_t last = 0;
    for (int i = 0; i < 50; ++i) {
        const auto r =
            m_engine->acquire(req("a" + std::to_string(i), {"lock:t" + std::to_string(i)}));
        const std::uint64_t token = grantOf(r).leases[0].token;
        QVERIFY(token > last);
        last = token;
        if (i % 3 == 0)
            m_engine->release("a" + std::to_string(i), {});
    }
    QVERIFY(m_engine->nextToken() > last);
}

void TstLeaseEngine::leaseIdsAreUnguessableAndUnique()
{
    IdGenerator a(IdGenerator::Key{1, 2});
    IdGenerator b(IdGenerator::Key{1, 3});
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::string id = a.next("ls_");
        QCOMPARE(id.size(), 35u);
        QVERIFY(seen.insert(id).second);
    }
    QVERIFY(IdGenerator(IdGenerator::Key{1, 2}).next("x") != b.next("x"));
    QVERIFY(IdGenerator().next("") != IdGenerator().next(""));
    // Published SipHash-2-4 vectors use byte strings; check the keyed function differs by key.
    QVERIFY(IdGenerator::sipHash24({0, 0}, 1) != IdGenerator::sipHash24({0, 1}, 1));
}

void TstLeaseEngine::releaseEarnsTrust()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:x"}))));
    const auto r = m_engine->release("a", {name("lock:x")});
    QVERIFY(std::holds_alternative<Released>(r));
    QCOMPARE(std::get<Released>(r).released.size(), 1u);
    QCOMPARE(std::get<Released>(r).trust, 0.5);
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:x"}))));
    QCOMPARE(m_listener.count(EventKind::Released), 1);
}

void TstLeaseEngine::releaseRefusals_data()
{
    QTest::addColumn<QString>("actor");
    QTest::addColumn<QString>("resource");
    QTest::addColumn<bool>("useWrongId");
    QTest::addColumn<int>("reason");
    QTest::newRow("not held by anyone") << "a"
                                        << "lock:free" << false << int(RefusalReason::NotHeld);
    QTest::newRow("held by another") << "b"
                                     << "lock:x" << false << int(RefusalReason::NotHeld);
    QTest::newRow("stale id") << "a"
                              << "lock:x" << true << int(RefusalReason::StaleLease);
    QTest::newRow("id but not held") << "b"
                                     << "lock:x" << true << int(RefusalReason::StaleLease);
}

void TstLeaseEngine::releaseRefusals()
{
    QFETCH(QString, actor);
    QFETCH(QString, resource);
    QFETCH(bool, useWrongId);
    QFETCH(int, reason);
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:x"}))));
    const auto r = m_engine->release(actor.toStdString(), {name(resource.toStdString())},
                                     useWrongId ? "ls_00000000000000000000000000000000" : "");
    QVERIFY(std::holds_alternative<Refusal>(r));
    QCOMPARE(int(std::get<Refusal>(r).reason), reason);
    QCOMPARE(m_engine->leaseCount(), 1u);
}

void TstLeaseEngine::bareReleaseFreesEverything()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:x", "src/a", "src/b"}))));
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:y"}))));
    const auto r = m_engine->release("a", {});
    QCOMPARE(std::get<Released>(r).released.size(), 3u);
    QCOMPARE(m_engine->leaseCount(), 1u);
    // Release by leaseId alone.
    const std::string id = m_engine->snapshot().leases.at(0).leaseId;
    QVERIFY(std::holds_alternative<Released>(m_engine->release("b", {}, id)));
    QCOMPARE(m_engine->leaseCount(), 0u);
}

void TstLeaseEngine::expiredLeaseCostsTrust()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:x"}, Mode::Write, 0, 5'000))));
    m_clock.advance(4'999);
    m_engine->expireDue();
    QCOMPARE(m_engine->leaseCount(), 1u);
    m_clock.advance(1);
    m_engine->expireDue();
    QCOMPARE(m_engine->leaseCount(), 0u);
    const Snapshot s = m_engine->snapshot();
    QCOMPARE(s.trust.at(0).score, -5.0);
    QCOMPARE(s.trust.at(0).expiries, 1u);
    QCOMPARE(m_listener.count(EventKind::Expired), 1);
    QCOMPARE(std::string(eventKindName(EventKind::Expired)),
             std::string("coordination.lease.expired"));
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:x"}))));
}

void TstLeaseEngine::trustIsClamped()
{
    for (int i = 0; i < 10; ++i) {
        QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:x"}))));
        m_engine->release("a", {});
    }
    QCOMPARE(m_engine->snapshot().trust.at(0).score, 2.0);
    for (int i = 0; i < 5; ++i) {
        QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:x"}, Mode::Write, 0, 1'000))));
        m_clock.advance(1'000);
        m_engine->expireDue();
    }
    QCOMPARE(m_engine->snapshot().trust.at(0).score, -12.0);
}

void TstLeaseEngine::nextDeadlineIsTheEarliestExpiry()
{
    QVERIFY(!m_engine->nextDeadline());
    const TimeMs t0 = m_clock.nowMs();
    m_engine->acquire(req("a", {"lock:a"}, Mode::Write, 0, 9'000));
    m_engine->acquire(req("b", {"lock:b"}, Mode::Write, 0, 3'000));
    m_engine->acquire(req("c", {"lock:c"}, Mode::Write, 0, 6'000));
    QCOMPARE(*m_engine->nextDeadline(), t0 + 3'000);
    m_engine->release("b", {});
    QCOMPARE(*m_engine->nextDeadline(), t0 + 6'000);
    m_engine->acquire(req("c", {"lock:c"}, Mode::Write, 0, 20'000)); // extend moves it
    QCOMPARE(*m_engine->nextDeadline(), t0 + 9'000);
}

void TstLeaseEngine::renewExtendsOrRefuses()
{
    const auto g = m_engine->acquire(req("a", {"lock:x"}));
    const std::string id = grantOf(g).leases[0].leaseId;
    m_clock.advance(20'000);
    const auto ok = m_engine->renew("a", name("lock:x"), id, 40'000);
    QCOMPARE(std::get<LeaseInfo>(ok).expiresAt, m_clock.nowMs() + 40'000);
    QCOMPARE(std::get<Refusal>(m_engine->renew("a", name("lock:x"), "ls_bad")).reason,
             RefusalReason::StaleLease);
    QCOMPARE(std::get<Refusal>(m_engine->renew("b", name("lock:x"), {})).reason,
             RefusalReason::NotHeld);
    // Without a TTL the lease keeps the one it has: 40 s from now, not the default 30 s.
    m_clock.advance(10'000);
    const auto kept = m_engine->renew("a", name("lock:x"), id);
    QCOMPARE(std::get<LeaseInfo>(kept).ttlMs, std::int64_t(40'000));
    QCOMPARE(std::get<LeaseInfo>(kept).expiresAt, m_clock.nowMs() + 40'000);
    m_clock.advance(40'000);
    m_engine->expireDue();
    QCOMPARE(std::get<Refusal>(m_engine->renew("a", name("lock:x"), id)).reason,
             RefusalReason::StaleLease);
}

void TstLeaseEngine::adminReleasesMoveNoTrust()
{
    m_engine->acquire(req("a", {"lock:1", "lock:2"}));
    m_engine->acquire(req("b", {"lock:3"}));
    const auto c = m_engine->acquire(req("c", {"lock:4"}));
    QCOMPARE(m_engine->releaseHolder("did:op:alice", "a"), 2);
    QVERIFY(m_engine->releaseLease("did:op:alice", grantOf(c).leases[0].leaseId));
    QVERIFY(!m_engine->releaseLease("did:op:alice", "ls_nope"));
    QCOMPARE(m_engine->releaseAll("did:op:bob"), 1);
    QCOMPARE(m_engine->leaseCount(), 0u);
    for (const TrustInfo &t : m_engine->snapshot().trust)
        QCOMPARE(t.score, 0.0);
    QCOMPARE(m_listener.count(EventKind::AdminReleaseHolder), 1);
    QCOMPARE(m_listener.count(EventKind::AdminReleaseAll), 1);
    bool operatorNamed = false;
    for (const LedgerEvent &e : m_listener.events)
        operatorNamed |= e.kind == EventKind::AdminReleaseAll && e.actorDid == "did:op:bob";
    QVERIFY(operatorNamed);
}

void TstLeaseEngine::suspendedAgentIsRefused()
{
    m_engine->suspend("did:op:alice", "a", true);
    QCOMPARE(refusalOf(m_engine->acquire(req("a", {"lock:x"}))).reason, RefusalReason::Suspended);
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:x"}))));
    m_engine->suspend("did:op:alice", "a", false);
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:y"}))));
    QCOMPARE(m_listener.count(EventKind::AdminSuspend), 2);
}

void TstLeaseEngine::pausedAdmissionsAreRefused()
{
    m_engine->acquire(req("a", {"lock:x"}));
    m_engine->pause("did:op:alice", true);
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"lock:y"}))).reason, RefusalReason::Paused);
    // Holders can still let go while paused.
    QVERIFY(std::holds_alternative<Released>(m_engine->release("a", {})));
    m_engine->pause("did:op:alice", false);
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:y"}))));
}

void TstLeaseEngine::snapshotIsConsistent()
{
    m_engine->acquire(req("a", {"lock:x", "src/a"}));
    m_engine->acquire(req("b", {"lock:x"}));
    m_engine->setPresence("a", 2, ViaSet(Via::Mcp) | ViaSet(Via::Hook));
    const Snapshot s = m_engine->snapshot();
    QCOMPARE(s.at, m_clock.nowMs());
    QCOMPARE(s.leases.size(), 2u);
    QVERIFY(s.leases[0].token < s.leases[1].token);
    QCOMPARE(s.waiters.size(), 1u); // b's refusal is a want
    QCOMPARE(s.waiters[0].actorDid, std::string("b"));
    QVERIFY(!s.waiters[0].parked);
    QCOMPARE(s.waiters[0].holder, std::string("a"));
    QCOMPARE(s.agents.size(), 2u);
    QCOMPARE(s.agents[0].liveSessions, 2);
    QCOMPARE(int(s.agents[0].via), int(Via::Mcp) | int(Via::Hook));
    QCOMPARE(viaList(s.agents[0].via), std::string("mcp, hook"));
    QCOMPARE(s.agents[0].leases, 2);
    QCOMPARE(s.counters.grants, 2u);
    QCOMPARE(s.counters.refusals[size_t(RefusalReason::LeaseHeld)], 1u);
}

void TstLeaseEngine::everyDecisionIsAnEvent()
{
    m_engine->acquire(req("a", {"lock:x"}));
    m_engine->acquire(req("b", {"lock:x"}));
    m_engine->release("a", {});
    m_engine->pause("op", true);
    QCOMPARE(m_listener.events.size(), 4u);
    for (std::size_t i = 0; i < m_listener.events.size(); ++i)
        QCOMPARE(m_listener.events[i].seq, i + 1);
    QCOMPARE(m_listener.events[1].kind, EventKind::Refused);
    QCOMPARE(m_listener.events[1].reason, std::string("lease_held"));
    QCOMPARE(m_listener.events[0].token, 1u);
}

QTEST_APPLESS_MAIN(TstLeaseEngine)
#include "tst_leaseengine.moc"

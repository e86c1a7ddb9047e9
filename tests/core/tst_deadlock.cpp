#include "enginetest.h"

#include <QTest>

#include <random>

using namespace leasehold;
using namespace leasehold::test;

class TstDeadlock : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void twoAgentsWaitingOnEachOtherAreRefused();
    void parkedWaiterClosesACycle();
    void cyclesOfAnyLengthAreRefused_data();
    void cyclesOfAnyLengthAreRefused();
    void acyclicWaitGraphsAreNeverDeadlocks();
    void queueViewListsDeadlockPairs();
    void deadlockNamesTheCycleHoldersLease();
    void queueViewListsLiveCyclesOfAnyLength();
};

void TstDeadlock::init()
{
    reset();
}

void TstDeadlock::cleanup()
{
    finish();
}

void TstDeadlock::twoAgentsWaitingOnEachOtherAreRefused()
{
    QVERIFY(isGrant(m_engine->acquire(req("A", {"src/a.cpp"}))));
    QVERIFY(isGrant(m_engine->acquire(req("B", {"src/b.cpp"}))));
    // A asks for B's file: refused, and A now wants it.
    QCOMPARE(refusalOf(m_engine->acquire(req("A", {"src/b.cpp"}))).reason,
             RefusalReason::LeaseHeld);
    // B asking for A's file would close the cycle.
    const Refusal r = refusalOf(m_engine->acquire(req("B", {"src/a.cpp"})));
    QCOMPARE(r.reason, RefusalReason::Deadlock);
    QCOMPARE(r.holder, std::string("A"));
    QCOMPARE(r.waitingOn, std::string("fs:src/b.cpp"));
    QVERIFY(r.cycle == (std::vector<CycleStep>{{"B", "fs:src/a.cpp"}, {"A", "fs:src/b.cpp"}}));
    QCOMPARE(r.resource, std::string("fs:src/a.cpp"));
    QCOMPARE(m_engine->counters().refusals[size_t(RefusalReason::Deadlock)], 1u);
    // A deadlock refusal records no want: B does not show in the queue for src/a.cpp.
    for (const WaiterInfo &w : m_engine->waitView().waiters)
        QVERIFY(w.actorDid != "B");
}

void TstDeadlock::parkedWaiterClosesACycle()
{
    // C parks on B's resource; B holds it and asks for C's... C holds nothing (it may park),
    // so build: A holds x; C parks on x; B holds y and A wants y; C is behind A, not a cycle.
    QVERIFY(isGrant(m_engine->acquire(req("A", {"lock:x"}))));
    QVERIFY(isGrant(m_engine->acquire(req("B", {"lock:y"}))));
    const auto parked = m_engine->acquire(req("C", {"lock:y"}, Mode::Write, 60'000));
    QVERIFY(std::holds_alternative<Parked>(parked));
    // B asks for x held by A: A waits for nothing, so that is plain contention.
    QCOMPARE(refusalOf(m_engine->acquire(req("B", {"lock:x"}))).reason, RefusalReason::LeaseHeld);
    // A asks for y: B holds y and B wants x, held by A: a cycle A -> B -> A.
    const Refusal r = refusalOf(m_engine->acquire(req("A", {"lock:y"})));
    QCOMPARE(r.reason, RefusalReason::Deadlock);
    QCOMPARE(r.holder, std::string("B"));
    QCOMPARE(r.waitingOn, std::string("lock:x"));
}

void TstDeadlock::cyclesOfAnyLengthAreRefused_data()
{
    QTest::addColumn<int>("length");
    for (int n : {2, 3, 4, 5, 8, 13, 21, 34, 50})
        QTest::addRow("cycle of %d", n) << n;
}

void TstDeadlock::cyclesOfAnyLengthAreRefused()
{
    QFETCH(int, length);
    // Agent i holds r_i and wants r_{i+1}; the last one asking for r_0 closes the cycle.
    auto agent = [](int i) { return "did:agent:" + std::to_string(i); };
    auto res = [](int i) { return "lock:r" + std::to_string(i); };
    for (int i = 0; i < length; ++i)
        QVERIFY(isGrant(m_engine->acquire(req(agent(i), {res(i)}))));
    for (int i = 0; i < length - 1; ++i)
        QCOMPARE(refusalOf(m_engine->acquire(req(agent(i), {res(i + 1)}))).reason,
                 RefusalReason::LeaseHeld);
    const Refusal r = refusalOf(m_engine->acquire(req(agent(length - 1), {res(0)})));
    QCOMPARE(r.reason, RefusalReason::Deadlock);
    QCOMPARE(r.holder, agent(0));
    QCOMPARE(r.waitingOn, res(1));
    QCOMPARE(int(r.cycle.size()), length);
    QCOMPARE(r.cycle.front().agent, agent(length - 1));
    QCOMPARE(r.cycle.front().resource, res(0));
    for (int i = 1; i < length; ++i) {
        QCOMPARE(r.cycle[std::size_t(i)].agent, agent(i - 1));
        QCOMPARE(r.cycle[std::size_t(i)].resource, res(i));
    }
}

void TstDeadlock::acyclicWaitGraphsAreNeverDeadlocks()
{
    // Random DAGs: agents are ordered; an agent only ever waits on agents after it.
    const unsigned seed = 20261130;
    std::mt19937 rng(seed);
    for (int graph = 0; graph < 300; ++graph) {
        init();
        const int n = 3 + int(rng() % 30);
        auto agent = [](int i) { return "a" + std::to_string(i); };
        auto res = [](int i) { return "lock:g/" + std::to_string(i); };
        for (int i = 0; i < n; ++i)
            QVERIFY(isGrant(m_engine->acquire(req(agent(i), {res(i)}))));
        const int edges = int(rng() % (3 * n));
        for (int e = 0; e < edges; ++e) {
            int a = int(rng() % n), b = int(rng() % n);
            if (a == b)
                continue;
            if (a > b)
                std::swap(a, b);
            const auto r = m_engine->acquire(req(agent(a), {res(b)}));
            QVERIFY2(refusalOf(r).reason == RefusalReason::LeaseHeld,
                     qPrintable(QString("graph %1 seed %2").arg(graph).arg(seed)));
        }
        m_engine->checkInvariants();
    }
}

void TstDeadlock::queueViewListsDeadlockPairs()
{
    // A pair can form through a grant rather than a request: A wants y while C holds it; B
    // wants x, held by A; C lets go of y and B takes it. Now each waits for the other.
    m_engine->acquire(req("A", {"lock:x"}));
    m_engine->acquire(req("C", {"lock:y"}));
    QCOMPARE(refusalOf(m_engine->acquire(req("A", {"lock:y"}))).reason, RefusalReason::LeaseHeld);
    QCOMPARE(refusalOf(m_engine->acquire(req("B", {"lock:x"}))).reason, RefusalReason::LeaseHeld);
    QVERIFY(m_engine->waitView().deadlocks.empty());
    m_engine->release("C", {});
    QVERIFY(isGrant(m_engine->acquire(req("B", {"lock:y"}))));
    const WaitView v = m_engine->waitView();
    QCOMPARE(v.deadlocks.size(), 1u);
    // A waits for y (held by B), B for x (held by A); the cycle starts at the smaller DID.
    QVERIFY(v.deadlocks[0].steps == (std::vector<CycleStep>{{"A", "lock:y"}, {"B", "lock:x"}}));
    // The pair dissolves when the wants lapse.
    m_clock.advance(5'000);
    m_engine->expireDue();
    QVERIFY(m_engine->waitView().deadlocks.empty());
}

void TstDeadlock::deadlockNamesTheCycleHoldersLease()
{
    // R asks for {x, y}: x is held by C (plain contention, first in the request), y by B, who
    // waits for what R holds. The refusal is the deadlock through y, and the times it gives are
    // those of B's lease on y, not of C's on x.
    QVERIFY(isGrant(m_engine->acquire(req("C", {"lock:x"}))));
    m_clock.advance(5'000);
    QVERIFY(isGrant(m_engine->acquire(req("B", {"lock:y"}, Mode::Write, 0, 60'000))));
    QVERIFY(isGrant(m_engine->acquire(req("R", {"lock:r"}))));
    QCOMPARE(refusalOf(m_engine->acquire(req("B", {"lock:r"}))).reason, RefusalReason::LeaseHeld);
    m_clock.advance(2'000);
    const Refusal r = refusalOf(m_engine->acquire(req("R", {"lock:x", "lock:y"})));
    QCOMPARE(r.reason, RefusalReason::Deadlock);
    QCOMPARE(r.holder, std::string("B"));
    QCOMPARE(r.resource, std::string("lock:y"));
    QCOMPARE(r.heldForMs, 2'000);
    QCOMPARE(r.expiresInMs, 58'000);
    QVERIFY(r.cycle == (std::vector<CycleStep>{{"R", "lock:y"}, {"B", "lock:r"}}));
}

void TstDeadlock::queueViewListsLiveCyclesOfAnyLength()
{
    // A cycle of three closed by a grant (a request that closed it would be refused):
    // A wants b (B's), B wants c (D's for now), C wants a (A's); D lets go and C takes c.
    m_engine->acquire(req("A", {"lock:a"}));
    m_engine->acquire(req("B", {"lock:b"}));
    m_engine->acquire(req("D", {"lock:c"}));
    m_engine->acquire(req("A", {"lock:b"}));
    m_engine->acquire(req("B", {"lock:c"}));
    m_engine->acquire(req("C", {"lock:a"}));
    QVERIFY(m_engine->waitView().deadlocks.empty());
    m_engine->release("D", {});
    QVERIFY(isGrant(m_engine->acquire(req("C", {"lock:c"}))));
    // A pair elsewhere at the same time: E and F, each waiting for the other.
    m_engine->acquire(req("E", {"lock:e"}));
    m_engine->acquire(req("G", {"lock:f"}));
    m_engine->acquire(req("E", {"lock:f"}));
    m_engine->acquire(req("F", {"lock:e"}));
    m_engine->release("G", {});
    QVERIFY(isGrant(m_engine->acquire(req("F", {"lock:f"}))));

    const WaitView v = m_engine->waitView();
    QCOMPARE(v.deadlocks.size(), 2u);
    QVERIFY(v.deadlocks[0].steps ==
            (std::vector<CycleStep>{{"A", "lock:b"}, {"B", "lock:c"}, {"C", "lock:a"}}));
    QVERIFY(v.deadlocks[1].steps == (std::vector<CycleStep>{{"E", "lock:f"}, {"F", "lock:e"}}));
    QCOMPARE(m_engine->snapshot().deadlocks.size(), 2u);
    // The cycles dissolve when the wants lapse.
    m_clock.advance(5'000);
    m_engine->expireDue();
    QVERIFY(m_engine->waitView().deadlocks.empty());
}

QTEST_APPLESS_MAIN(TstDeadlock)
#include "tst_deadlock.moc"

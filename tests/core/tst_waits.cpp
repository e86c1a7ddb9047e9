#include "enginetest.h"

#include <QTest>

using namespace leasehold;
using namespace leasehold::test;

class TstWaits : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void threeWaitersAreGrantedInArrivalOrder();
    void consecutiveReadWaitersAreGrantedTogether();
    void writerAtTheHeadIsNotStarvedByLaterReaders();
    void multiResourceWaiterNeedsTheWholeSet();
    void waiterGrantHasTheImmediateShape();
    void deadlineReturnsTheCurrentHolder();
    void expiryWakesWaiterAtOnce();
    void cancellationTakesNothing();
    void grantToAGoneClientIsReleased();
    void holderMayNotWait();
    void holderWaitsWhenItAsksToWaitWhileHolding();
    void holdersWaitingOnEachOtherAreRefusedAsDeadlock();
    void holdingWaiterQueuesInArrivalOrderAndCancelsCleanly();
    void waitIsCappedAtMaxWait();
    void wantsLapseAndShowInQueue();
    void stampedeBackoffGrowsAndCaps();
    void adminLeversEndWaits();
    void hooksFireOncePerWaitAndMayThrow();
};

void TstWaits::init()
{
    reset();
}

void TstWaits::cleanup()
{
    finish();
}

void TstWaits::threeWaitersAreGrantedInArrivalOrder()
{
    QVERIFY(isGrant(m_engine->acquire(req("h", {"src/a.cpp"}))));
    const auto w1 = m_engine->acquire(req("w1", {"src/a.cpp"}, Mode::Write, 60'000));
    const auto w2 = m_engine->acquire(req("w2", {"src/a.cpp"}, Mode::Write, 60'000));
    const auto w3 = m_engine->acquire(req("w3", {"src/a.cpp"}, Mode::Write, 60'000));
    QCOMPARE(m_engine->parkedCount(), 3u);
    // A newcomer queues behind them rather than barging in.
    QVERIFY(refusalOf(m_engine->acquire(req("x", {"src/a.cpp"}))).reason ==
            RefusalReason::LeaseHeld);

    m_engine->release("h", {});
    QVERIFY(m_listener.outcomeOf(waitIdOf(w1)));
    QVERIFY(!m_listener.outcomeOf(waitIdOf(w2)));
    m_engine->release("w1", {});
    QVERIFY(m_listener.outcomeOf(waitIdOf(w2)));
    QVERIFY(!m_listener.outcomeOf(waitIdOf(w3)));
    m_engine->release("w2", {});
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(w3))));
    QCOMPARE(m_engine->snapshot().leases.at(0).holder, std::string("w3"));
}

void TstWaits::consecutiveReadWaitersAreGrantedTogether()
{
    m_engine->acquire(req("h", {"src/a.cpp"}));
    const auto r1 = m_engine->acquire(req("r1", {"src/a.cpp"}, Mode::Read, 60'000));
    const auto r2 = m_engine->acquire(req("r2", {"src/a.cpp"}, Mode::Read, 60'000));
    const auto w = m_engine->acquire(req("w", {"src/a.cpp"}, Mode::Write, 60'000));
    const auto r3 = m_engine->acquire(req("r3", {"src/a.cpp"}, Mode::Read, 60'000));
    m_engine->release("h", {});
    QVERIFY(m_listener.outcomeOf(waitIdOf(r1)));
    QVERIFY(m_listener.outcomeOf(waitIdOf(r2)));
    QVERIFY(!m_listener.outcomeOf(waitIdOf(w)));
    QVERIFY(!m_listener.outcomeOf(waitIdOf(r3)));
    QCOMPARE(m_engine->leaseCount(), 2u);
}

void TstWaits::writerAtTheHeadIsNotStarvedByLaterReaders()
{
    m_engine->acquire(req("r0", {"src/a.cpp"}, Mode::Read));
    const auto w = m_engine->acquire(req("w", {"src/a.cpp"}, Mode::Write, 60'000));
    QVERIFY(std::holds_alternative<Parked>(w));
    // The resource is only read-held, but a reader arriving now queues behind the writer.
    const auto late = m_engine->acquire(req("r1", {"src/a.cpp"}, Mode::Read));
    QVERIFY(refusalOf(late).queued);
    QCOMPARE(refusalOf(late).holder, std::string("w"));
    m_engine->release("r0", {});
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(w))));
}

void TstWaits::multiResourceWaiterNeedsTheWholeSet()
{
    m_engine->acquire(req("h1", {"lock:a"}));
    m_engine->acquire(req("h2", {"lock:b"}));
    const auto w = m_engine->acquire(req("w", {"lock:a", "lock:b"}, Mode::Write, 60'000));
    m_engine->release("h1", {});
    QVERIFY(!m_listener.outcomeOf(waitIdOf(w)));
    QCOMPARE(m_engine->leaseCount(), 1u); // nothing taken in part
    m_engine->release("h2", {});
    const WaitOutcome *o = m_listener.outcomeOf(waitIdOf(w));
    QVERIFY(o);
    QCOMPARE(std::get<Grant>(*o).leases.size(), 2u);
}

void TstWaits::waiterGrantHasTheImmediateShape()
{
    m_engine->acquire(req("h", {"lock:x"}));
    m_clock.advance(1'000);
    const auto w = m_engine->acquire(req("w", {"lock:x"}, Mode::Read, 60'000, 12'000));
    m_clock.advance(2'000);
    m_engine->release("h", {});
    const Grant &g = std::get<Grant>(*m_listener.outcomeOf(waitIdOf(w)));
    QCOMPARE(g.waitedMs, 2'000);
    const LeaseInfo &l = g.leases.at(0);
    QCOMPARE(l.holder, std::string("w"));
    QCOMPARE(l.mode, Mode::Read);
    QCOMPARE(l.ttlMs, 12'000);
    QCOMPARE(l.grantedAt, m_clock.nowMs());
    QCOMPARE(l.expiresAt, m_clock.nowMs() + 12'000);
    QCOMPARE(l.token, 2u);
    // The ledger tells the same: the grant after the wait carries how long it waited, the
    // holder's grant (no wait) carries nothing.
    const LedgerEvent &granted = m_listener.events.back();
    QCOMPARE(granted.kind, EventKind::Granted);
    QCOMPARE(granted.leaseId, l.leaseId);
    QCOMPARE(granted.facts.waitedMs, 2'000);
    QCOMPARE(m_listener.events.front().facts.waitedMs, -1);
}

void TstWaits::deadlineReturnsTheCurrentHolder()
{
    m_engine->acquire(req("first", {"lock:x"}, Mode::Write, 0, 5'000));
    const auto w = m_engine->acquire(req("w", {"lock:x"}, Mode::Write, 10'000));
    const auto w2 = m_engine->acquire(req("w2", {"lock:x"}, Mode::Write, 9'000));
    m_clock.advance(5'000);
    m_engine->expireDue(); // first expires; w takes it
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(w))));
    m_clock.advance(4'000);
    m_engine->expireDue();
    const Refusal &r = std::get<Refusal>(*m_listener.outcomeOf(waitIdOf(w2)));
    QCOMPARE(r.reason, RefusalReason::LeaseHeld);
    QCOMPARE(r.holder, std::string("w")); // not "first", who held it when w2 began
    QCOMPARE(r.waitedMs, 9'000);
    QVERIFY(r.stampede.has_value());
}

void TstWaits::expiryWakesWaiterAtOnce()
{
    m_engine->acquire(req("crashed", {"src/a.cpp"}, Mode::Write, 0, 3'000));
    const auto w = m_engine->acquire(req("next", {"src/a.cpp"}, Mode::Write, 60'000));
    QCOMPARE(*m_engine->nextDeadline(), m_clock.nowMs() + 3'000);
    m_clock.advance(3'000);
    m_engine->expireDue();
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(w))));
    QCOMPARE(m_engine->snapshot().trust.at(0).score, -5.0);
}

void TstWaits::cancellationTakesNothing()
{
    m_engine->acquire(req("h", {"lock:x"}));
    const auto w = m_engine->acquire(req("w", {"lock:x"}, Mode::Write, 60'000));
    const auto w2 = m_engine->acquire(req("w2", {"lock:x"}, Mode::Write, 60'000));
    m_engine->cancelWait(waitIdOf(w));
    const Refusal &r = std::get<Refusal>(*m_listener.outcomeOf(waitIdOf(w)));
    QVERIFY(r.cancelled);
    m_engine->cancelWait(waitIdOf(w)); // twice is harmless
    m_engine->release("h", {});
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(w2))));
    QCOMPARE(m_engine->snapshot().leases.at(0).holder, std::string("w2"));
    QCOMPARE(m_engine->counters().waitsCancelled, 1u);
}

void TstWaits::grantToAGoneClientIsReleased()
{
    // The host learns the client is gone only after the grant was made: it hands it back.
    struct Abandoner : RecordingListener
    {
        LeaseEngine *engine = nullptr;
        std::uint64_t gone = 0;
        void onWaitEnded(std::uint64_t id, const WaitOutcome &o) override
        {
            RecordingListener::onWaitEnded(id, o);
            if (auto *g = std::get_if<Grant>(&o); g && id == gone)
                engine->abandon(*g);
        }
    } abandoner;
    abandoner.engine = m_engine.get();
    m_engine->setListener(&abandoner);
    m_engine->acquire(req("h", {"lock:x"}));
    const auto w = m_engine->acquire(req("gone", {"lock:x"}, Mode::Write, 60'000));
    abandoner.gone = waitIdOf(w);
    const auto w2 = m_engine->acquire(req("next", {"lock:x"}, Mode::Write, 60'000));
    m_engine->release("h", {});
    QVERIFY(std::holds_alternative<Grant>(*abandoner.outcomeOf(waitIdOf(w))));
    // The abandoned lease went straight on to the next in line.
    QVERIFY(std::holds_alternative<Grant>(*abandoner.outcomeOf(waitIdOf(w2))));
    m_engine->setListener(&m_listener);
    const Snapshot s = m_engine->snapshot();
    QCOMPARE(s.leases.size(), 1u);
    QCOMPARE(s.leases[0].holder, std::string("next"));
    for (const TrustInfo &t : s.trust) {
        if (t.actorDid == "gone")
            QCOMPARE(t.score, 0.0);
    }
}

void TstWaits::holderMayNotWait()
{
    m_engine->acquire(req("a", {"lock:mine"}));
    m_engine->acquire(req("b", {"lock:x"}));
    const auto r = m_engine->acquire(req("a", {"lock:x"}, Mode::Write, 60'000));
    QVERIFY(std::holds_alternative<Refusal>(r));
    QVERIFY(refusalOf(r).holdAndWait);
    QCOMPARE(m_engine->parkedCount(), 0u);
    QVERIFY(m_listener.began.empty());
}

namespace {

AcquireRequest whileHolding(const std::string &actor, std::initializer_list<std::string> resources,
                            std::int64_t waitMs)
{
    AcquireRequest r = req(actor, resources, Mode::Write, waitMs);
    r.waitWhileHolding = true;
    return r;
}

} // namespace

void TstWaits::holderWaitsWhenItAsksToWaitWhileHolding()
{
    // A coding agent's hook: the agent edited lock:mine earlier in its turn and now waits for
    // one more file, keeping what it has.
    m_engine->acquire(req("a", {"lock:mine"}));
    m_engine->acquire(req("b", {"lock:x"}));
    const auto w = m_engine->acquire(whileHolding("a", {"lock:x"}, 20'000));
    QVERIFY(std::holds_alternative<Parked>(w));
    QCOMPARE(m_engine->parkedCount(), 1u);
    m_engine->checkInvariants();
    m_clock.advance(700);
    m_engine->release("b", {name("lock:x")});
    const WaitOutcome *outcome = m_listener.outcomeOf(waitIdOf(w));
    QVERIFY(outcome && std::holds_alternative<Grant>(*outcome));
    QCOMPARE(std::get<Grant>(*outcome).waitedMs, 700);
    // It keeps what it held and has the new one too.
    QCOMPARE(m_engine->agentView("a").held.size(), 2u);
    // Without a wait it is refused at once, as any request (no hold-and-wait hint: it asked
    // for no wait).
    m_engine->acquire(req("c", {"lock:y"}));
    const auto r = m_engine->acquire(whileHolding("a", {"lock:y"}, 0));
    QVERIFY(!refusalOf(r).holdAndWait);
    QCOMPARE(refusalOf(r).holder, std::string("c"));
}

void TstWaits::holdersWaitingOnEachOtherAreRefusedAsDeadlock()
{
    // Two agents each hold a file and each waits, in a hook, for the other's: the first parks,
    // the second would close the cycle and is refused at once, naming it.
    m_engine->acquire(req("a", {"src/a.ts"}));
    m_engine->acquire(req("b", {"src/b.ts"}));
    const auto first = m_engine->acquire(whileHolding("a", {"src/b.ts"}, 20'000));
    QVERIFY(std::holds_alternative<Parked>(first));
    const auto second = m_engine->acquire(whileHolding("b", {"src/a.ts"}, 20'000));
    QVERIFY(std::holds_alternative<Refusal>(second));
    const Refusal &no = refusalOf(second);
    QCOMPARE(no.reason, RefusalReason::Deadlock);
    QCOMPARE(no.holder, std::string("a"));
    QCOMPARE(no.resource, std::string("fs:src/a.ts"));
    QCOMPARE(no.waitingOn, std::string("fs:src/b.ts"));
    QCOMPARE(no.cycle.size(), 2u);
    QCOMPARE(no.cycle[0].agent, std::string("b"));
    QCOMPARE(no.cycle[1].agent, std::string("a"));
    QCOMPARE(m_engine->parkedCount(), 1u);
    // The refused agent lets go of its file: the first waiter is granted at once.
    m_engine->release("b", {});
    const WaitOutcome *outcome = m_listener.outcomeOf(waitIdOf(first));
    QVERIFY(outcome && std::holds_alternative<Grant>(*outcome));
}

void TstWaits::holdingWaiterQueuesInArrivalOrderAndCancelsCleanly()
{
    m_engine->acquire(req("h", {"lock:x"}));
    m_engine->acquire(req("a", {"lock:a"}));
    m_engine->acquire(req("b", {"lock:b"}));
    const auto wa = m_engine->acquire(whileHolding("a", {"lock:x"}, 20'000));
    const auto wc = m_engine->acquire(req("c", {"lock:x"}, Mode::Write, 20'000));
    const auto wb = m_engine->acquire(whileHolding("b", {"lock:x"}, 20'000));
    QCOMPARE(m_engine->parkedCount(), 3u);
    // a's hook process is killed: its wait ends and takes nothing; a keeps lock:a.
    m_engine->cancelWait(waitIdOf(wa));
    const WaitOutcome *cancelled = m_listener.outcomeOf(waitIdOf(wa));
    QVERIFY(cancelled && std::get<Refusal>(*cancelled).cancelled);
    QCOMPARE(m_engine->agentView("a").held.size(), 1u);
    m_engine->release("h", {});
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(wc))));
    QVERIFY(!m_listener.outcomeOf(waitIdOf(wb)));
    m_engine->release("c", {});
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(wb))));
    QCOMPARE(m_engine->agentView("b").held.size(), 2u);
}

void TstWaits::waitIsCappedAtMaxWait()
{
    m_engine->acquire(req("h", {"lock:x"}, Mode::Write, 0, 3'600'000));
    const auto w = m_engine->acquire(req("w", {"lock:x"}, Mode::Write, 10'000'000));
    QCOMPARE(std::get<Parked>(w).deadline, m_clock.nowMs() + 90'000);
}

void TstWaits::wantsLapseAndShowInQueue()
{
    m_engine->acquire(req("h", {"lock:x"}, Mode::Write, 0, 3'600'000));
    m_engine->acquire(req("w", {"lock:x"}));
    WaitView v = m_engine->waitView();
    QCOMPARE(v.waiters.size(), 1u);
    QVERIFY(!v.waiters[0].parked);
    QCOMPARE(v.waiters[0].deadline, m_clock.nowMs() + 5'000); // max(2·25, 5000)
    QCOMPARE(v.waiters[0].holder, std::string("h"));
    m_clock.advance(4'999);
    m_engine->expireDue();
    QCOMPARE(m_engine->waitView().waiters.size(), 1u);
    m_clock.advance(1);
    m_engine->expireDue();
    QCOMPARE(m_engine->waitView().waiters.size(), 0u);
    // Acquiring drops the want at once.
    m_engine->acquire(req("w", {"lock:x"}));
    m_engine->release("h", {});
    QCOMPARE(m_engine->waitView().waiters.size(), 1u);
    m_engine->acquire(req("w", {"lock:x"}));
    QCOMPARE(m_engine->waitView().waiters.size(), 0u);
}

void TstWaits::stampedeBackoffGrowsAndCaps()
{
    m_engine->acquire(req("holder", {"src/hot.cpp"}, Mode::Write, 0, 3'600'000));
    std::vector<std::int64_t> waits;
    for (int i = 0; i < 50; ++i) {
        const auto r = m_engine->acquire(req("agent-" + std::to_string(i), {"src/hot.cpp"}));
        const Stampede s = *refusalOf(r).stampede;
        QCOMPARE(s.waiters, i);
        QCOMPARE(s.admitted, std::min(i, 8));
        waits.push_back(s.waitMs);
    }
    QCOMPARE(waits[0], 25);
    QCOMPARE(waits[1], 50);
    QCOMPARE(waits[4], 400);
    QCOMPARE(waits[5], 800);
    QCOMPARE(waits[49], 800);
    QVERIFY(std::is_sorted(waits.begin(), waits.end()));
    // A repeat refusal does not count the agent twice.
    QCOMPARE(refusalOf(m_engine->acquire(req("agent-0", {"src/hot.cpp"}))).stampede->waiters, 49);
    // An 800 ms back-off keeps the want for 5 s at least; 2·waitMs otherwise.
    QCOMPARE(m_engine->waitView().waiters.back().deadline, m_clock.nowMs() + 5'000);
}

void TstWaits::adminLeversEndWaits()
{
    m_engine->acquire(req("h", {"lock:x"}));
    const auto a = m_engine->acquire(req("a", {"lock:x"}, Mode::Write, 60'000));
    const auto b = m_engine->acquire(req("b", {"lock:x"}, Mode::Write, 60'000));
    m_engine->suspend("op", "a", true);
    QCOMPARE(std::get<Refusal>(*m_listener.outcomeOf(waitIdOf(a))).reason,
             RefusalReason::Suspended);
    m_engine->pause("op", true);
    QCOMPARE(std::get<Refusal>(*m_listener.outcomeOf(waitIdOf(b))).reason, RefusalReason::Paused);
    m_engine->pause("op", false);
    const auto c = m_engine->acquire(req("c", {"lock:x"}, Mode::Write, 60'000));
    QCOMPARE(m_engine->releaseHolder("op", "h"), 1);
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(c))));
}

void TstWaits::hooksFireOncePerWaitAndMayThrow()
{
    m_listener.throwOnBegin = true;
    m_listener.throwOnEnd = true;
    // An immediate grant and waitMs 0 never begin a wait.
    m_engine->acquire(req("h", {"lock:x"}));
    m_engine->acquire(req("z", {"lock:x"}));
    QVERIFY(m_listener.began.empty());
    const auto g = m_engine->acquire(req("g", {"lock:x"}, Mode::Write, 60'000));
    const auto d = m_engine->acquire(req("d", {"lock:x"}, Mode::Write, 1'000));
    const auto c = m_engine->acquire(req("c", {"lock:x"}, Mode::Write, 60'000));
    QCOMPARE(m_listener.began.size(), 3u);
    m_engine->cancelWait(waitIdOf(c));
    m_clock.advance(1'000);
    m_engine->expireDue();
    m_engine->release("h", {}); // the grant still happens though the hook throws
    QVERIFY(std::holds_alternative<Grant>(*m_listener.outcomeOf(waitIdOf(g))));
    QVERIFY(std::holds_alternative<Refusal>(*m_listener.outcomeOf(waitIdOf(d))));
    QCOMPARE(m_listener.ended.size(), 3u);
    QCOMPARE(m_engine->snapshot().leases.at(0).holder, std::string("g"));
}

QTEST_APPLESS_MAIN(TstWaits)
#include "tst_waits.moc"

// Lock-delay: a lease that ends without a release holds its name back from everyone for the
// delay its request (or the configuration) chose; a clean release never does.

#include "enginetest.h"

#include <QTest>

using namespace leasehold;
using namespace leasehold::test;

namespace {

AcquireRequest delayed(const std::string &actor, const std::string &resource,
                       std::int64_t lockDelayMs, std::int64_t ttlMs = 3'000,
                       std::int64_t waitMs = 0)
{
    AcquireRequest r = req(actor, {resource}, Mode::Write, waitMs, ttlMs);
    r.lockDelayMs = lockDelayMs;
    return r;
}

const LedgerEvent *lastOf(const RecordingListener &l, EventKind kind)
{
    for (auto e = l.events.rbegin(); e != l.events.rend(); ++e)
        if (e->kind == kind)
            return &*e;
    return nullptr;
}

} // namespace

class TstLockDelay : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init() { reset(); }
    void cleanup() { finish(); }

    void anExpiredLeaseHoldsItsNameBackFromEveryone();
    void aCleanReleaseIsNeverHeldBack();
    void waitersStayParkedUntilTheDelayEnds();
    void anOperatorsReleaseIsHeldBackToo();
    void theConfiguredDefaultDependsOnTheKindOfName();
    void aRequestIsCappedAtTheMaximum();
    void aHeldBackFolderKeepsWhatIsUnderIt();
    void aHeldBackNameDrawsNoWaitForEdge();
};

void TstLockDelay::anExpiredLeaseHoldsItsNameBackFromEveryone()
{
    const Grant first = grantOf(m_engine->acquire(delayed("a", "lock:deploy/prod", 2'000)));
    QCOMPARE(first.leases.front().lockDelayMs, 2'000);
    m_clock.advance(3'000);
    m_engine->expireDue();
    const LedgerEvent *expired = lastOf(m_listener, EventKind::Expired);
    QVERIFY(expired);
    QCOMPARE(expired->facts.heldBackMs, 2'000);
    QVERIFY(m_engine->snapshot().leases.empty()); // no longer a lease: nobody holds it

    const Refusal b = refusalOf(m_engine->acquire(req("b", {"lock:deploy/prod"})));
    QVERIFY(b.reason == RefusalReason::LeaseHeld);
    QCOMPARE(b.holder, std::string("a"));
    QCOMPARE(b.heldBackMs, 2'000);
    // Its last holder too: a stalled holder must not come back into the name either.
    QCOMPARE(refusalOf(m_engine->acquire(req("a", {"lock:deploy/prod"}))).heldBackMs, 2'000);

    m_clock.advance(1'999);
    m_engine->expireDue();
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"lock:deploy/prod"}))).heldBackMs, 1);
    m_clock.advance(1);
    m_engine->expireDue();
    const Grant next = grantOf(m_engine->acquire(req("b", {"lock:deploy/prod"})));
    QVERIFY(next.leases.front().token > first.leases.front().token); // fencing still rises
}

void TstLockDelay::aCleanReleaseIsNeverHeldBack()
{
    QVERIFY(isGrant(m_engine->acquire(delayed("a", "lock:deploy/prod", 10'000))));
    m_engine->release("a", {});
    QCOMPARE(lastOf(m_listener, EventKind::Released)->facts.heldBackMs, 0);
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:deploy/prod"}))));
}

void TstLockDelay::waitersStayParkedUntilTheDelayEnds()
{
    QVERIFY(isGrant(m_engine->acquire(delayed("a", "lock:db/migrate", 5'000, 1'000))));
    const auto w = m_engine->acquire(req("b", {"lock:db/migrate"}, Mode::Write, 60'000));
    m_clock.advance(1'000);
    m_engine->expireDue();
    QVERIFY(!m_listener.outcomeOf(waitIdOf(w))); // expired, but held back: still parked
    QCOMPARE(*m_engine->nextDeadline(), m_clock.nowMs() + 5'000);
    m_clock.advance(5'000);
    m_engine->expireDue();
    const WaitOutcome *outcome = m_listener.outcomeOf(waitIdOf(w));
    QVERIFY(outcome && std::holds_alternative<Grant>(*outcome));
}

void TstLockDelay::anOperatorsReleaseIsHeldBackToo()
{
    QVERIFY(isGrant(m_engine->acquire(delayed("a", "lock:deploy/prod", 1'000))));
    QCOMPARE(m_engine->releaseHolder("op", "a"), 1);
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"lock:deploy/prod"}))).heldBackMs, 1'000);
    m_clock.advance(1'000);
    m_engine->expireDue();
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:deploy/prod"}))));
}

void TstLockDelay::theConfiguredDefaultDependsOnTheKindOfName()
{
    EngineConfig config;
    config.lockDelayMs = 1'500;
    config.workspaceLockDelayMs = 0;
    reset(config);
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:x", "src/a.cpp"}, Mode::Write, 0, 1'000))));
    m_clock.advance(1'000);
    m_engine->expireDue();
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"lock:x"}))).heldBackMs, 1'500);
    QVERIFY(isGrant(m_engine->acquire(req("b", {"src/a.cpp"}))));
    // A request's own value wins over the default, 0 included.
    QVERIFY(isGrant(m_engine->acquire(delayed("c", "lock:y", 0, 1'000))));
    m_clock.advance(1'000);
    m_engine->expireDue();
    QVERIFY(isGrant(m_engine->acquire(req("d", {"lock:y"}))));
}

void TstLockDelay::aRequestIsCappedAtTheMaximum()
{
    EngineConfig config;
    config.maxLockDelayMs = 4'000;
    reset(config);
    const Grant g = grantOf(m_engine->acquire(delayed("a", "lock:x", 60'000)));
    QCOMPARE(g.leases.front().lockDelayMs, 4'000);
}

void TstLockDelay::aHeldBackFolderKeepsWhatIsUnderIt()
{
    QVERIFY(isGrant(m_engine->acquire(delayed("a", "src/", 2'000))));
    m_clock.advance(3'000);
    m_engine->expireDue();
    const Refusal r = refusalOf(m_engine->acquire(req("b", {"src/a.cpp"})));
    QCOMPARE(r.heldBackMs, 2'000);
    QVERIFY(!r.heldResource.empty());
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lib/a.cpp"}))));
}

void TstLockDelay::aHeldBackNameDrawsNoWaitForEdge()
{
    // b waits for a held-back name while holding another; a waiting for b's must not be taken
    // for a cycle: the held-back name belongs to nobody.
    QVERIFY(isGrant(m_engine->acquire(delayed("a", "lock:one", 5'000, 1'000))));
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:two"}))));
    m_clock.advance(1'000);
    m_engine->expireDue();
    AcquireRequest bWaits = req("b", {"lock:one"}, Mode::Write, 30'000);
    bWaits.waitWhileHolding = true;
    QVERIFY(std::holds_alternative<Parked>(m_engine->acquire(bWaits)));
    AcquireRequest aWaits = req("a", {"lock:two"}, Mode::Write, 30'000);
    QVERIFY(std::holds_alternative<Parked>(m_engine->acquire(aWaits))); // not a deadlock
    m_engine->releaseAll("op");
}

QTEST_APPLESS_MAIN(TstLockDelay)
#include "tst_lockdelay.moc"

// The stale-holder sweep: only holders live on no surface and not seen for the bound, oldest
// first; a dry run changes nothing; a real one is recorded as release-holder with reason sweep.

#include "enginetest.h"

#include <QTest>

using namespace leasehold;
using namespace leasehold::test;

class TstSweep : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init() { reset(); }
    void cleanup() { finish(); }

    void aDryRunListsTheGoneAndChangesNothing();
    void aSweepReleasesOnlyTheGoneAndSaysWhy();
    void anAgentLiveOnASurfaceIsNeverSwept();
};

namespace {
constexpr std::int64_t kMinute = 60'000;
constexpr std::int64_t kLong = 3'600'000; // leases that outlast the test
} // namespace

void TstSweep::aDryRunListsTheGoneAndChangesNothing()
{
    QVERIFY(isGrant(m_engine->acquire(req("old", {"lock:a", "lock:b"}, Mode::Write, 0, kLong))));
    m_clock.advance(5 * kMinute);
    QVERIFY(isGrant(m_engine->acquire(req("older-not", {"lock:c"}, Mode::Write, 0, kLong))));
    m_clock.advance(6 * kMinute);
    const auto found = m_engine->sweep("op", 10 * kMinute, true);
    QCOMPARE(found.size(), 1u);
    QCOMPARE(found[0].actorDid, std::string("old"));
    QCOMPARE(found[0].idleMs, 11 * kMinute);
    QCOMPARE(found[0].resources, (std::vector<std::string>{"lock:a", "lock:b"}));
    QCOMPARE(found[0].released, 0);
    QCOMPARE(m_engine->snapshot().leases.size(), 3u);
    QCOMPARE(m_listener.count(EventKind::AdminReleaseHolder), 0);
    // A longer bound finds nobody; both, oldest first, with a shorter one.
    QVERIFY(m_engine->sweep("op", 12 * kMinute, true).empty());
    const auto both = m_engine->sweep("op", 6 * kMinute, true);
    QCOMPARE(both.size(), 2u);
    QCOMPARE(both[0].actorDid, std::string("old"));
}

void TstSweep::aSweepReleasesOnlyTheGoneAndSaysWhy()
{
    QVERIFY(isGrant(m_engine->acquire(req("gone", {"lock:a"}, Mode::Write, 0, kLong))));
    QVERIFY(isGrant(m_engine->acquire(req("busy", {"lock:b"}, Mode::Write, 0, kLong))));
    m_clock.advance(20 * kMinute);
    QVERIFY(isGrant(m_engine->acquire(req("busy", {"lock:c"}, Mode::Write, 0, kLong)))); // seen
    const auto found = m_engine->sweep("did:op:oncall", 10 * kMinute, false);
    QCOMPARE(found.size(), 1u);
    QCOMPARE(found[0].released, 1);
    QCOMPARE(m_engine->snapshot().leases.size(), 2u); // busy keeps both
    const LedgerEvent &e = m_listener.events.back();
    QVERIFY(e.kind == EventKind::AdminReleaseHolder);
    QCOMPARE(e.reason, std::string("sweep"));
    QCOMPARE(e.actorDid, std::string("did:op:oncall"));
    QCOMPARE(e.facts.target, std::string("gone"));
    QVERIFY(isGrant(m_engine->acquire(req("next", {"lock:a"})))); // free again
}

void TstSweep::anAgentLiveOnASurfaceIsNeverSwept()
{
    QVERIFY(isGrant(m_engine->acquire(req("mcp", {"lock:a"}, Mode::Write, 0, kLong))));
    m_engine->setPresence("mcp", 1, 0); // a live MCP session, however quiet
    QVERIFY(isGrant(m_engine->acquire(req("hooked", {"lock:b"}, Mode::Write, 0, kLong))));
    m_engine->setPresence("hooked", 0, static_cast<ViaSet>(Via::Hook));
    m_clock.advance(60 * kMinute);
    QVERIFY(m_engine->sweep("op", 10 * kMinute, false).empty());
    QCOMPARE(m_engine->snapshot().leases.size(), 2u);
}

QTEST_APPLESS_MAIN(TstSweep)
#include "tst_sweep.moc"

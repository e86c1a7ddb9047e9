// The engine's journal: each change to durable state is written down as the engine makes it,
// in decision order, with the values a store must keep - and nothing else.

#include "enginetest.h"

#include <QTest>

#include <algorithm>

using namespace leasehold;
using namespace leasehold::test;

class TstJournal : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void grantWritesTheLeaseThenItsEvent();
    void extensionRewritesTheSameLease();
    void releaseDropsTheLeaseAndWritesTheAgent();
    void expiryWritesTheLostTrust();
    void pinnedReleaseKeepsTheLeaseUntilTheLastUnpin();
    void suspensionIsWrittenBothWays();
    void operatorReleaseDropsWithoutTouchingTrust();
    void refusalIsOnlyAnEvent();
    void eventsAreJournaledWithoutAListener();

private:
    // What the journal gathered since the last call, decoded; the journal starts over.
    std::vector<StoreOp> take()
    {
        std::vector<StoreOp> out;
        m_journal.decode(out);
        m_journal.clear();
        return out;
    }
    std::string grantOne(const std::string &actor, const std::string &resource,
                         std::int64_t ttl = 30'000)
    {
        const auto r = m_engine->acquire(req(actor, {resource}, Mode::Write, 0, ttl));
        return grantOf(r).leases.at(0).leaseId;
    }

    StoreOps m_journal;
};

void TstJournal::init()
{
    reset();
    m_journal.clear();
    m_engine->setJournal(&m_journal);
}

void TstJournal::cleanup()
{
    finish();
}

void TstJournal::grantWritesTheLeaseThenItsEvent()
{
    const TimeMs now = m_clock.nowMs();
    const auto r = m_engine->acquire(req("did:agent:a", {"src/a.cpp"}, Mode::Read, 0, 20'000));
    const LeaseInfo &granted = grantOf(r).leases.at(0);
    const std::vector<StoreOp> ops = take();
    QCOMPARE(ops.size(), 2u);
    const LeaseInfo &l = std::get<PutLease>(ops[0]).lease;
    QCOMPARE(l.leaseId, granted.leaseId);
    QCOMPARE(l.resource, std::string("fs:src/a.cpp"));
    QCOMPARE(l.holder, std::string("did:agent:a"));
    QCOMPARE(l.mode, Mode::Read);
    QCOMPARE(l.token, granted.token);
    QCOMPARE(l.grantedAt, now);
    QCOMPARE(l.expiresAt, now + 20'000);
    QCOMPARE(l.ttlMs, 20'000);
    const LedgerEvent &e = std::get<AppendEvent>(ops[1]).event;
    QCOMPARE(e.kind, EventKind::Granted);
    QCOMPARE(e.leaseId, granted.leaseId);
    QCOMPARE(e.seq, m_listener.events.back().seq); // the listener heard the same event
}

void TstJournal::extensionRewritesTheSameLease()
{
    const std::string id = grantOne("did:agent:a", "src/a.cpp");
    take();
    m_clock.advance(5'000);
    QVERIFY(isGrant(m_engine->acquire(req("did:agent:a", {"src/a.cpp"}, Mode::Write, 0, 60'000))));
    const std::vector<StoreOp> ops = take();
    QCOMPARE(ops.size(), 2u);
    const LeaseInfo &l = std::get<PutLease>(ops[0]).lease;
    QCOMPARE(l.leaseId, id);
    QCOMPARE(l.expiresAt, m_clock.nowMs() + 60'000);
    QCOMPARE(l.grantedAt, m_clock.nowMs() - 5'000); // still the original grant
    QVERIFY(std::holds_alternative<AppendEvent>(ops[1]));
}

void TstJournal::releaseDropsTheLeaseAndWritesTheAgent()
{
    const std::string id = grantOne("did:agent:a", "src/a.cpp");
    take();
    QVERIFY(std::holds_alternative<Released>(m_engine->release("did:agent:a", {})));
    const std::vector<StoreOp> ops = take();
    QCOMPARE(ops.size(), 3u);
    QCOMPARE(std::get<DropLease>(ops[0]).leaseId, id);
    const AgentState &a = std::get<PutAgent>(ops[1]).agent;
    QCOMPARE(a.actorDid, std::string("did:agent:a"));
    QCOMPARE(a.trust, 0.5);
    QCOMPARE(a.releases, 1u);
    QCOMPARE(a.expiries, 0u);
    QVERIFY(!a.suspended);
    QCOMPARE(std::get<AppendEvent>(ops[2]).event.kind, EventKind::Released);
}

void TstJournal::expiryWritesTheLostTrust()
{
    const std::string id = grantOne("did:agent:a", "src/a.cpp", 1'000);
    take();
    m_clock.advance(999);
    m_engine->expireDue();
    QVERIFY(take().empty()); // not yet due: nothing changed, nothing written
    m_clock.advance(1);
    m_engine->expireDue();
    const std::vector<StoreOp> ops = take();
    QCOMPARE(ops.size(), 3u);
    QCOMPARE(std::get<DropLease>(ops[0]).leaseId, id);
    const AgentState &a = std::get<PutAgent>(ops[1]).agent;
    QCOMPARE(a.trust, -5.0);
    QCOMPARE(a.expiries, 1u);
    QCOMPARE(std::get<AppendEvent>(ops[2]).event.kind, EventKind::Expired);
}

void TstJournal::pinnedReleaseKeepsTheLeaseUntilTheLastUnpin()
{
    const std::string id = grantOne("did:agent:a", "src/a.cpp");
    const std::string pinId = std::get<PinInfo>(m_engine->pin("did:agent:a", id)).pinId;
    take();
    m_engine->release("did:agent:a", {});
    for (const StoreOp &op : take()) // the lease is still held: the store must keep it
        QVERIFY(!std::holds_alternative<DropLease>(op));
    m_engine->unpin("did:agent:a", pinId);
    bool dropped = false;
    for (const StoreOp &op : take())
        dropped = dropped ||
                  (std::holds_alternative<DropLease>(op) && std::get<DropLease>(op).leaseId == id);
    QVERIFY(dropped);
}

void TstJournal::suspensionIsWrittenBothWays()
{
    m_engine->suspend("did:op:alice", "did:agent:b", true);
    std::vector<StoreOp> ops = take();
    QCOMPARE(ops.size(), 2u);
    QCOMPARE(std::get<PutAgent>(ops[0]).agent.actorDid, std::string("did:agent:b"));
    QVERIFY(std::get<PutAgent>(ops[0]).agent.suspended);
    QCOMPARE(std::get<AppendEvent>(ops[1]).event.actorDid, std::string("did:op:alice"));
    m_engine->suspend("did:op:alice", "did:agent:b", false);
    ops = take();
    QVERIFY(!std::get<PutAgent>(ops.at(0)).agent.suspended);
}

void TstJournal::operatorReleaseDropsWithoutTouchingTrust()
{
    const std::string a = grantOne("did:agent:a", "src/a.cpp");
    const std::string b = grantOne("did:agent:b", "src/b.cpp");
    take();
    QCOMPARE(m_engine->releaseAll("did:op:alice"), 2);
    std::vector<std::string> dropped;
    for (const StoreOp &op : take()) {
        QVERIFY(!std::holds_alternative<PutAgent>(op)); // an operator's release moves no trust
        if (const auto *d = std::get_if<DropLease>(&op))
            dropped.push_back(d->leaseId);
    }
    std::sort(dropped.begin(), dropped.end());
    std::vector<std::string> want{a, b};
    std::sort(want.begin(), want.end());
    QCOMPARE(dropped, want);
}

void TstJournal::refusalIsOnlyAnEvent()
{
    grantOne("did:agent:a", "src/a.cpp");
    take();
    QVERIFY(!isGrant(m_engine->acquire(req("did:agent:b", {"src/a.cpp"}))));
    const std::vector<StoreOp> ops = take();
    QCOMPARE(ops.size(), 1u);
    QCOMPARE(std::get<AppendEvent>(ops[0]).event.kind, EventKind::Refused);
}

void TstJournal::eventsAreJournaledWithoutAListener()
{
    m_engine->setListener(nullptr);
    grantOne("did:agent:a", "src/a.cpp");
    const std::vector<StoreOp> ops = take();
    QCOMPARE(ops.size(), 2u);
    QCOMPARE(std::get<AppendEvent>(ops[1]).event.kind, EventKind::Granted);
    QVERIFY(m_listener.events.empty());
}

QTEST_APPLESS_MAIN(TstJournal)
#include "tst_journal.moc"

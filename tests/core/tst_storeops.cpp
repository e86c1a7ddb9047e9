// The encoded operation buffer: every kind of operation comes back exactly as it went in, in
// order; dropping ledger events keeps every state change; clearing keeps the storage.

#include "storeops.h"

#include <QTest>

using namespace leasehold;

class TstStoreOps : public QObject
{
    Q_OBJECT

private slots:
    void everyOperationRoundTrips();
    void keepEventsDropsOnlyLaterEvents();
    void clearKeepsStorageAndStartsOver();
    void largeOperationsGrowTheBuffer();

private:
    static LedgerEvent event(std::uint64_t seq)
    {
        LedgerEvent e;
        e.seq = seq;
        e.at = 1'700'000'000'000 + TimeMs(seq);
        e.kind = EventKind::AdminSuspend;
        e.actorDid = "did:op:alice";
        e.resource = "fs:src/ä/b.cpp"; // bytes, not characters
        e.leaseId = "ls_" + std::string(32, 'f');
        e.token = 1ull << 40;
        e.ttlMs = -1;
        e.reason = "admin";
        e.facts.target = "did:agent:x";
        e.facts.suspended = true;
        e.facts.released = std::int64_t(seq);
        e.facts.cycle = {{"did:agent:a", "fs:x"}, {"did:agent:b", "lock:y"}};
        e.facts.waitedMs = 0;
        e.facts.via = "fs"; // the second mask's fields
        e.facts.pid = 0;
        e.facts.command = "sed";
        e.facts.requestId = "rr_1"; // a release request's
        e.facts.urgency = "high";
        e.facts.deadlineAt = 1'700'000'030'000;
        e.facts.requester = "did:agent:y";
        return e;
    }
    static std::vector<StoreOp> decoded(const StoreOps &ops)
    {
        std::vector<StoreOp> out;
        ops.decode(out);
        return out;
    }
};

void TstStoreOps::everyOperationRoundTrips()
{
    const LeaseInfo lease{
        "ls_1", "lock:deploy/production", "did:agent:a", Mode::Read, 99, 1000, 61000, 60000};
    const AgentState agent{"did:agent:b", -2.5, 7, 3, true};
    const StoredKey key{std::string(64, 'c'), "did:agent:c", "admin", 5000};
    StoreOps ops{PutLease{lease}, DropLease{"ls_0"}, ReserveTokens{4097}};
    ops.putAgent(agent);
    ops.appendEvent(event(41));
    ops.putKey(key);
    ops.dropLease(""); // an empty string is a string, not an end
    QCOMPARE(ops.size(), 7u);
    QCOMPARE(ops.events(), 1u);

    const std::vector<StoreOp> out = decoded(ops);
    QCOMPARE(out.size(), 7u);
    const LeaseInfo &l = std::get<PutLease>(out[0]).lease;
    QCOMPARE(l.leaseId, lease.leaseId);
    QCOMPARE(l.resource, lease.resource);
    QCOMPARE(l.holder, lease.holder);
    QCOMPARE(l.mode, Mode::Read);
    QCOMPARE(l.token, 99u);
    QCOMPARE(l.grantedAt, 1000);
    QCOMPARE(l.expiresAt, 61000);
    QCOMPARE(l.ttlMs, 60000);
    QCOMPARE(std::get<DropLease>(out[1]).leaseId, std::string("ls_0"));
    QCOMPARE(std::get<ReserveTokens>(out[2]).end, 4097u);
    const AgentState &a = std::get<PutAgent>(out[3]).agent;
    QCOMPARE(a.actorDid, agent.actorDid);
    QCOMPARE(a.trust, -2.5);
    QCOMPARE(a.releases, 7u);
    QCOMPARE(a.expiries, 3u);
    QVERIFY(a.suspended);
    const LedgerEvent &e = std::get<AppendEvent>(out[4]).event;
    const LedgerEvent want = event(41);
    QCOMPARE(e.seq, want.seq);
    QCOMPARE(e.at, want.at);
    QCOMPARE(e.kind, EventKind::AdminSuspend);
    QCOMPARE(e.actorDid, want.actorDid);
    QCOMPARE(e.resource, want.resource);
    QCOMPARE(e.leaseId, want.leaseId);
    QCOMPARE(e.token, want.token);
    QCOMPARE(e.ttlMs, want.ttlMs);
    QCOMPARE(e.reason, want.reason);
    QVERIFY(e.facts == want.facts);
    const StoredKey &k = std::get<PutKey>(out[5]).key;
    QCOMPARE(k.digestHex, key.digestHex);
    QCOMPARE(k.did, key.did);
    QCOMPARE(k.role, std::string("admin"));
    QCOMPARE(k.createdAt, 5000);
    QCOMPARE(std::get<DropLease>(out[6]).leaseId, std::string());
}

void TstStoreOps::keepEventsDropsOnlyLaterEvents()
{
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 5; ++seq) {
        ops.appendEvent(event(seq));
        ops.dropLease("ls_" + std::to_string(seq));
    }
    ops.keepEvents(2);
    QCOMPARE(ops.size(), 7u);
    QCOMPARE(ops.events(), 2u);
    const std::vector<StoreOp> out = decoded(ops);
    QCOMPARE(out.size(), 7u);
    QCOMPARE(std::get<AppendEvent>(out[0]).event.seq, 1u);
    QCOMPARE(std::get<DropLease>(out[1]).leaseId, std::string("ls_1"));
    QCOMPARE(std::get<AppendEvent>(out[2]).event.seq, 2u);
    for (std::size_t i = 3; i < out.size(); ++i) // every state change is still there, in order
        QCOMPARE(std::get<DropLease>(out[i]).leaseId, "ls_" + std::to_string(i - 1));
    ops.keepEvents(0);
    QCOMPARE(ops.size(), 5u);
    QCOMPARE(ops.events(), 0u);
    ops.keepEvents(10); // keeping more than there are changes nothing
    QCOMPARE(decoded(ops).size(), 5u);
}

void TstStoreOps::clearKeepsStorageAndStartsOver()
{
    StoreOps ops;
    QCOMPARE(ops.capacity(), 0u);
    ops.appendEvent(event(1));
    const std::size_t capacity = ops.capacity();
    QVERIFY(capacity > 0);
    ops.clear();
    QVERIFY(ops.empty());
    QCOMPARE(ops.events(), 0u);
    QCOMPARE(ops.capacity(), capacity);
    QVERIFY(decoded(ops).empty());
    ops.reserveTokens(8193);
    const std::vector<StoreOp> out = decoded(ops);
    QCOMPARE(out.size(), 1u);
    QCOMPARE(std::get<ReserveTokens>(out[0]).end, 8193u);
    QCOMPARE(ops.capacity(), capacity);
    // Room made up front is used as is: filling up to it never regrows the buffer.
    StoreOps sized;
    sized.reserve(50'000);
    QCOMPARE(sized.capacity(), 50'000u);
    while (sized.bytes() + 200 < 50'000)
        sized.appendEvent(event(sized.size() + 1));
    QCOMPARE(sized.capacity(), 50'000u);
    QCOMPARE(decoded(sized).size(), sized.size());
}

void TstStoreOps::largeOperationsGrowTheBuffer()
{
    StoreOps ops;
    LedgerEvent big = event(1);
    big.facts.holder = std::string(100'000, 'x');
    for (int i = 0; i < 3; ++i)
        ops.appendEvent(big);
    QVERIFY(ops.capacity() >= 300'000u);
    const std::vector<StoreOp> out = decoded(ops);
    QCOMPARE(out.size(), 3u);
    for (const StoreOp &op : out)
        QVERIFY(std::get<AppendEvent>(op).event == big);
}

QTEST_APPLESS_MAIN(TstStoreOps)
#include "tst_storeops.moc"

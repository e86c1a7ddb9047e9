// The cluster store against a real three-member etcd on loopback: the engine's state written
// by an elected leader and read back by the next, the ledger ring copied into each instance's
// own ledger, etcd's transaction limits, a deposed leader committing nothing more, and etcd
// without quorum making the store unavailable until it is back.

#include "election.h"
#include "etcdcluster.h"
#include "etcdcodec.h"
#include "etcdstore.h"

#include <QTemporaryDir>
#include <QTest>

#include <thread>

using namespace leasehold;
using namespace leasehold::etcd;

class TstEtcdStore : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void theStateAndLedgerReachTheNextLeader();
    void aBigBatchIsSplitAndOnlyLastWordsAreWritten();
    void theRingKeepsTheNewestEvents();
    void aStandbyFollowsTheRingPastItsSize();
    void aDeposedLeaderCommitsNothingMore();
    void withoutQuorumTheStoreIsUnavailableUntilItIsBack();
    void theLastHealthHeardIsTheHealthThatHolds();
    void valuesNoLeaseholdWroteAreSkipped();

private:
    // A store of instance `name` on this test's prefix, with its own local ledger.
    std::unique_ptr<EtcdStore> store(const QString &name, std::uint64_t ring = 50'000)
    {
        EtcdStore::Options o;
        o.etcd = {m_cluster->endpoints(), 1500};
        o.prefix = m_prefix;
        o.localLedger.path = m_dir->filePath(name + QStringLiteral(".db"));
        o.ringEvents = ring;
        o.closeTimeoutMs = 500;
        return std::make_unique<EtcdStore>(o);
    }
    // A store of instance `name`, loaded and writing under this test's elected fence; nothing
    // (the reason logged) when it cannot load.
    std::unique_ptr<EtcdStore> leading(const QString &name, std::uint64_t ring = 50'000)
    {
        std::unique_ptr<EtcdStore> s = store(name, ring);
        std::string error;
        if (!s->load(&error)) {
            qWarning("cannot load: %s", error.c_str());
            return nullptr;
        }
        s->setFence(m_election->fence());
        return s;
    }
    // Whether `s` made `ops` durable within 10 s.
    [[nodiscard]] static bool commit(EtcdStore &s, StoreOps ops)
    {
        std::uint64_t durable = 0;
        s.setDurableCallback([&](std::uint64_t t) { durable = t; });
        const std::uint64_t ticket = s.submit(ops);
        const bool done = QTest::qWaitFor([&] { return durable >= ticket; }, 10'000);
        s.setDurableCallback({});
        return done;
    }
    static LedgerEvent event(std::uint64_t seq)
    {
        LedgerEvent e;
        e.seq = seq;
        e.at = 1'000 + TimeMs(seq);
        e.kind = EventKind::Granted;
        e.actorDid = "did:agent:a";
        e.resource = "lock:r/" + std::to_string(seq);
        e.leaseId = "ls_" + std::to_string(seq);
        e.token = seq;
        e.ttlMs = 30'000;
        e.facts.mode = Mode::Write;
        e.facts.waitedMs = 7;
        return e;
    }
    static LeaseInfo lease(int i)
    {
        return {"ls_" + std::to_string(i),
                "lock:r/" + std::to_string(i),
                "did:agent:a",
                Mode::Write,
                std::uint64_t(i),
                1'000,
                61'000,
                60'000,
                0,
                false,
                false};
    }
    std::vector<KeyValue> keys(const std::string &under)
    {
        Client c({m_cluster->endpoints(), 2000});
        const std::string from = m_prefix + under;
        return c.range(from, Client::prefixEnd(from)).value_or(std::vector<KeyValue>{});
    }

    // The sequence numbers of the events the ring holds, in order, and how many values hold them.
    std::vector<std::uint64_t> ring(std::size_t *values = nullptr)
    {
        std::vector<std::uint64_t> seqs;
        const std::vector<KeyValue> runs = keys("ledger/");
        for (const KeyValue &kv : runs) {
            for (const LedgerEvent &e : decodeEvents(kv.value))
                seqs.push_back(e.seq);
        }
        if (values)
            *values = runs.size();
        return seqs;
    }

    std::unique_ptr<EtcdCluster> m_cluster;
    std::unique_ptr<Client> m_electionClient;
    std::unique_ptr<Election> m_election;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::string m_prefix;
    int m_test = 0;
};

void TstEtcdStore::initTestCase()
{
    m_cluster = std::make_unique<EtcdCluster>(3);
    std::string error;
    QVERIFY2(m_cluster->start(&error), error.c_str());
}

void TstEtcdStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_prefix = "t" + std::to_string(++m_test) + "/";
    m_electionClient = std::make_unique<Client>(Client::Options{m_cluster->endpoints(), 1500});
    Election::Options o;
    o.prefix = m_prefix;
    o.address = "http://a:1";
    m_election = std::make_unique<Election>(*m_electionClient, o);
    QCOMPARE(m_election->step(), Election::Role::Leader);
}

void TstEtcdStore::theStateAndLedgerReachTheNextLeader()
{
    {
        auto a = leading("a");
        QVERIFY(a);
        QVERIFY(commit(*a, {PutLease{lease(1)}, PutLease{lease(2)},
                            PutAgent{{"did:agent:a", 0.75, 3, 1, true}}, ReserveTokens{1'000},
                            PutKey{{std::string(64, 'c'), "did:agent:a", "agent", 5}},
                            AppendEvent{event(1)}, AppendEvent{event(2)}}));
        QVERIFY(commit(*a, {DropLease{"ls_1"}, AppendEvent{event(3)}}));
        QVERIFY(a->health().ok());
        // Its own copy, which its local store writes after etcd took the batch.
        QVERIFY(QTest::qWaitFor([&] { return a->ledger(0, 10, {}).size() == 3; }, 5'000));
        a->close();
    }
    // The next leader, with a ledger of its own that has seen nothing yet.
    auto b = store("b");
    std::string error;
    const std::optional<StoredState> state = b->load(&error);
    QVERIFY2(state, error.c_str());
    QCOMPARE(state->leases.size(), 1u);
    QCOMPARE(state->leases[0].leaseId, std::string("ls_2"));
    QCOMPARE(state->leases[0].token, 2u);
    QCOMPARE(state->leases[0].expiresAt, 61'000);
    QCOMPARE(state->agents.size(), 1u);
    QCOMPARE(state->agents[0].trust, 0.75);
    QVERIFY(state->agents[0].suspended);
    QCOMPARE(state->keys.size(), 1u);
    QCOMPARE(state->keys[0].role, std::string("agent"));
    QCOMPARE(state->tokenEnd, 1'000u);
    QCOMPARE(state->lastSeq, 3u);
    // The ring was copied into b's own ledger, facts and all.
    QVERIFY(QTest::qWaitFor([&] { return b->ledger(0, 10, {}).size() == 3; }, 5'000));
    const std::vector<LedgerEvent> ledger = b->ledger(0, 10, {});
    QCOMPARE(ledger[2], event(3));
}

void TstEtcdStore::aBigBatchIsSplitAndOnlyLastWordsAreWritten()
{
    auto a = leading("a");
    QVERIFY(a);
    // 1 000 leases and 1 000 events: far beyond etcd's 128 operations a transaction.
    StoreOps ops;
    for (int i = 1; i <= 1'000; ++i) {
        ops.putLease(lease(i));
        ops.appendEvent(event(std::uint64_t(i)));
    }
    // Granted and released within the batch: nothing of it is written but its ledger rows.
    ops.putLease(lease(5'000));
    ops.dropLease("ls_5000");
    QVERIFY(commit(*a, std::move(ops)));
    QCOMPARE(keys("state/lease/").size(), 1'000u);
    // The ledger in runs of up to 256 events a value: 4 operations, not 1 000.
    std::size_t values = 0;
    const std::vector<std::uint64_t> seqs = ring(&values);
    QCOMPARE(seqs.size(), 1'000u);
    QCOMPARE(seqs.front(), 1u);
    QCOMPARE(seqs.back(), 1'000u);
    QCOMPARE(values, 4u);
    QVERIFY(a->stats().batches >= 1);
}

void TstEtcdStore::aStandbyFollowsTheRingPastItsSize()
{
    // A ring of 10; the standby follows while the leader writes 60 events, five at a time.
    auto a = leading("a", 10);
    QVERIFY(a);
    auto b = store("b", 10);
    std::string error;
    QVERIFY2(b->follow(&error, 20), error.c_str());
    for (std::uint64_t seq = 1; seq <= 60; seq += 5) {
        StoreOps ops;
        for (std::uint64_t s = seq; s < seq + 5; ++s)
            ops.appendEvent(event(s));
        QVERIFY(commit(*a, std::move(ops)));
        // The ring moves on by 5 of its 10: the standby sees each batch before it is gone.
        QVERIFY(QTest::qWaitFor([&] { return b->followedSeq() == seq + 4; }, 5'000));
    }
    QCOMPARE(ring().size(), 10u);
    a->close();
    // Taking over, it has the whole ledger without a gap, though the ring holds only 10.
    const std::optional<StoredState> state = b->load(&error);
    QVERIFY2(state, error.c_str());
    QCOMPARE(state->lastSeq, 60u);
    QVERIFY(QTest::qWaitFor([&] { return b->ledger(0, 100, {}).size() == 60; }, 5'000));
    const std::vector<LedgerEvent> ledger = b->ledger(0, 100, {});
    for (std::size_t i = 0; i < ledger.size(); ++i)
        QCOMPARE(ledger[i], event(i + 1));
    // One that did not follow has only the ring's ten.
    auto c = store("c", 10);
    QCOMPARE(c->load(&error)->lastSeq, 60u);
    QVERIFY(QTest::qWaitFor([&] { return c->ledger(0, 100, {}).size() == 10; }, 5'000));
    QCOMPARE(c->ledger(0, 100, {}).front().seq, 51u);
}

void TstEtcdStore::theRingKeepsTheNewestEvents()
{
    auto a = leading("a", 10);
    QVERIFY(a);
    for (std::uint64_t seq = 1; seq <= 25; seq += 5) {
        StoreOps ops;
        for (std::uint64_t s = seq; s < seq + 5; ++s)
            ops.appendEvent(event(s));
        QVERIFY(commit(*a, std::move(ops)));
    }
    // Runs of 5 (one a batch); the ring keeps the newest 10 events.
    std::size_t values = 0;
    const std::vector<std::uint64_t> seqs = ring(&values);
    QCOMPARE(seqs.size(), 10u);
    QCOMPARE(seqs.front(), 16u);
    QCOMPARE(seqs.back(), 25u);
    QCOMPARE(values, 2u);
    // The instance's own ledger keeps them all (written after etcd took each batch).
    QVERIFY(QTest::qWaitFor([&] { return a->ledger(0, 100, {}).size() == 25; }, 5'000));
}

void TstEtcdStore::aDeposedLeaderCommitsNothingMore()
{
    auto a = leading("a");
    QVERIFY(a);
    QVERIFY(commit(*a, {PutLease{lease(1)}}));
    std::vector<StoreHealth> heard;
    a->setHealthCallback([&](const StoreHealth &h) { heard.push_back(h); });
    // Its session ends (as when etcd expires it) and another instance is elected.
    m_election->resign();
    Client other({m_cluster->endpoints(), 1500});
    Election::Options o;
    o.prefix = m_prefix;
    o.address = "http://b:2";
    Election b(other, o);
    QCOMPARE(b.step(), Election::Role::Leader);
    StoreOps late{PutLease{lease(2)}};
    const std::uint64_t ticket = a->submit(late);
    QVERIFY(QTest::qWaitFor([&] { return !heard.empty(); }, 5'000));
    QCOMPARE(heard.back().problem, StoreHealth::Problem::NotLeading);
    QVERIFY2(heard.back().detail.find("is gone") != std::string::npos, heard.back().detail.c_str());
    QVERIFY(a->deposed());
    QVERIFY(a->stats().durable < ticket);
    QCOMPARE(keys("state/lease/").size(), 1u); // nothing of it reached etcd
    a->close();
    QCOMPARE(a->stats().lostOps, 1u);
    b.resign();
}

void TstEtcdStore::withoutQuorumTheStoreIsUnavailableUntilItIsBack()
{
    auto a = leading("a");
    QVERIFY(a);
    QVERIFY(commit(*a, {PutLease{lease(1)}}));
    std::vector<StoreHealth> heard;
    a->setHealthCallback([&](const StoreHealth &h) { heard.push_back(h); });
    std::uint64_t durable = 0;
    a->setDurableCallback([&](std::uint64_t t) { durable = t; });
    m_cluster->kill(1);
    m_cluster->kill(2);
    std::string error;
    StoreOps ops{PutLease{lease(2)}};
    const std::uint64_t ticket = a->submit(ops);
    QVERIFY(QTest::qWaitFor([&] { return !heard.empty(); }, 5'000));
    QCOMPARE(heard.back().problem, StoreHealth::Problem::EtcdUnavailable);
    QVERIFY(durable < ticket);
    QVERIFY2(m_cluster->restart(1, &error), error.c_str());
    QVERIFY2(m_cluster->restart(2, &error), error.c_str());
    // Back: the batch it kept retrying commits, and the store says it is well again. (The
    // election's session, 3 s, outlived the outage here; a longer one would have deposed it.)
    QVERIFY(QTest::qWaitFor([&] { return durable >= ticket; }, 15'000));
    QVERIFY(QTest::qWaitFor([&] { return heard.back().ok(); }, 5'000));
    QCOMPARE(keys("state/lease/").size(), 2u);
}

void TstEtcdStore::theLastHealthHeardIsTheHealthThatHolds()
{
    // The election (through setLapsed) and the writer publish health from different threads;
    // whatever order their queued reports take, the last one heard must be the state that
    // holds, or the service would refuse grants on a store that is well (or grant on one that
    // is not) until the next change.
    auto a = store("a");
    std::vector<StoreHealth> heard;
    a->setHealthCallback([&](const StoreHealth &h) { heard.push_back(h); });
    std::thread other([&] {
        for (int i = 0; i < 20'000; ++i)
            a->setLapsed(i % 2 == 0);
    });
    for (int i = 0; i < 20'000; ++i)
        a->setLapsed(i % 3 == 0);
    other.join();
    QCoreApplication::processEvents();
    // (Nothing heard is right too when it ended as well as it started.)
    QVERIFY((heard.empty() ? StoreHealth{} : heard.back()) == a->health());
    for (std::size_t i = 1; i < heard.size(); ++i)
        QVERIFY2(!(heard[i] == heard[i - 1]), "the same health twice in a row");
    a->setLapsed(true);
    QCoreApplication::processEvents();
    QCOMPARE(heard.back().problem, StoreHealth::Problem::EtcdUnavailable);
    heard.clear();
    a->setLapsed(false);
    QCoreApplication::processEvents();
    QCOMPARE(heard.size(), 1u);
    QVERIFY(heard.back().ok());
    QVERIFY(a->health().ok());
}

void TstEtcdStore::valuesNoLeaseholdWroteAreSkipped()
{
    Client c({m_cluster->endpoints(), 2000});
    QVERIFY(c.put(m_prefix + "state/lease/ls_1", encodeLease(lease(1))));
    QVERIFY(c.put(m_prefix + "state/lease/ls_9", encodeLease(lease(1)))); // not its own id
    QVERIFY(c.put(m_prefix + "state/lease/ls_2", "{\"leaseId\": \"ls_2\"}"));
    QVERIFY(c.put(m_prefix + "state/agent/did:agent:x", "not json"));
    auto a = store("a");
    std::string error;
    const std::optional<StoredState> state = a->load(&error);
    QVERIFY2(state, error.c_str());
    QCOMPARE(state->leases.size(), 1u);
    QVERIFY(state->agents.empty());
    QCOMPARE(state->tokenEnd, 2u); // past the stored lease's token, whatever the mark says
    // A mark no run could have written stops the start.
    QVERIFY(c.put(m_prefix + "state/token_end", "9223372036854775807"));
    auto b = store("b");
    QVERIFY(!b->load(&error));
    QVERIFY2(error.find("impossible") != std::string::npos, error.c_str());
}

QTEST_MAIN(TstEtcdStore)
#include "tst_etcdstore.moc"

// Leader election in a real three-member etcd on loopback: who leads, who is told so, terms,
// fenced writes of a deposed leader, a leader cut off from etcd stopping before its lease can
// end (so that the next one never leads alongside it), and leading on, same term, if it is
// heard again while its key still stands.

#include "election.h"
#include "etcdcluster.h"

#include <QElapsedTimer>
#include <QTest>

using namespace leasehold::etcd;

class TstElection : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void theFirstCandidateLeadsAndTheOthersNameIt();
    void aResignedLeaderIsSucceededWithAHigherTerm();
    void aDeposedLeadersFencedWritesFail();
    void aLeaderCutOffStopsBeforeItsLeaseCanEnd();
    void theNextLeaderNeverLeadsAlongsideACutOffOne();

private:
    std::unique_ptr<Client> client(int first = 0, int timeoutMs = 2000) const
    {
        return std::make_unique<Client>(
            Client::Options{m_cluster->endpointsFrom(first), timeoutMs});
    }
    static Election::Options options(const char *prefix, const char *address)
    {
        Election::Options o;
        o.prefix = prefix;
        o.address = address;
        o.ttlSeconds = 2;
        o.stepDownMarginMs = 500;
        return o;
    }
    std::unique_ptr<EtcdCluster> m_cluster;
};

void TstElection::initTestCase()
{
    m_cluster = std::make_unique<EtcdCluster>(3);
    std::string error;
    QVERIFY2(m_cluster->start(&error), error.c_str());
}

void TstElection::theFirstCandidateLeadsAndTheOthersNameIt()
{
    auto ca = client(), cb = client(1);
    Election a(*ca, options("t1/", "http://a:1")), b(*cb, options("t1/", "http://b:2"));
    QCOMPARE(a.step(), Election::Role::Leader);
    QCOMPARE(b.step(), Election::Role::Follower);
    QCOMPARE(b.leaderAddress(), std::string("http://a:1"));
    QCOMPARE(a.leaderAddress(), std::string("http://a:1"));
    QCOMPARE(b.candidates(), (std::vector<std::string>{"http://a:1", "http://b:2"}));
    QVERIFY(a.term() > 0);
    QVERIFY(b.term() > a.term());
    QCOMPARE(a.step(), Election::Role::Leader); // steps change nothing while nothing changes
    QCOMPARE(b.step(), Election::Role::Follower);
    a.resign();
    b.resign();
}

void TstElection::aResignedLeaderIsSucceededWithAHigherTerm()
{
    auto ca = client(), cb = client(1);
    Election a(*ca, options("t2/", "http://a:1")), b(*cb, options("t2/", "http://b:2"));
    QCOMPARE(a.step(), Election::Role::Leader);
    QCOMPARE(b.step(), Election::Role::Follower);
    const std::int64_t before = a.term();
    a.resign();
    QCOMPARE(a.role(), Election::Role::Candidate);
    QCOMPARE(b.step(), Election::Role::Leader);
    QVERIFY(b.term() > before);
    QCOMPARE(a.step(), Election::Role::Follower); // it stands again, behind the new leader
    QCOMPARE(a.leaderAddress(), std::string("http://b:2"));
    a.resign();
    b.resign();
}

void TstElection::aDeposedLeadersFencedWritesFail()
{
    auto ca = client(), cb = client(1), other = client(2);
    Election a(*ca, options("t3/", "http://a:1")), b(*cb, options("t3/", "http://b:2"));
    QCOMPARE(a.step(), Election::Role::Leader);
    QCOMPARE(b.step(), Election::Role::Follower);
    const auto written = ca->txn({a.fence()}, {Op::put("t3/state", "from a")});
    QVERIFY(written && written->succeeded);
    // A's session ends behind its back (as when etcd expires it): B leads, A's writes fail.
    const auto sessions = other->range(a.electionPrefix(), Client::prefixEnd(a.electionPrefix()));
    QVERIFY(sessions && sessions->size() == 2);
    for (const KeyValue &kv : *sessions) {
        if (kv.value == "http://a:1")
            QVERIFY(other->revokeLease(kv.lease));
    }
    QCOMPARE(b.step(), Election::Role::Leader);
    const auto deposed = ca->txn({a.fence()}, {Op::put("t3/state", "from a, deposed")});
    QVERIFY(deposed);
    QVERIFY(!deposed->succeeded);
    QCOMPARE(other->range("t3/state")->at(0).value, std::string("from a"));
    QVERIFY(a.step() != Election::Role::Leader);
    QCOMPARE(a.leaderAddress(), std::string("http://b:2"));
    a.resign();
    b.resign();
}

void TstElection::aLeaderCutOffStopsBeforeItsLeaseCanEnd()
{
    // A talks to one member only; its clock is the test's.
    std::int64_t now = 1'000'000;
    const int leader = m_cluster->leader();
    const int member = (leader + 1) % m_cluster->size();
    Client ca({{m_cluster->endpoint(member)}, 500});
    // A real session of 10 s: every call to the frozen member costs 500 ms of real time.
    Election::Options o = options("t4/", "http://a:1");
    o.ttlSeconds = 10;
    Election a(ca, o, [&] { return now; });
    QCOMPARE(a.step(), Election::Role::Leader);
    QCOMPARE(a.leadsUntil(), now + 10'000 - 500);
    m_cluster->freeze(member);
    now = a.leadsUntil() - 1;
    QCOMPARE(a.step(), Election::Role::Leader); // nothing heard, but its reckoning still holds
    QVERIFY(!a.problem().empty());
    now = a.leadsUntil();
    const std::int64_t term = a.term();
    QCOMPARE(a.step(), Election::Role::Lapsed);
    QCOMPARE(a.step(), Election::Role::Lapsed); // and stays so while nothing is heard
    // Heard again while its key still stands (well within the real 2 s session), it leads on
    // with the same term: nobody else can have led meanwhile.
    m_cluster->thaw(member);
    QCOMPARE(a.step(), Election::Role::Leader);
    QCOMPARE(a.term(), term);
    QVERIFY(a.leadsUntil() > now);
    a.resign();
}

void TstElection::theNextLeaderNeverLeadsAlongsideACutOffOne()
{
    // Real time throughout: A is cut off from etcd (its member frozen) and keeps stepping; B
    // keeps stepping through the others. B's first moment as leader comes after A's last.
    const int leader = m_cluster->leader();
    const int member = (leader + 1) % m_cluster->size();
    Client ca({{m_cluster->endpoint(member)}, 300});
    auto cb = client(leader);
    Election a(ca, options("t5/", "http://a:1")), b(*cb, options("t5/", "http://b:2"));
    QCOMPARE(a.step(), Election::Role::Leader);
    QCOMPARE(b.step(), Election::Role::Follower);
    m_cluster->freeze(member);
    QElapsedTimer clock;
    clock.start();
    qint64 aLastLed = 0, bFirstLed = -1;
    while (bFirstLed < 0 && clock.elapsed() < 15'000) {
        if (a.step() == Election::Role::Leader)
            aLastLed = clock.elapsed();
        if (b.step() == Election::Role::Leader)
            bFirstLed = clock.elapsed();
    }
    m_cluster->thaw(member);
    QVERIFY2(bFirstLed >= 0, "no new leader within 15 s");
    QVERIFY2(
        aLastLed < bFirstLed,
        qPrintable(QStringLiteral("A led until %1 ms, B from %2 ms").arg(aLastLed).arg(bFirstLed)));
    qInfo("cut off at 0 ms: A stopped leading after %lld ms, B led from %lld ms", aLastLed,
          bFirstLed);
    // And A, heard again, follows B.
    QVERIFY(QTest::qWaitFor([&] { return a.step() == Election::Role::Follower; }, 5'000));
    QCOMPARE(a.leaderAddress(), std::string("http://b:2"));
    a.resign();
    b.resign();
}

QTEST_MAIN(TstElection)
#include "tst_election.moc"

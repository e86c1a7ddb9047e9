// The etcd client against a real three-member etcd cluster on loopback: keys, transactions
// compared on a key's create revision (what cluster mode fences its writes with), leases, and
// failure within the call's bound when members die, freeze or lose their quorum; and a member
// that speaks TLS and asks for client certificates.

#include "etcdclient.h"
#include "etcdcluster.h"

#include <QElapsedTimer>
#include <QTest>

using namespace leasehold::etcd;

class TstEtcdClient : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void keysRangesAndDeletes();
    void aTransactionIsFencedByCreateRevision();
    void leasesAreGrantedRenewedAndRevokedWithTheirKeys();
    void aRefusalIsNamedAndNothingIsApplied();
    void aDeadMemberIsPassedOver();
    void aLostLeaderCostsWritesABoundedTime();
    void aFrozenMemberCostsOneCallWithinItsBound();
    void withoutQuorumAWriteFailsWithinItsBound();
    void overTlsOnlyTheCertifiedAreLetIn();

private:
    Client client(int timeoutMs = 2000) const
    {
        return Client({m_cluster->endpoints(), timeoutMs});
    }
    std::unique_ptr<EtcdCluster> m_cluster;
};

void TstEtcdClient::initTestCase()
{
    m_cluster = std::make_unique<EtcdCluster>(3);
    std::string error;
    QVERIFY2(m_cluster->start(&error), error.c_str());
}

void TstEtcdClient::keysRangesAndDeletes()
{
    Client c = client();
    const std::optional<std::int64_t> first = c.put("t/keys/a", std::string("one\0two", 7));
    QVERIFY2(first, c.lastError().message.c_str());
    QVERIFY(c.put("t/keys/b", "2"));
    QVERIFY(c.put("t/keysx", "sibling"));
    std::int64_t revision = 0;
    const auto a = c.range("t/keys/a", {}, &revision);
    QVERIFY(a);
    QCOMPARE(a->size(), 1u);
    QCOMPARE(a->front().value, std::string("one\0two", 7)); // bytes, not text
    QCOMPARE(a->front().createRevision, *first);
    QVERIFY(revision >= *first + 2);
    const auto prefixed = c.range("t/keys/", Client::prefixEnd("t/keys/"));
    QVERIFY(prefixed);
    QCOMPARE(prefixed->size(), 2u);
    QCOMPARE(prefixed->at(1).key, std::string("t/keys/b"));
    QVERIFY(c.txn({}, {Op::erase("t/keys/", Client::prefixEnd("t/keys/"))}));
    QVERIFY(c.range("t/keys/", Client::prefixEnd("t/keys/"))->empty());
    QCOMPARE(c.range("t/keysx")->size(), 1u);
    QCOMPARE(Client::prefixEnd("a\xff"), std::string("b"));
}

void TstEtcdClient::aTransactionIsFencedByCreateRevision()
{
    Client c = client();
    const std::int64_t elected = *c.put("t/fence/leader", "me");
    const Compare still{
        "t/fence/leader", Compare::Target::Create, Compare::Result::Equal, elected, {}};
    const auto ok = c.txn({still}, {Op::put("t/fence/state", "1"), Op::range("t/fence/state")},
                          {Op::range("t/fence/leader")});
    QVERIFY(ok);
    QVERIFY(ok->succeeded);
    QCOMPARE(ok->ranges.size(), 1u);
    QCOMPARE(ok->ranges[0].at(0).value, std::string("1"));
    // Someone else was elected meanwhile (the key made anew): the old leader's write fails,
    // and the failure branch tells it who leads now.
    QVERIFY(c.txn({}, {Op::erase("t/fence/leader")}));
    QVERIFY(c.put("t/fence/leader", "other"));
    const auto deposed =
        c.txn({still}, {Op::put("t/fence/state", "2")}, {Op::range("t/fence/leader")});
    QVERIFY(deposed);
    QVERIFY(!deposed->succeeded);
    QCOMPARE(deposed->ranges.at(0).at(0).value, std::string("other"));
    QCOMPARE(c.range("t/fence/state")->at(0).value, std::string("1"));
}

void TstEtcdClient::leasesAreGrantedRenewedAndRevokedWithTheirKeys()
{
    Client c = client();
    const std::optional<std::int64_t> lease = c.grantLease(30);
    QVERIFY2(lease, c.lastError().message.c_str());
    QVERIFY(c.put("t/lease/held", "x", *lease));
    QCOMPARE(c.range("t/lease/held")->at(0).lease, *lease);
    const std::optional<std::int64_t> left = c.keepAlive(*lease);
    QVERIFY2(left, c.lastError().message.c_str());
    QVERIFY2(*left > 25 && *left <= 30, std::to_string(*left).c_str());
    QVERIFY(c.revokeLease(*lease));
    QVERIFY(c.range("t/lease/held")->empty()); // its keys went with it
    QCOMPARE(c.keepAlive(*lease), std::optional<std::int64_t>(0));
}

void TstEtcdClient::aRefusalIsNamedAndNothingIsApplied()
{
    Client c = client();
    QVERIFY(!c.put("t/refused", "x", 0x7eadbeef)); // no such lease
    QCOMPARE(c.lastError().kind, Error::Kind::Refused);
    QVERIFY2(c.lastError().message.find("lease not found") != std::string::npos,
             c.lastError().message.c_str());
    QVERIFY(c.range("t/refused")->empty());
    QVERIFY(c.put("t/refused", "later")); // and the client goes on
}

void TstEtcdClient::aDeadMemberIsPassedOver()
{
    std::string error;
    const int leader = m_cluster->leader();
    QVERIFY(leader >= 0);
    const int follower = (leader + 1) % m_cluster->size();
    Client c({m_cluster->endpointsFrom(follower), 2000});
    QVERIFY2(c.put("t/dead", "before"), c.lastError().message.c_str());
    QCOMPARE(c.endpoint(), m_cluster->endpoint(follower).toString());
    m_cluster->kill(follower);
    QElapsedTimer took;
    took.start();
    QVERIFY2(c.put("t/dead", "after"), c.lastError().message.c_str());
    QVERIFY(took.elapsed() < c.timeoutMs());
    QVERIFY(c.endpoint() != m_cluster->endpoint(follower).toString());
    QCOMPARE(c.range("t/dead")->at(0).value, std::string("after"));
    QVERIFY2(m_cluster->restart(follower, &error), error.c_str());
}

void TstEtcdClient::aLostLeaderCostsWritesABoundedTime()
{
    std::string error;
    const int leader = m_cluster->leader();
    QVERIFY(leader >= 0);
    Client c({m_cluster->endpointsFrom((leader + 1) % m_cluster->size()), 1500});
    QVERIFY2(c.put("t/leader", "before"), c.lastError().message.c_str());
    m_cluster->kill(leader);
    // A write while the others elect a new leader either waits out the election or fails
    // within the bound as Unknown (etcd itself may still commit it); it never hangs.
    QElapsedTimer took;
    took.start();
    if (!c.put("t/leader", "during"))
        QCOMPARE(c.lastError().kind, Error::Kind::Unknown);
    QVERIFY2(took.elapsed() < c.timeoutMs() + 500, std::to_string(took.elapsed()).c_str());
    QVERIFY(QTest::qWaitFor([&] { return c.put("t/leader", "after").has_value(); }, 15'000));
    QVERIFY(m_cluster->leader() != leader);
    QVERIFY2(m_cluster->restart(leader, &error), error.c_str());
}

void TstEtcdClient::aFrozenMemberCostsOneCallWithinItsBound()
{
    const int leader = m_cluster->leader();
    QVERIFY(leader >= 0);
    const int follower = (leader + 1) % m_cluster->size();
    Client c({m_cluster->endpointsFrom(follower), 1500});
    QVERIFY2(c.put("t/frozen", "before"), c.lastError().message.c_str());
    m_cluster->freeze(follower);
    QElapsedTimer took;
    took.start();
    // The request reached a member that does not answer: it may have been applied, so it is
    // not sent again; the caller hears so in time.
    QVERIFY(!c.put("t/frozen", "during"));
    QCOMPARE(c.lastError().kind, Error::Kind::Unknown);
    QVERIFY2(took.elapsed() < c.timeoutMs() + 500, std::to_string(took.elapsed()).c_str());
    // The next call goes to another member.
    QVERIFY2(c.put("t/frozen", "after"), c.lastError().message.c_str());
    QVERIFY(c.endpoint() != m_cluster->endpoint(follower).toString());
    m_cluster->thaw(follower);
}

void TstEtcdClient::withoutQuorumAWriteFailsWithinItsBound()
{
    std::string error;
    Client c = client(1500);
    QVERIFY2(c.put("t/quorum", "before"), c.lastError().message.c_str());
    m_cluster->kill(1);
    m_cluster->kill(2);
    QElapsedTimer took;
    took.start();
    QVERIFY(!c.put("t/quorum", "lost"));
    QVERIFY(c.lastError().kind == Error::Kind::Unknown ||
            c.lastError().kind == Error::Kind::Unreachable);
    QVERIFY2(took.elapsed() < c.timeoutMs() + 500, std::to_string(took.elapsed()).c_str());
    QVERIFY2(m_cluster->restart(1, &error), error.c_str());
    QVERIFY2(m_cluster->restart(2, &error), error.c_str());
    // Quorum back: writes go through again (the first may still meet an election).
    QVERIFY(QTest::qWaitFor([&] { return c.put("t/quorum", "back").has_value(); }, 15'000));
}

void TstEtcdClient::overTlsOnlyTheCertifiedAreLetIn()
{
    EtcdCluster secure(1, true);
    std::string error;
    QVERIFY2(secure.start(&error), error.c_str());
    QCOMPARE(secure.endpoint(0).scheme(), QStringLiteral("https"));
    const Client::Tls files = secure.clientTls();
    // With the CA and a certificate it signed: everything works as over plain HTTP.
    Client c({secure.endpoints(), 2000, files});
    QVERIFY2(c.put("t/tls/a", "1"), c.lastError().message.c_str());
    const auto read = c.range("t/tls/a");
    QVERIFY(read && read->size() == 1 && read->front().value == "1");
    QVERIFY(c.endpoint().startsWith(QStringLiteral("https://")));
    // Without a client certificate the member drops the connection (under TLS 1.3 only after
    // the request left, so the client cannot tell it was not applied; it was not).
    Client anonymous({secure.endpoints(), 2000, {files.caFile, {}, {}}});
    QVERIFY(!anonymous.put("t/tls/b", "2"));
    qInfo("without a client certificate: %s", anonymous.lastError().message.c_str());
    // Without the CA (the system's do not know it) the member is not trusted.
    Client untrusting({secure.endpoints(), 2000, {{}, files.certFile, files.keyFile}});
    QVERIFY(!untrusting.put("t/tls/b", "2"));
    QVERIFY2(untrusting.lastError().message.find("certificate") != std::string::npos,
             untrusting.lastError().message.c_str());
    // Plain HTTP to a TLS port gets no answer it can read, and nothing is applied.
    QUrl plain = secure.endpoint(0);
    plain.setScheme(QStringLiteral("http"));
    Client wrong({{plain}, 1000});
    QVERIFY(!wrong.put("t/tls/b", "2"));
    QVERIFY(c.range("t/tls/b") && c.range("t/tls/b")->empty());
    // Files that are not there are named before anything is tried.
    std::string problem;
    QVERIFY(!Client::tlsConfiguration({QStringLiteral("/nonexistent/ca.crt"), {}, {}}, &problem));
    QVERIFY2(problem.find("/nonexistent/ca.crt") != std::string::npos, problem.c_str());
    QVERIFY(!Client::tlsConfiguration({files.caFile, files.certFile, {}}, &problem));
    QVERIFY2(problem.find("needs its key") != std::string::npos, problem.c_str());
}

QTEST_MAIN(TstEtcdClient)
#include "tst_etcdclient.moc"

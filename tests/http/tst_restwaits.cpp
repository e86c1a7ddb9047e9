// REST: the waits and hold-backs that change who is granted when - a holder that asks to
// wait while holding, and lock-delay after an expiry.

#include "servicetest.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstRestWaits : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void lockDelayHoldsAnExpiredNameBack();
    void holderParksOnlyWhenItAsksToWaitWhileHolding();

private:
    std::unique_ptr<ServiceFixture> s;
};

void TstRestWaits::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstRestWaits::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstRestWaits::lockDelayHoldsAnExpiredNameBack()
{
    const HttpResult first = s->post(
        "/lease",
        {{"resource", "lock:deploy/production"}, {"ttlMs", 5'000}, {"lockDelayMs", 2'000}}, kKeyA);
    QCOMPARE(first.status, 200);
    JCOMPARE(first.body["lease"]["lockDelayMs"], 2'000);
    s->clock.advance(5'000);
    s->host->tick();
    const HttpResult held = s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB);
    QCOMPARE(held.status, 409);
    JCOMPARE(held.body["reason"], "lease_held");
    JCOMPARE(held.body["holder"], "did:agent:a");
    JCOMPARE(held.body["heldBackMs"], 2'000);
    QVERIFY2(held.body["message"].get<std::string>().find("lock-delay") != std::string::npos,
             held.body.dump().c_str());
    const HttpResult ledger =
        s->get(QString(RestApi::kBase) + "/ledger?kind=coordination.lease.expired", kKeyB);
    QVERIFY2(ledger.raw.contains("\"heldBackMs\":2000"), ledger.raw.constData());
    s->clock.advance(2'000);
    s->host->tick();
    QCOMPARE(s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status, 200);
}

void TstRestWaits::holderParksOnlyWhenItAsksToWaitWhileHolding()
{
    QCOMPARE(s->post("/lease", {{"resource", "src/a.ts"}}, kKeyA).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "src/b.ts"}}, kKeyB).status, 200);
    // Without the opt-in a holder is refused at once.
    const HttpResult plain =
        s->post("/lease", {{"resource", "src/b.ts"}, {"waitMs", 5'000}}, kKeyA);
    QCOMPARE(plain.status, 409);
    JCOMPARE(plain.body["holdAndWait"], true);
    // With it, it parks, keeping what it holds.
    QNetworkReply *waiting =
        s->send("POST", QString(RestApi::kBase) + "/lease",
                R"({"resource":"src/b.ts","waitMs":20000,"waitWhileHolding":true})", kKeyA);
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    // The other holder waiting the same way for a's file would close the cycle: refused now.
    const HttpResult cycle =
        s->post("/lease",
                {{"resource", "src/a.ts"}, {"waitMs", 20'000}, {"waitWhileHolding", true}}, kKeyB);
    QCOMPARE(cycle.status, 409);
    JCOMPARE(cycle.body["reason"], "deadlock");
    JCOMPARE(cycle.body["holder"], "did:agent:a");
    JCOMPARE(cycle.body["waitingOn"], "fs:src/b.ts");
    JCOMPARE(cycle.body["cycle"],
             json::array({{{"agent", "did:agent:b"}, {"resource", "fs:src/a.ts"}},
                          {{"agent", "did:agent:a"}, {"resource", "fs:src/b.ts"}}}));
    QVERIFY(!waiting->isFinished());
    QCOMPARE(s->post("/release", json::object(), kKeyB).status, 200);
    const HttpResult granted = ServiceFixture::finish(waiting);
    QCOMPARE(granted.status, 200);
    JCOMPARE(granted.body["lease"]["resource"], "fs:src/b.ts");
    QCOMPARE(s->host->engine().agentView("did:agent:a").held.size(), 2u);
}

QTEST_GUILESS_MAIN(TstRestWaits)
#include "tst_restwaits.moc"

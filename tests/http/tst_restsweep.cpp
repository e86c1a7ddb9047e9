// REST: POST /admin/sweep, the stale-holder sweep an operator paged at night reaches for. Only
// holders live on no surface and not seen for notLiveForMs; dryRun changes nothing; admins only.

#include "servicetest.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstRestSweep : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void aDryRunNamesTheGoneHolderAndChangesNothing();
    void aSweepReleasesItAndTheLedgerSaysSweep();
    void onlyAnAdminMaySweepAndTheBoundIsChecked();

private:
    void holderGoesQuiet();
    std::unique_ptr<ServiceFixture> s;
};

void TstRestSweep::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstRestSweep::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstRestSweep::holderGoesQuiet()
{
    QCOMPARE(
        s->post("/lease", {{"resource", "lock:deploy/production"}, {"ttlMs", 3'600'000}}, kKeyA)
            .status,
        200);
    s->clock.advance(20 * 60'000);
    s->front->presence().sweep(); // its REST presence lapses with the live window
    // b was seen just now: live, not swept.
    QCOMPARE(s->post("/lease", {{"resource", "lock:other"}, {"ttlMs", 3'600'000}}, kKeyB).status,
             200);
}

void TstRestSweep::aDryRunNamesTheGoneHolderAndChangesNothing()
{
    holderGoesQuiet();
    const HttpResult r =
        s->post("/admin/sweep", {{"notLiveForMs", 600'000}, {"dryRun", true}}, kKeyAdmin);
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body["agents"].size(), 1u);
    JCOMPARE(r.body["agents"][0]["actorDid"], "did:agent:a");
    JCOMPARE(r.body["agents"][0]["resources"], json::array({"lock:deploy/production"}));
    JCOMPARE(r.body["agents"][0]["idleMs"], 20 * 60'000);
    JCOMPARE(r.body["released"], 0);
    QCOMPARE(s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status, 409);
}

void TstRestSweep::aSweepReleasesItAndTheLedgerSaysSweep()
{
    holderGoesQuiet();
    const HttpResult r = s->post("/admin/sweep", {{"notLiveForMs", 600'000}}, kKeyAdmin);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body["released"], 1);
    QCOMPARE(s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status, 200);
    const HttpResult ledger = s->get(
        QString(RestApi::kBase) + "/ledger?kind=coordination.lease.admin.release_holder", kKeyB);
    QCOMPARE(ledger.body["events"].size(), 1u);
    JCOMPARE(ledger.body["events"][0]["reason"], "sweep");
    JCOMPARE(ledger.body["events"][0]["actorDid"], "did:op:alice");
    JCOMPARE(ledger.body["events"][0]["target"], "did:agent:a");
}

void TstRestSweep::onlyAnAdminMaySweepAndTheBoundIsChecked()
{
    QCOMPARE(s->post("/admin/sweep", {{"notLiveForMs", 600'000}}, kKeyA).status, 403);
    const HttpResult tooShort = s->post("/admin/sweep", {{"notLiveForMs", 1'000}}, kKeyAdmin);
    QCOMPARE(tooShort.status, 400);
    QVERIFY2(tooShort.raw.contains("notLiveForMs"), tooShort.raw.constData());
    QCOMPARE(s->post("/admin/sweep", json::object(), kKeyAdmin).status, 400);
}

QTEST_GUILESS_MAIN(TstRestSweep)
#include "tst_restsweep.moc"

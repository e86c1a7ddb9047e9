// REST: release requests end to end. A refused agent (or an operator) asks the holder to let
// go; the holder's next reply, whatever it calls, carries the request; it declines, or the
// deadline passes (overdue, in the ledger); an agent with no business is 403; bad input is 400
// naming the field.

#include "servicetest.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstRestReleaseRequests : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void theHoldersNextReplyCarriesTheRequest();
    void theHolderDeclines();
    void anUnansweredDeadlineIsOverdueInTheLedger();
    void anAgentWithNoBusinessIs403();
    void anOperatorMayAsk();
    void badInputNamesTheField_data();
    void badInputNamesTheField();

private:
    // a holds lock:deploy/production; b was refused it; b asks a to let go.
    std::string raise(const json &extra = json::object());
    std::unique_ptr<ServiceFixture> s;
};

void TstRestReleaseRequests::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstRestReleaseRequests::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

std::string TstRestReleaseRequests::raise(const json &extra)
{
    const HttpResult held =
        s->post("/lease", {{"resource", "lock:deploy/production"}, {"ttlMs", 600'000}}, kKeyA);
    if (held.status != 200)
        return {};
    if (s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status != 409)
        return {};
    json body = {{"resource", "lock:deploy/production"},
                 {"reason", "hotfix waits for the deploy lock"},
                 {"urgency", "high"}};
    body.update(extra);
    const HttpResult r = s->post("/release-request", body, kKeyB);
    if (r.status != 200)
        qWarning("raise: %d %s", r.status, r.raw.constData());
    return r.body.value("requestId", std::string());
}

void TstRestReleaseRequests::theHoldersNextReplyCarriesTheRequest()
{
    // No request open: the fast grant answer has no field at all.
    const HttpResult plain = s->post("/lease", {{"resource", "lock:other"}}, kKeyA);
    QCOMPARE(plain.status, 200);
    QVERIFY(!plain.body.contains("releaseRequests"));
    const std::string id = raise();
    QVERIFY(!id.empty());
    // A renewal by lease (the fast path), a check and a renew all carry it.
    const HttpResult again = s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyA);
    QCOMPARE(again.status, 200);
    QCOMPARE(again.body["releaseRequests"].size(), 1u);
    const json &r = again.body["releaseRequests"][0];
    JCOMPARE(r["requestId"], id);
    JCOMPARE(r["requester"], "did:agent:b");
    JCOMPARE(r["holder"], "did:agent:a");
    JCOMPARE(r["urgency"], "high");
    JCOMPARE(r["reason"], "hotfix waits for the deploy lock");
    JCOMPARE(r["overdue"], false);
    JCOMPARE(r["deadlineAt"], nullptr);
    JCOMPARE(again.body["lease"]["holder"], "did:agent:a");
    const HttpResult check = s->post("/check", {{"resource", "lock:deploy/production"}}, kKeyA);
    QCOMPARE(check.body["releaseRequests"].size(), 1u);
    const HttpResult renew = s->post(
        "/renew",
        {{"resource", "lock:deploy/production"}, {"leaseId", again.body["lease"]["leaseId"]}},
        kKeyA);
    QCOMPARE(renew.status, 200);
    QCOMPARE(renew.body["releaseRequests"].size(), 1u);
    // The requester's own replies do not carry it; the status snapshot lists it with its age.
    s->clock.advance(4'000);
    QVERIFY(
        !s->post("/lease", {{"resource", "lock:b-only"}}, kKeyB).body.contains("releaseRequests"));
    const HttpResult status = s->get(QString(RestApi::kBase) + "/status", kKeyB);
    QCOMPARE(status.body["releaseRequests"].size(), 1u);
    JCOMPARE(status.body["releaseRequests"][0]["ageMs"], 4'000);
    // The holder answers by releasing: the request ends, and its reply says so by silence.
    const HttpResult released =
        s->post("/release", {{"resource", "lock:deploy/production"}}, kKeyA);
    QCOMPARE(released.status, 200);
    QVERIFY(!released.body.contains("releaseRequests"));
    QVERIFY(s->get(QString(RestApi::kBase) + "/release-requests", kKeyB)
                .body["releaseRequests"]
                .empty());
    const HttpResult ledger =
        s->get(QString(RestApi::kBase) + "/ledger?kind=coordination.release_request.raised", kKeyB);
    QCOMPARE(ledger.body["events"].size(), 1u);
    JCOMPARE(ledger.body["events"][0]["requestId"], id);
    JCOMPARE(ledger.body["events"][0]["holder"], "did:agent:a");
    JCOMPARE(ledger.body["events"][0]["requester"], "did:agent:b");
    JCOMPARE(ledger.body["events"][0]["urgency"], "high");
}

void TstRestReleaseRequests::theHolderDeclines()
{
    const std::string id = raise();
    QVERIFY(!id.empty());
    const QByteArray route = "/release-request/" + QByteArray::fromStdString(id) + "/decline";
    const HttpResult byOther = s->post(route.constData(), {{"reason", "no"}}, kKeyB);
    QCOMPARE(byOther.status, 403);
    JCOMPARE(byOther.body["reason"], "not_holder");
    const HttpResult unknown =
        s->post("/release-request/rr_nothing/decline", {{"reason", "no"}}, kKeyA);
    QCOMPARE(unknown.status, 404);
    JCOMPARE(unknown.body["reason"], "unknown_request");
    const HttpResult declined =
        s->post(route.constData(), {{"reason", "mid-migration, 5 more minutes"}}, kKeyA);
    QCOMPARE(declined.status, 200);
    JCOMPARE(declined.body["requestId"], id);
    QVERIFY(!declined.body.contains("releaseRequests"));
    const HttpResult ledger = s->get(
        QString(RestApi::kBase) + "/ledger?kind=coordination.release_request.declined", kKeyB);
    QCOMPARE(ledger.body["events"].size(), 1u);
    JCOMPARE(ledger.body["events"][0]["reason"], "mid-migration, 5 more minutes");
    JCOMPARE(ledger.body["events"][0]["actorDid"], "did:agent:a");
    // a still holds: a request never moves a lease by itself.
    QCOMPARE(s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status, 409);
}

void TstRestReleaseRequests::anUnansweredDeadlineIsOverdueInTheLedger()
{
    const std::string id = raise({{"deadlineSeconds", 30}});
    QVERIFY(!id.empty());
    s->clock.advance(29'999);
    s->host->tick();
    JCOMPARE(s->post("/check", {{"resource", "lock:deploy/production"}}, kKeyA)
                 .body["releaseRequests"][0]["overdue"],
             false);
    s->clock.advance(1);
    s->host->tick();
    const HttpResult check = s->post("/check", {{"resource", "lock:deploy/production"}}, kKeyA);
    JCOMPARE(check.body["releaseRequests"][0]["overdue"], true);
    JCOMPARE(check.body["releaseRequests"][0]["requestId"], id);
    const HttpResult ledger = s->get(
        QString(RestApi::kBase) + "/ledger?kind=coordination.release_request.overdue", kKeyB);
    QCOMPARE(ledger.body["events"].size(), 1u);
    JCOMPARE(ledger.body["events"][0]["requestId"], id);
    JCOMPARE(ledger.body["events"][0]["deadlineAt"], 1'800'000'000'000 + 30'000);

    // The health check names it, with the lever that ends it.
    const HttpResult health = s->get(QString(RestApi::kBase) + "/health", kKeyB);
    QCOMPARE(health.status, 200);
    json finding;
    for (const json &f : health.body["findings"])
        if (f["code"] == "release_overdue")
            finding = f;
    QVERIFY2(finding.is_object(), health.raw.constData());
    JCOMPARE(finding["actorDid"], "did:agent:a");
    const std::string leaseId = check.body["releaseRequests"][0]["leaseId"].get<std::string>();
    QVERIFY2(finding["fix"].get<std::string>().find("ctl release-lease " + leaseId) !=
                 std::string::npos,
             health.raw.constData());
    // That lever: admins only, one lease, then the waiter may have it.
    QCOMPARE(s->post("/admin/release-lease", {{"leaseId", leaseId}}, kKeyB).status, 403);
    const HttpResult unknown =
        s->post("/admin/release-lease", {{"leaseId", "lease_nothing"}}, kKeyAdmin);
    QCOMPARE(unknown.status, 404);
    JCOMPARE(unknown.body["reason"], "unknown_lease");
    QCOMPARE(s->post("/admin/release-lease", json::object(), kKeyAdmin).status, 400);
    const HttpResult forced = s->post("/admin/release-lease", {{"leaseId", leaseId}}, kKeyAdmin);
    QCOMPARE(forced.status, 200);
    JCOMPARE(forced.body["released"], 1);
    QCOMPARE(s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status, 200);
    const HttpResult after = s->get(QString(RestApi::kBase) + "/health", kKeyB);
    for (const json &f : after.body["findings"])
        QVERIFY2(f["code"] != "release_overdue", after.raw.constData());
}

void TstRestReleaseRequests::anAgentWithNoBusinessIs403()
{
    QCOMPARE(s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyA).status, 200);
    const HttpResult r =
        s->post("/release-request",
                {{"resource", "lock:deploy/production"}, {"reason", "mine now"}}, kKeyB);
    QCOMPARE(r.status, 403);
    JCOMPARE(r.body["reason"], "no_business");
    QVERIFY2(r.body["error"].get<std::string>().find("neither waiting") != std::string::npos,
             r.raw.constData());
    // Naming another agent as the requester is refused as for every call.
    const HttpResult other = s->post(
        "/release-request",
        {{"resource", "lock:deploy/production"}, {"reason", "x"}, {"actorDid", "did:agent:c"}},
        kKeyB);
    QCOMPARE(other.status, 403);
    JCOMPARE(other.body["reason"], "actor_mismatch");
}

void TstRestReleaseRequests::anOperatorMayAsk()
{
    const HttpResult held = s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyA);
    const HttpResult r = s->post(
        "/release-request",
        {{"leaseId", held.body["lease"]["leaseId"]}, {"reason", "incident 42"}, {"urgency", "low"}},
        kKeyAdmin);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body["request"]["byOperator"], true);
    JCOMPARE(r.body["request"]["requester"], "did:op:alice");
    const HttpResult nobody =
        s->post("/release-request", {{"resource", "lock:free"}, {"reason", "x"}}, kKeyAdmin);
    QCOMPARE(nobody.status, 409);
    JCOMPARE(nobody.body["reason"], "not_held");
}

void TstRestReleaseRequests::badInputNamesTheField_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("field");
    QTest::newRow("missing resource") << QByteArray(R"({"reason":"x"})") << "resource";
    QTest::newRow("bad urgency") << QByteArray(
                                        R"({"resource":"lock:a","reason":"x","urgency":"now"})")
                                 << "urgency";
    QTest::newRow("urgency not text")
        << QByteArray(R"({"resource":"lock:a","reason":"x","urgency":3})") << "urgency";
    QTest::newRow("negative deadline")
        << QByteArray(R"({"resource":"lock:a","reason":"x","deadlineSeconds":-1})")
        << "deadlineSeconds";
    QTest::newRow("deadline not a number")
        << QByteArray(R"({"resource":"lock:a","reason":"x","deadlineSeconds":"soon"})")
        << "deadlineSeconds";
    QTest::newRow("missing reason") << QByteArray(R"({"resource":"lock:a"})") << "reason";
    QTest::newRow("empty resource") << QByteArray(R"({"resource":"","reason":"x"})") << "resource";
}

void TstRestReleaseRequests::badInputNamesTheField()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, field);
    const HttpResult r = ServiceFixture::finish(
        s->send("POST", QString(RestApi::kBase) + "/release-request", body, kKeyB));
    QCOMPARE(r.status, 400);
    JCOMPARE(r.body["reason"], "invalid_request");
    const std::string error = r.body.value("error", std::string());
    QVERIFY2(error.find(field.toStdString()) != std::string::npos, error.c_str());
}

QTEST_MAIN(TstRestReleaseRequests)
#include "tst_restreleaserequests.moc"

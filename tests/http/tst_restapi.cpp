#include "servicetest.h"

#include <QSignalSpy>

#include <QTcpSocket>

#include <set>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstRestApi : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void twoReleaseAgentsOnTheDeployLock();
    void crashedHolderLapsesAndCostsTrust();
    void deadlockBetweenTwoAgentsIsRefused();
    void herdOfFiftyBacksOff();
    void boundedWaitIsGrantedOnRelease();
    void boundedWaitEndsAtItsDeadline();
    void clientThatLeavesCancelsItsWait();
    void releaseRenewPinAndUnpin();
    void statusWaitAndLedgerAnswer();
    void adminLevers();
    void invariantsCheckIsAdminOnly();
    void adminMintsKeys();
    void ledgerExportsJsonLinesAndCsv();
    void authMatrix_data();
    void authMatrix();
    void openModeNeedsNoKeyButAdminStillDoes();
    void openApiDescribesExactlyTheRoutes();
    void metricsArePrometheusText();

private:
    std::unique_ptr<ServiceFixture> s;
};

void TstRestApi::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstRestApi::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstRestApi::twoReleaseAgentsOnTheDeployLock()
{
    const HttpResult first = s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyA);
    QCOMPARE(first.status, 200);
    JCOMPARE(first.body["lease"]["holder"], "did:agent:a");
    JCOMPARE(first.body["lease"]["resource"], "lock:deploy/production");
    QCOMPARE(first.body["leases"].size(), 1u);
    s->clock.advance(3'000);
    const HttpResult second = s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB);
    QCOMPARE(second.status, 409);
    JCOMPARE(second.body["reason"], "lease_held");
    JCOMPARE(second.body["holder"], "did:agent:a");
    JCOMPARE(second.body["heldForMs"], 3'000);
    JCOMPARE(second.body["expiresInMs"], 27'000);
    JCOMPARE(second.body["stampede"]["waitMs"], 25);
    QCOMPARE(second.header("Retry-After"), QByteArray("1"));
}

void TstRestApi::crashedHolderLapsesAndCostsTrust()
{
    QCOMPARE(s->post("/lease", {{"resource", "src/app.cpp"}, {"ttlMs", 5'000}}, kKeyA).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "src/app.cpp"}}, kKeyB).status, 409);
    // The holder never comes back; its time runs out.
    s->clock.advance(5'000);
    s->host->tick();
    QCOMPARE(s->post("/lease", {{"resource", "src/app.cpp"}}, kKeyB).status, 200);
    const HttpResult status = s->get(QString(RestApi::kBase) + "/status", kKeyB);
    bool found = false;
    for (const json &t : status.body["trust"]) {
        if (t["actorDid"] == "did:agent:a") {
            JCOMPARE(t["score"], -5.0);
            JCOMPARE(t["expiries"], 1);
            found = true;
        }
    }
    QVERIFY(found);
    const HttpResult ledger =
        s->get(QString(RestApi::kBase) + "/ledger?actorDid=did:agent:a", kKeyB);
    QVERIFY(ledger.raw.contains("coordination.lease.expired"));
}

void TstRestApi::deadlockBetweenTwoAgentsIsRefused()
{
    QCOMPARE(s->post("/lease", {{"resource", "lock:a"}}, kKeyA).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "lock:b"}}, kKeyB).status, 200);
    JCOMPARE(s->post("/lease", {{"resource", "lock:b"}}, kKeyA).body["reason"], "lease_held");
    const HttpResult r = s->post("/lease", {{"resource", "lock:a"}}, kKeyB);
    QCOMPARE(r.status, 409);
    JCOMPARE(r.body["reason"], "deadlock");
    JCOMPARE(r.body["holder"], "did:agent:a");
    JCOMPARE(r.body["waitingOn"], "lock:b");
    JCOMPARE(r.body["cycle"], json::parse(R"([{"agent":"did:agent:b","resource":"lock:a"},
                                              {"agent":"did:agent:a","resource":"lock:b"}])"));
    // Retrying the same call cannot help: the caller has to let go first.
    JCOMPARE(r.body["retryable"], false);
    QVERIFY(r.header("Retry-After").isEmpty());
}

void TstRestApi::herdOfFiftyBacksOff()
{
    s = std::make_unique<ServiceFixture>(true); // open mode: fifty agents name themselves
    QCOMPARE(
        s->post("/lease", {{"resource", "src/hot.cpp"}, {"actorDid", "did:agent:holder"}}).status,
        200);
    std::int64_t last = 0;
    for (int i = 0; i < 50; ++i) {
        const HttpResult r = s->post("/lease", {{"resource", "src/hot.cpp"},
                                                {"actorDid", "did:agent:" + std::to_string(i)}});
        QCOMPARE(r.status, 409);
        const std::int64_t waitMs = r.body["stampede"]["waitMs"];
        QVERIFY(waitMs >= last);
        QVERIFY(waitMs <= 800);
        last = waitMs;
    }
    QCOMPARE(last, 800);
    const HttpResult queue = s->get(QString(RestApi::kBase) + "/wait?resource=src/hot.cpp");
    QCOMPARE(queue.body["waiters"].size(), 50u);
}

void TstRestApi::boundedWaitIsGrantedOnRelease()
{
    QCOMPARE(s->post("/lease", {{"resource", "lock:x"}}, kKeyA).status, 200);
    QNetworkReply *waiting = s->send("POST", QString(RestApi::kBase) + "/lease",
                                     R"({"resource":"lock:x","waitMs":20000})", kKeyB);
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    QVERIFY(!waiting->isFinished());
    QCOMPARE(s->post("/release", {{"resource", "lock:x"}}, kKeyA).status, 200);
    const HttpResult granted = ServiceFixture::finish(waiting);
    QCOMPARE(granted.status, 200);
    JCOMPARE(granted.body["lease"]["holder"], "did:agent:b");
}

void TstRestApi::boundedWaitEndsAtItsDeadline()
{
    QCOMPARE(s->post("/lease", {{"resource", "lock:x"}}, kKeyA).status, 200);
    QNetworkReply *waiting = s->send("POST", QString(RestApi::kBase) + "/lease",
                                     R"({"resource":"lock:x","waitMs":2000})", kKeyB);
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    s->clock.advance(2'000);
    s->host->tick();
    const HttpResult r = ServiceFixture::finish(waiting);
    QCOMPARE(r.status, 409);
    JCOMPARE(r.body["holder"], "did:agent:a");
    JCOMPARE(r.body["waitedMs"], 2'000);
}

void TstRestApi::clientThatLeavesCancelsItsWait()
{
    QCOMPARE(s->post("/lease", {{"resource", "lock:x"}}, kKeyA).status, 200);
    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, s->port);
    QVERIFY(raw.waitForConnected(5'000));
    const QByteArray body = R"({"resource":"lock:x","waitMs":20000})";
    raw.write("POST /api/v1/acp/coordination/lease HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              "Authorization: Bearer " +
              kKeyB +
              "\r\nContent-Type: application/json\r\n"
              "Content-Length: " +
              QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    raw.abort();
    QTRY_COMPARE(s->host->engine().parkedCount(), 0u);
    QCOMPARE(s->post("/release", {{"resource", "lock:x"}}, kKeyA).status, 200);
    QCOMPARE(s->host->engine().leaseCount(), 0u); // b took nothing
}

void TstRestApi::releaseRenewPinAndUnpin()
{
    const HttpResult g = s->post("/lease", {{"resources", {"src/a.cpp", "src/b.cpp"}}}, kKeyA);
    QCOMPARE(g.status, 200);
    const std::string id = g.body["leases"][0]["leaseId"];
    s->clock.advance(10'000);
    const HttpResult renewed =
        s->post("/renew", {{"resource", "src/a.cpp"}, {"leaseId", id}, {"ttlMs", 60'000}}, kKeyA);
    QCOMPARE(renewed.status, 200);
    JCOMPARE(renewed.body["lease"]["ttlMs"], 60'000);
    JCOMPARE(
        s->post("/renew", {{"resource", "src/a.cpp"}, {"leaseId", "ls_x"}}, kKeyA).body["reason"],
        "stale_lease");
    const HttpResult pin = s->post("/pin", {{"leaseId", id}}, kKeyA);
    QCOMPARE(pin.status, 200);
    const HttpResult rel = s->post("/release", {{"resource", "src/a.cpp"}}, kKeyA);
    JCOMPARE(rel.body["released"][0]["pendingRelease"], true);
    QCOMPARE(s->post("/lease", {{"resource", "src/a.cpp"}}, kKeyB).status, 409);
    QCOMPARE(s->post("/unpin", {{"pinId", pin.body["pin"]["pinId"]}}, kKeyA).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "src/a.cpp"}}, kKeyB).status, 200);
    JCOMPARE(s->post("/release", {{"resource", "src/zzz"}}, kKeyA).body["reason"], "not_held");
    const HttpResult bare = s->post("/release", json::object(), kKeyA);
    QCOMPARE(bare.body["released"].size(), 1u); // src/b.cpp
    JCOMPARE(bare.body["trust"], 1.0);
}

void TstRestApi::statusWaitAndLedgerAnswer()
{
    s->post("/lease", {{"resource", "lock:x"}}, kKeyA);
    s->post("/lease", {{"resource", "lock:x"}}, kKeyB);
    const HttpResult status = s->get(QString(RestApi::kBase) + "/status", kKeyA);
    QCOMPARE(status.status, 200);
    for (const char *field :
         {"leases", "waiters", "deadlocks", "pins", "trust", "agents", "counters"})
        QVERIFY2(status.body.contains(field), field);
    const HttpResult wait = s->get(QString(RestApi::kBase) + "/wait", kKeyA);
    JCOMPARE(wait.body["waiters"][0]["kind"], "want");
    JCOMPARE(wait.body["waiters"][0]["holder"], "did:agent:a");
    const HttpResult page = s->get(QString(RestApi::kBase) + "/ledger?since=0&limit=1", kKeyA);
    QCOMPARE(page.body["events"].size(), 1u);
    JCOMPARE(page.body["events"][0]["kind"], "coordination.lease.granted");
    const HttpResult next = s->get(
        QString(RestApi::kBase) + "/ledger?since=" + QString::number(page.body["next"].get<int>()),
        kKeyA);
    JCOMPARE(next.body["events"][0]["kind"], "coordination.lease.refused");
}

void TstRestApi::ledgerExportsJsonLinesAndCsv()
{
    s->post("/lease", {{"resource", "lock:a,b"}}, kKeyA);
    s->post("/release", json::object(), kKeyA);
    const QString base = QString(RestApi::kBase) + QStringLiteral("/ledger/export");
    const HttpResult lines = s->get(base + QStringLiteral("?format=jsonl"), kKeyB);
    QCOMPARE(lines.status, 200);
    QCOMPARE(lines.header("Content-Type"), QByteArray("application/x-ndjson"));
    const QList<QByteArray> rows = lines.raw.trimmed().split('\n');
    QCOMPARE(rows.size(), 2);
    JCOMPARE(json::parse(rows[0].toStdString())["kind"], "coordination.lease.granted");
    QCOMPARE(lines.header("X-Ledger-Next"), QByteArray("2"));
    // The page after the last is empty — not the JSON text `null` — and says where to go on.
    const HttpResult end = s->get(base + QStringLiteral("?format=jsonl&since=2"), kKeyB);
    QCOMPARE(end.status, 200);
    QCOMPARE(end.raw, QByteArray());
    QCOMPARE(end.header("X-Ledger-Next"), QByteArray("2"));
    const HttpResult csv = s->get(base + QStringLiteral("?format=csv&since=1"), kKeyB);
    QCOMPARE(csv.status, 200);
    QVERIFY(csv.header("Content-Type").startsWith("text/csv"));
    QVERIFY2(csv.raw.startsWith("seq,at,kind,actorDid,resource,leaseId,token,reason,ttlMs,op,mode,"
                                "waitedMs,holder,cycle,by,whileDown,target,released,suspended,"
                                "paused,pinId,before,after,to,via,pid,command,heldBackMs,requestId,"
                                "urgency,deadlineAt,requester,summary\r\n2,"),
             csv.raw.constData());
    QVERIFY2(csv.raw.contains(",coordination.lease.released,did:agent:a,\"lock:a,b\","),
             csv.raw.constData()); // a comma inside a field is quoted
    QCOMPARE(s->get(base + QStringLiteral("?format=xml"), kKeyB).status, 400);
    // Filters: by kind, and by resource (which covers what lies below it).
    const QString ledger = QString(RestApi::kBase) + QStringLiteral("/ledger");
    HttpResult r = s->get(ledger + QStringLiteral("?kind=coordination.lease.released"), kKeyB);
    QCOMPARE(r.body["events"].size(), 1u);
    JCOMPARE(r.body["events"][0]["seq"], 2);
    QCOMPARE(s->get(ledger + QStringLiteral("?resource=lock:a,b"), kKeyB).body["events"].size(),
             2u);
    QCOMPARE(s->get(ledger + QStringLiteral("?resource=lock:a"), kKeyB).body["events"].size(), 0u);
    r = s->get(ledger + QStringLiteral("?kind=granted"), kKeyB);
    QCOMPARE(r.status, 400);
    QVERIFY(r.body["error"].get<std::string>().find("kind") == 0);
    QCOMPARE(s->get(ledger + QStringLiteral("?resource=../up"), kKeyB).status, 400);
    QCOMPARE(s->get(base + QStringLiteral("?format=csv")).status, 401);
}

void TstRestApi::adminLevers()
{
    s->post("/lease", {{"resources", {"lock:1", "lock:2"}}}, kKeyA);
    s->post("/lease", {{"resource", "lock:3"}}, kKeyB);
    JCOMPARE(
        s->post("/admin/release-holder", {{"actorDid", "did:agent:a"}}, kKeyAdmin).body["released"],
        2);
    QCOMPARE(
        s->post("/admin/suspend", {{"actorDid", "did:agent:a"}, {"suspended", true}}, kKeyAdmin)
            .status,
        200);
    JCOMPARE(s->post("/lease", {{"resource", "lock:9"}}, kKeyA).body["reason"], "suspended");
    QCOMPARE(s->post("/admin/pause", {{"paused", true}}, kKeyAdmin).status, 200);
    JCOMPARE(s->post("/lease", {{"resource", "lock:9"}}, kKeyB).body["reason"], "paused");
    QCOMPARE(s->post("/admin/pause", {{"paused", false}}, kKeyAdmin).status, 200);
    JCOMPARE(s->post("/admin/release-all", nullptr, kKeyAdmin).body["released"], 1);
    const HttpResult ledger =
        s->get(QString(RestApi::kBase) + "/ledger?actorDid=did:op:alice", kKeyAdmin);
    QCOMPARE(ledger.body["events"].size(), 5u); // every lever, under the operator's name
}

void TstRestApi::invariantsCheckIsAdminOnly()
{
    s->post("/lease", {{"resources", {"lock:1", "lock:2"}}}, kKeyA);
    const QString route = QString(RestApi::kBase) + "/admin/invariants";
    QCOMPARE(s->get(route, kKeyA).status, 403);
    const HttpResult r = s->get(route, kKeyAdmin);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body, (json{{"ok", true}, {"leases", 2}, {"parked", 0}}));
}

void TstRestApi::adminMintsKeys()
{
    const HttpResult minted = s->post("/admin/keys", {{"actorDid", "did:agent:new"}}, kKeyAdmin);
    QCOMPARE(minted.status, 201);
    JCOMPARE(minted.body["role"], "agent");
    const QByteArray key = QByteArray::fromStdString(minted.body["key"].get<std::string>());
    QVERIFY(key.size() >= 32);
    const HttpResult granted = s->post("/lease", {{"resource", "lock:n"}}, key);
    QCOMPARE(granted.status, 200);
    JCOMPARE(granted.body["lease"]["holder"], "did:agent:new");
    // The new key is an agent's: it may not mint, nor may any agent.
    QCOMPARE(s->post("/admin/keys", {{"actorDid", "did:agent:x"}}, key).status, 403);
    QCOMPARE(s->post("/admin/keys", {{"actorDid", "did:agent:x"}}, kKeyA).status, 403);
    // Bad input names the field.
    const HttpResult missing = s->post("/admin/keys", json::object(), kKeyAdmin);
    QCOMPARE(missing.status, 400);
    QVERIFY(missing.body["error"].get<std::string>().find("actorDid") != std::string::npos);
    const HttpResult role =
        s->post("/admin/keys", {{"actorDid", "did:agent:x"}, {"role", "root"}}, kKeyAdmin);
    QCOMPARE(role.status, 400);
    QVERIFY(role.body["error"].get<std::string>().find("role") != std::string::npos);
    for (const char *bad : {"agent x", "did:agent:", "did:agent", "did:Agent:x", "did:agent:a b"})
        QCOMPARE(s->post("/admin/keys", {{"actorDid", bad}}, kKeyAdmin).status, 400);
    // Without a store nothing is kept, but the key is accepted for this run.
    QCOMPARE(
        s->post("/admin/keys", {{"actorDid", "did:op:bob"}, {"role", "admin"}}, kKeyAdmin).status,
        201);
}

void TstRestApi::authMatrix_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("route");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<int>("status");
    const QByteArray lease = R"({"resource":"lock:m","actorDid":"did:agent:a"})";
    QTest::newRow("lease without key")
        << QByteArray("POST") << "/lease" << lease << QByteArray() << 401;
    QTest::newRow("lease unknown key")
        << QByteArray("POST") << "/lease" << lease << QByteArray("nope-nope-nope-nope") << 401;
    QTest::newRow("lease own key") << QByteArray("POST") << "/lease" << lease << kKeyA << 200;
    QTest::newRow("lease naming another")
        << QByteArray("POST") << "/lease" << lease << kKeyB << 403;
    QTest::newRow("lease key implies actor")
        << QByteArray("POST") << "/lease" << QByteArray(R"({"resource":"lock:n"})") << kKeyB << 200;
    QTest::newRow("status without key")
        << QByteArray("GET") << "/status" << QByteArray() << QByteArray() << 401;
    QTest::newRow("status agent key")
        << QByteArray("GET") << "/status" << QByteArray() << kKeyA << 200;
    QTest::newRow("ledger without key")
        << QByteArray("GET") << "/ledger" << QByteArray() << QByteArray() << 401;
    QTest::newRow("wait admin key")
        << QByteArray("GET") << "/wait" << QByteArray() << kKeyAdmin << 200;
    QTest::newRow("admin route agent key")
        << QByteArray("POST") << "/admin/release-all" << QByteArray("{}") << kKeyA << 403;
    QTest::newRow("admin route no key")
        << QByteArray("POST") << "/admin/release-all" << QByteArray("{}") << QByteArray() << 401;
    QTest::newRow("admin route admin key")
        << QByteArray("POST") << "/admin/release-all" << QByteArray("{}") << kKeyAdmin << 200;
    QTest::newRow("healthz public")
        << QByteArray("GET") << "/healthz" << QByteArray() << QByteArray() << 200;
    QTest::newRow("metrics public")
        << QByteArray("GET") << "/metrics" << QByteArray() << QByteArray() << 200;
    QTest::newRow("openapi public")
        << QByteArray("GET") << "/api/v1/openapi.json" << QByteArray() << QByteArray() << 200;
}

void TstRestApi::authMatrix()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, route);
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, key);
    QFETCH(int, status);
    const QString path = route.startsWith(QLatin1String("/lease")) ||
                                 route.startsWith(QLatin1String("/status")) ||
                                 route.startsWith(QLatin1String("/ledger")) ||
                                 route.startsWith(QLatin1String("/wait")) ||
                                 route.startsWith(QLatin1String("/admin"))
                             ? QString(RestApi::kBase) + route
                             : route;
    const HttpResult r = ServiceFixture::finish(s->send(method, path, body, key));
    QCOMPARE(r.status, status);
    if (status == 403 && route == QLatin1String("/lease"))
        JCOMPARE(r.body["reason"], "actor_mismatch");
}

void TstRestApi::openModeNeedsNoKeyButAdminStillDoes()
{
    s = std::make_unique<ServiceFixture>(true);
    QCOMPARE(s->post("/lease", {{"resource", "lock:x"}, {"actorDid", "did:agent:z"}}).status, 200);
    JCOMPARE(s->post("/lease", {{"resource", "lock:y"}}).body["error"], "actorDid is required");
    QCOMPARE(s->get(QString(RestApi::kBase) + "/status").status, 200);
    QCOMPARE(s->post("/admin/release-all", json::object()).status, 401);
    QCOMPARE(s->post("/admin/release-all", json::object(), kKeyAdmin).status, 200);
    // Keys mean nothing here, so none is minted.
    const HttpResult mint = s->post("/admin/keys", {{"actorDid", "did:agent:z"}}, kKeyAdmin);
    QCOMPARE(mint.status, 400);
    QVERIFY(mint.body["error"].get<std::string>().find("--open") != std::string::npos);
}

void TstRestApi::openApiDescribesExactlyTheRoutes()
{
    const HttpResult doc = s->get("/api/v1/openapi.json");
    JCOMPARE(doc.body["openapi"], "3.1.0");
    std::set<std::pair<std::string, std::string>> documented;
    for (const auto &[path, ops] : doc.body["paths"].items()) {
        for (const auto &[method, op] : ops.items()) {
            documented.insert({path, method});
            QVERIFY(op.contains("summary"));
            QVERIFY(op["responses"].contains("200"));
            // Every documented route exists on the live server. The watch answers a stream that
            // never ends: its head is enough.
            if (path.ends_with("/watch")) {
                QNetworkReply *stream = s->send("GET", QString::fromStdString(path), {}, kKeyA);
                QSignalSpy head(stream, &QNetworkReply::metaDataChanged);
                QVERIFY(head.wait(10'000));
                QCOMPARE(stream->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
                stream->abort();
                stream->deleteLater();
                continue;
            }
            const HttpResult live =
                s->call(QByteArray::fromStdString(method).toUpper(), QString::fromStdString(path),
                        json::object(), kKeyAdmin);
            // A path with an {id} answers for the id given (404 unknown_request), not the
            // router's 404 not_found.
            const bool answered =
                live.status != 404 || live.body.value("reason", "") != "not_found";
            QVERIFY2(answered && live.status != 405, path.c_str());
        }
    }
    std::set<std::pair<std::string, std::string>> routed;
    for (const Route &route : s->front->api().routes())
        routed.insert({route.path.toStdString(), route.method.toLower().toStdString()});
    QCOMPARE(documented, routed);
    QVERIFY(routed.size() >= 15);
}

void TstRestApi::metricsArePrometheusText()
{
    s->post("/lease", {{"resource", "lock:x"}}, kKeyA);
    s->post("/lease", {{"resource", "lock:x"}}, kKeyB);
    const HttpResult m = s->get("/metrics");
    QCOMPARE(m.status, 200);
    QVERIFY(m.header("Content-Type").startsWith("text/plain"));
    QVERIFY(m.raw.contains("leasehold_leases 1\n"));
    QVERIFY(m.raw.contains("leasehold_refusals_total{reason=\"lease_held\"} 1\n"));
    QVERIFY(m.raw.contains("# TYPE leasehold_http_request_duration_seconds histogram"));
    QVERIFY(m.raw.contains("leasehold_http_request_duration_seconds_count 2\n"));
    QVERIFY(!m.raw.contains("did:agent")); // no agent names on a public route
}

QTEST_GUILESS_MAIN(TstRestApi)
#include "tst_restapi.moc"

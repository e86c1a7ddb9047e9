// Every malformed or hostile request gets the right 4xx with an error that names the problem,
// and the server keeps serving.

#include "servicetest.h"

#include <QTcpSocket>

using namespace leasehold;
using namespace leasehold::test;

class TstRestInput : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void badInputIsA4xxNamingTheField_data();
    void badInputIsA4xxNamingTheField();
    void oversizedBodyIsRefusedBeforeBuffering();
    void serverStillServesAfterAll();

private:
    std::unique_ptr<ServiceFixture> s;
};

void TstRestInput::initTestCase()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstRestInput::badInputIsA4xxNamingTheField_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("route");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("mentions");
    auto row = [](const char *name, const char *method, const char *route, QByteArray body,
                  int status, const char *mentions) {
        QTest::newRow(name) << QByteArray(method) << QString::fromLatin1(route) << body << status
                            << QString::fromLatin1(mentions);
    };
    row("not json", "POST", "/lease", "{nope", 400, "not valid JSON");
    row("empty body", "POST", "/lease", "", 400, "empty");
    row("array body", "POST", "/lease", "[1,2]", 400, "JSON object");
    row("string body", "POST", "/lease", "\"x\"", 400, "JSON object");
    row("no resource", "POST", "/lease", "{}", 400, "resource is required");
    row("resource number", "POST", "/lease", R"({"resource":7})", 400, "resource must be a string");
    row("resource empty", "POST", "/lease", R"({"resource":""})", 400, "resource");
    row("resource too long", "POST", "/lease",
        "{\"resource\":\"lock:" + QByteArray(1100, 'a') + "\"}", 400, "resource");
    row("resource escapes", "POST", "/lease", R"({"resource":"../../etc/passwd"})", 400,
        "escapes the workspace root");
    row("resource control char", "POST", "/lease", R"({"resource":"src/a\u0001b"})", 400,
        "control character");
    row("resource absolute", "POST", "/lease", R"({"resource":"/etc/passwd"})", 400,
        "resource is an absolute path");
    row("both resource fields", "POST", "/lease", R"({"resource":"lock:a","resources":["lock:b"]})",
        400, "either resource or resources");
    row("resources not array", "POST", "/lease", R"({"resources":"lock:a"})", 400, "resources");
    row("resources empty", "POST", "/lease", R"({"resources":[]})", 400, "resources");
    row("resources item number", "POST", "/lease", R"({"resources":["lock:a",3]})", 400,
        "resources[1]");
    row("resources item escapes", "POST", "/lease", R"({"resources":["lock:a","lock:../../x"]})",
        400, "resources[1]");
    row("too many resources", "POST", "/lease",
        "{\"resources\":[" + QByteArray("\"lock:x\",").repeated(70) + "\"lock:y\"]}", 400,
        "resources");
    row("unknown mode", "POST", "/lease", R"({"resource":"lock:a","mode":"exclusive"})", 400,
        "mode must be read, write or delete");
    row("mode number", "POST", "/lease", R"({"resource":"lock:a","mode":1})", 400, "mode");
    row("ttl string", "POST", "/lease", R"({"resource":"lock:a","ttlMs":"30"})", 400,
        "ttlMs must be an integer");
    row("ttl negative", "POST", "/lease", R"({"resource":"lock:a","ttlMs":-5})", 400, "ttlMs");
    row("ttl float", "POST", "/lease", R"({"resource":"lock:a","ttlMs":1.5})", 400, "ttlMs");
    row("ttl huge", "POST", "/lease", R"({"resource":"lock:a","ttlMs":99999999999999999999})", 400,
        "ttlMs");
    row("wait negative", "POST", "/lease", R"({"resource":"lock:a","waitMs":-1})", 400, "waitMs");
    row("lock-delay above a minute", "POST", "/lease",
        R"({"resource":"lock:a","lockDelayMs":60001})", 400, "lockDelayMs");
    row("lock-delay not a number", "POST", "/lease", R"({"resource":"lock:a","lockDelayMs":"1s"})",
        400, "lockDelayMs");
    row("waitWhileHolding not a boolean", "POST", "/lease",
        R"({"resource":"lock:a","waitMs":10,"waitWhileHolding":"yes"})", 400,
        "waitWhileHolding must be true or false");
    row("actor wrong type", "POST", "/lease", R"({"resource":"lock:a","actorDid":5})", 400,
        "actorDid must be a string");
    row("actor other agent", "POST", "/lease", R"({"resource":"lock:a","actorDid":"did:agent:x"})",
        403, "may not name");
    row("deep nesting", "POST", "/lease", QByteArray(100'000, '[') + QByteArray(100'000, ']'), 400,
        "nested deeper");
    row("deep nesting in object", "POST", "/lease",
        "{\"resource\":" + QByteArray(5'000, '[') + QByteArray(5'000, ']') + "}", 400,
        "nested deeper");
    row("invalid utf8", "POST", "/lease", "{\"resource\":\"lock:\xff\"}", 400, "not valid JSON");
    row("renew without leaseId", "POST", "/renew", R"({"resource":"lock:a"})", 400,
        "leaseId is required");
    row("pin without leaseId", "POST", "/pin", "{}", 400, "leaseId is required");
    row("unpin pinId number", "POST", "/unpin", R"({"pinId":1})", 400, "pinId must be a string");
    row("release resources bad", "POST", "/release", R"({"resources":[{}]})", 400, "resources[0]");
    row("ledger since text", "GET", "/ledger?since=abc", {}, 400, "since");
    row("ledger limit huge", "GET", "/ledger?limit=100000", {}, 400, "limit");
    row("wait bad resource", "GET", "/wait?resource=..%2F..%2Fx", {}, 400, "resource");
    row("lease via GET", "GET", "/lease", {}, 405, "use POST");
    row("status via POST", "POST", "/status", "{}", 405, "use GET");
    row("unknown route", "GET", "/nothing/here", {}, 404, "no route");
    row("unknown coordination route", "POST", "/frobnicate", "{}", 404, "no route");
}

void TstRestInput::badInputIsA4xxNamingTheField()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, route);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, mentions);
    const QString path =
        route.startsWith(QLatin1String("/nothing")) ? route : RestApi::kBase + route;
    const HttpResult r = ServiceFixture::finish(s->send(method, path, body, kKeyA));
    QCOMPARE(r.status, status);
    QVERIFY2(r.body.is_object(), r.raw.constData());
    JCOMPARE(r.body["ok"], false);
    const QString error = QString::fromStdString(r.body.value("error", std::string()));
    QVERIFY2(error.contains(mentions), qPrintable(error));
    if (status == 400)
        JCOMPARE(r.body["reason"], "invalid_request");
}

void TstRestInput::oversizedBodyIsRefusedBeforeBuffering()
{
    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, s->port);
    QVERIFY(raw.waitForConnected(5'000));
    raw.write("POST /api/v1/acp/coordination/lease HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              "Authorization: Bearer " +
              kKeyA + "\r\nContent-Length: 52428800\r\n\r\n");
    raw.write(QByteArray(64 * 1024, 'x'));
    QTRY_VERIFY(raw.bytesAvailable() > 0 || raw.state() != QAbstractSocket::ConnectedState);
    raw.waitForReadyRead(1000);
    const QByteArray answer = raw.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 413"), answer.constData());
}

void TstRestInput::serverStillServesAfterAll()
{
    QCOMPARE(s->get("/healthz").status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "lock:after"}}, kKeyA).status, 200);
    s->host->engine().checkInvariants();
}

QTEST_GUILESS_MAIN(TstRestInput)
#include "tst_restinput.moc"

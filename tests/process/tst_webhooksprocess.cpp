// Webhooks against the real binary (headless, port 0) and real receivers on 127.0.0.1:
// `ctl webhooks add|list|test|remove`, bad input named by field, the doctor's finding, a
// hanging receiver beside a stream of grants (their p99 printed with and without it), and
// kill -9 in the middle of retries. The receivers live on this test's event loop, so every
// request and every ctl run here waits on that loop, never blocking it.
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "ctlprocess.h"
#include "webhookreceiver.h"

#include <algorithm>

namespace {

struct Run
{
    int code = -1;
    QByteArray out;
    QByteArray err;
};

const QByteArray kConfiguredSecret = "configured-secret-9f3a";
const QByteArray kAddedSecret = "added-secret-77c1e0";

// Starts `process` and returns the URL it listens on (empty on failure), spinning the loop.
QString startService(QProcess &process, const QStringList &args)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_LOGGING_RULES", "leasehold.*=true");
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(LEASEHOLD_BINARY), args);
    if (!process.waitForStarted(10'000))
        return {};
    QElapsedTimer t;
    t.start();
    while (!process.canReadLine() && t.elapsed() < 20'000)
        QTest::qWait(20); // the receivers keep answering meanwhile
    const QByteArray line = process.readLine().trimmed();
    return line.startsWith("listening ") ? QString::fromLatin1(line.mid(10)) : QString();
}

QByteArray adminKey(const QString &dataDir)
{
    QFile f(dataDir + "/keys.json");
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QJsonArray keys = QJsonDocument::fromJson(f.readAll()).object()["keys"].toArray();
    return keys.isEmpty() ? QByteArray() : keys[0].toObject()["key"].toString().toUtf8();
}

void writeConfig(const QString &path, const QString &url, int retryForMs)
{
    QFile config(path);
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(
        QJsonDocument(
            QJsonObject{
                {"webhooks", QJsonObject{{"endpoints",
                                          QJsonArray{QJsonObject{
                                              {"url", url},
                                              {"secret", QString::fromLatin1(kConfiguredSecret)}}}},
                                         {"firstRetryMs", 50},
                                         {"maxRetryMs", 200},
                                         {"retryForMs", retryForMs},
                                         {"timeoutMs", 500}}}})
            .toJson());
}

} // namespace

class TstWebhooksProcess : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void ctlAddsListsTestsAndRemoves();
    void badInputIsRefusedNamingTheField_data();
    void badInputIsRefusedNamingTheField();
    void theDoctorNamesAFailingWebhookWithItsFix();
    void aHangingReceiverNeverDelaysAGrant();
    void deliveriesPendingAtKillNineArriveAfterTheRestart();

private:
    Run ctl(const QString &url, const QString &dataDir, const QStringList &args);
    int post(const QString &url, const QByteArray &key, const QString &path,
             const QJsonObject &body, QJsonObject *reply = nullptr);

    QTemporaryDir m_dir;
    QProcess m_server;
    QString m_url;
    QByteArray m_admin;
    QNetworkAccessManager m_net;
    WebhookReceiver m_receiver;
    WebhookReceiver m_hanging;
};

void TstWebhooksProcess::initTestCase()
{
    QVERIFY(m_receiver.listen());
    QVERIFY(m_hanging.listen());
    m_hanging.setMode(WebhookReceiver::Mode::Hang);
    writeConfig(m_dir.filePath("config.json"), m_receiver.url(), 120'000);
    m_url =
        startService(m_server, {"--headless", "--port", "0", "--data-dir", m_dir.filePath("data"),
                                "--config", m_dir.filePath("config.json")});
    QVERIFY(!m_url.isEmpty());
    m_admin = adminKey(m_dir.filePath("data"));
    QVERIFY(!m_admin.isEmpty());
}

void TstWebhooksProcess::cleanupTestCase()
{
    m_server.terminate();
    QVERIFY(m_server.waitForFinished(10'000));
    // Secrets are never logged: not the configured one, not one added by ctl.
    const QByteArray log = m_server.readAllStandardError();
    QVERIFY2(log.contains("webhook"), "the log is expected to speak of webhooks");
    QVERIFY(!log.contains(kConfiguredSecret));
    QVERIFY(!log.contains(kAddedSecret));
}

Run TstWebhooksProcess::ctl(const QString &url, const QString &dataDir, const QStringList &args)
{
    QProcess p;
    QEventLoop loop;
    connect(&p, &QProcess::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(30'000, &loop, &QEventLoop::quit);
    p.start(QStringLiteral(LEASEHOLD_BINARY),
            QStringList{"ctl", "--url", url, "--data-dir", dataDir} + args);
    loop.exec();
    if (p.state() != QProcess::NotRunning) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

int TstWebhooksProcess::post(const QString &url, const QByteArray &key, const QString &path,
                             const QJsonObject &body, QJsonObject *reply)
{
    return ctltest::post(m_net, url, key, path, body, reply);
}

void TstWebhooksProcess::ctlAddsListsTestsAndRemoves()
{
    const QString data = m_dir.filePath("data");
    const Run added = ctl(m_url, data,
                          {"webhooks", "add", m_receiver.url() + "/second", "--secret",
                           QString::fromLatin1(kAddedSecret), "--events", "deadlock,suspended",
                           "--format", "slack"});
    QCOMPARE(added.code, 0);
    const QString id = QString::fromLatin1(added.out.trimmed());
    QVERIFY2(id.startsWith("wh-"), added.out.constData());

    const Run list = ctl(m_url, data, {"webhooks", "list", "--json"});
    QCOMPARE(list.code, 0);
    QVERIFY(list.out.contains(id.toLatin1()));
    QVERIFY(list.out.contains("\"secret\": \"set\""));
    QVERIFY(!list.out.contains(kAddedSecret));
    QVERIFY(!list.out.contains(kConfiguredSecret));
    const Run table = ctl(m_url, data, {"webhooks", "list"});
    QCOMPARE(table.code, 0);
    QVERIFY(table.out.contains("deadlock,suspended"));
    QVERIFY(!table.out.contains(kAddedSecret));

    const std::size_t before = m_receiver.requests().size();
    const Run test = ctl(m_url, data, {"webhooks", "test", id});
    QVERIFY2(test.code == 0, test.out + test.err);
    QVERIFY2(test.out.contains("delivered"), test.out.constData());
    QVERIFY(m_receiver.requests().size() > before);
    const WebhookReceiver::Request &r = m_receiver.requests().back();
    QCOMPARE(r.path, QByteArray("/hook/second"));
    QVERIFY(WebhookReceiver::signatureValid(r, kAddedSecret));
    QVERIFY(
        QJsonDocument::fromJson(r.body).object()["text"].toString().startsWith("[leasehold] test"));

    QCOMPARE(ctl(m_url, data, {"webhooks", "remove", id}).code, 0);
    QVERIFY(!ctl(m_url, data, {"webhooks", "list", "--json"}).out.contains(id.toLatin1()));
    const Run again = ctl(m_url, data, {"webhooks", "remove", id});
    QCOMPARE(again.code, 1);
    // The configured endpoint is the config file's to change.
    const QJsonArray hooks =
        QJsonDocument::fromJson(ctl(m_url, data, {"webhooks", "list", "--json"}).out).array();
    QCOMPARE(hooks.size(), 1);
    QVERIFY(hooks[0].toObject()["configured"].toBool());
    const Run configured =
        ctl(m_url, data, {"webhooks", "remove", hooks[0].toObject()["id"].toString()});
    QCOMPARE(configured.code, 1);
    QVERIFY2(configured.err.contains("config file"), configured.err.constData());
}

void TstWebhooksProcess::badInputIsRefusedNamingTheField_data()
{
    QTest::addColumn<QJsonObject>("body");
    QTest::addColumn<QString>("field");
    const QString url = QStringLiteral("http://127.0.0.1:9/x");
    QTest::newRow("bad url") << QJsonObject{{"url", "no-scheme"}, {"secret", "secret-123"}}
                             << "url";
    QTest::newRow("no url") << QJsonObject{{"secret", "secret-123"}} << "url";
    QTest::newRow("missing secret") << QJsonObject{{"url", url}} << "secret";
    QTest::newRow("unknown event")
        << QJsonObject{{"url", url}, {"secret", "secret-123"}, {"events", QJsonArray{"nope"}}}
        << "events";
    QTest::newRow("events not a list")
        << QJsonObject{{"url", url}, {"secret", "secret-123"}, {"events", 3}} << "events";
    QTest::newRow("bad format") << QJsonObject{{"url", url},
                                               {"secret", "secret-123"},
                                               {"format", "xml"}}
                                << "format";
}

void TstWebhooksProcess::badInputIsRefusedNamingTheField()
{
    QFETCH(QJsonObject, body);
    QFETCH(QString, field);
    QJsonObject reply;
    QCOMPARE(post(m_url, m_admin, "/admin/webhooks", body, &reply), 400);
    QVERIFY2(reply["error"].toString().contains(field), qPrintable(reply["error"].toString()));
    // And through ctl: usage (2), the field named.
    if (QTest::currentDataTag() == QByteArray("unknown event")) {
        const Run r = ctl(m_url, m_dir.filePath("data"),
                          {"webhooks", "add", "http://127.0.0.1:9/x", "--secret", "secret-123",
                           "--events", "deadlock,nope"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("events: unknown event \"nope\""), r.err.constData());
    }
}

void TstWebhooksProcess::theDoctorNamesAFailingWebhookWithItsFix()
{
    const QString data = m_dir.filePath("data");
    // Port 9 on loopback: nobody listens, every attempt is refused.
    const Run added =
        ctl(m_url, data, {"webhooks", "add", "http://127.0.0.1:9/gone", "--secret", "secret-123"});
    QCOMPARE(added.code, 0);
    const QString id = QString::fromLatin1(added.out.trimmed());
    const Run test = ctl(m_url, data, {"webhooks", "test", id});
    QCOMPARE(test.code, 1);
    const Run doctor = ctl(m_url, data, {"doctor"});
    QCOMPARE(doctor.code, 1);
    QVERIFY2(doctor.out.contains("webhook " + id.toLatin1()), doctor.out.constData());
    QVERIFY2(doctor.out.contains("ctl webhooks test " + id.toLatin1()), doctor.out.constData());
    QCOMPARE(ctl(m_url, data, {"webhooks", "remove", id}).code, 0);
}

void TstWebhooksProcess::aHangingReceiverNeverDelaysAGrant()
{
    const QString data = m_dir.filePath("data");
    const Run minted = ctl(m_url, data, {"keys", "add", "did:agent:p99"});
    QCOMPARE(minted.code, 0);
    const QByteArray agent = minted.out.trimmed();
    // Each round: one grant (timed), then a force release (a webhook event for every endpoint).
    auto p99 = [&](int rounds) {
        std::vector<qint64> us;
        for (int i = 0; i < rounds; ++i) {
            QElapsedTimer t;
            t.start();
            const int status =
                post(m_url, agent, "/lease",
                     {{"resource", QStringLiteral("lock:p99/%1").arg(i % 7)}, {"ttlMs", 60'000}});
            us.push_back(t.nsecsElapsed() / 1000);
            if (status != 200)
                return qint64(-1);
            if (post(m_url, m_admin, "/admin/release-holder", {{"actorDid", "did:agent:p99"}}) !=
                200)
                return qint64(-1);
        }
        std::sort(us.begin(), us.end());
        return us[std::size_t(double(us.size()) * 0.99)];
    };
    constexpr int kRounds = 200;
    const qint64 without = p99(kRounds);
    QVERIFY(without >= 0);
    const Run added = ctl(m_url, data,
                          {"webhooks", "add", m_hanging.url(), "--secret", "secret-hang",
                           "--events", "force_release"});
    QCOMPARE(added.code, 0);
    const qsizetype answeredBefore = m_receiver.uniqueIds().size();
    const qint64 with = p99(kRounds);
    QVERIFY(with >= 0);
    qInfo("grant p99 over REST: %lld us without a hanging receiver, %lld us with one (%d grants "
          "each)",
          qlonglong(without), qlonglong(with), kRounds);
    // The hanging endpoint was tried (and cut) while the other endpoint kept receiving.
    QTRY_VERIFY_WITH_TIMEOUT(m_hanging.requests().size() >= 1, 10'000);
    QTRY_VERIFY_WITH_TIMEOUT(m_receiver.uniqueIds().size() >= answeredBefore + kRounds, 30'000);
    QCOMPARE(
        ctl(m_url, data, {"webhooks", "remove", QString::fromLatin1(added.out.trimmed())}).code, 0);
}

void TstWebhooksProcess::deliveriesPendingAtKillNineArriveAfterTheRestart()
{
    WebhookReceiver down;
    QVERIFY(down.listen());
    down.setStatus(503);
    QTemporaryDir dir;
    writeConfig(dir.filePath("config.json"), down.url(), 120'000);
    const QStringList args = {"--headless",
                              "--port",
                              "0",
                              "--data-dir",
                              dir.filePath("data"),
                              "--config",
                              dir.filePath("config.json")};
    QProcess first;
    const QString url = startService(first, args);
    QVERIFY(!url.isEmpty());
    const QByteArray admin = adminKey(dir.filePath("data"));
    for (int i = 1; i <= 3; ++i)
        QCOMPARE(post(url, admin, "/admin/suspend",
                      {{"actorDid", QStringLiteral("did:agent:s%1").arg(i)}, {"suspended", true}}),
                 200);
    // Mid-retry: the first delivery has been refused a few times, the others wait behind it.
    QTRY_VERIFY_WITH_TIMEOUT(down.requests().size() >= 3, 10'000);
    QCOMPARE(down.uniqueIds().size(), 1);
    first.kill(); // SIGKILL
    QVERIFY(first.waitForFinished(10'000));
    down.setStatus(200);
    QProcess second;
    QVERIFY(!startService(second, args).isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(down.uniqueIds().size(), 3, 20'000);
    QStringList order;
    for (const QByteArray &id : down.uniqueIds())
        for (const WebhookReceiver::Request &r : down.requests())
            if (r.headers.value("x-leasehold-delivery") == id) {
                QVERIFY(WebhookReceiver::signatureValid(r, kConfiguredSecret));
                order << QJsonDocument::fromJson(r.body)
                             .object()["details"]
                             .toObject()["target"]
                             .toString();
                break;
            }
    QCOMPARE(order, QStringList({"did:agent:s1", "did:agent:s2", "did:agent:s3"}));
    second.terminate();
    QVERIFY(second.waitForFinished(10'000));
}

QTEST_GUILESS_MAIN(TstWebhooksProcess)
#include "tst_webhooksprocess.moc"

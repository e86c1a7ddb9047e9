// The config file reader (app/configfile.h): every documented setting is read, and anything
// else — an unknown key, a wrong type, a value out of range, text that is not a JSON object —
// is refused with the key named, leaving the options as they were.

#include "configfile.h"

#include <QTest>

class TestConfigFile : public QObject
{
    Q_OBJECT

private slots:
    void everySettingIsRead()
    {
        AppOptions o;
        QString error;
        QVERIFY2(applyConfig(R"({"port": 9000, "bind": "127.0.0.2", "open": true,
            "keys": "/k.json", "workspace": "/w", "dataDir": "/d", "inMemory": true,
            "exclusive": ["lock:db"], "allowedHosts": ["box.local"], "liveWindowSeconds": 60,
            "mcpProgressMs": 500, "ledgerRetainRows": 5000, "ledgerRetainDays": 7,
            "maxConnections": 100, "headTimeoutMs": 2000, "parkAfterMs": 900,
            "storeTimeoutMs": 3000, "commitWindowUs": 800, "advertise": "http:\/\/h:1",
            "etcd": {"endpoints": ["http:\/\/e1:2379", "http:\/\/e2:2379"], "prefix": "lh/",
                     "sessionTtlSeconds": 5, "caFile": "/ca.pem", "certFile": "/c.pem",
                     "keyFile": "/k.pem"}})",
                             o, &error),
                 qPrintable(error));
        QCOMPARE(o.port, 9000);
        QCOMPARE(o.bind, QStringLiteral("127.0.0.2"));
        QVERIFY(o.open);
        QCOMPARE(o.keysFile, QStringLiteral("/k.json"));
        QCOMPARE(o.workspace, QStringLiteral("/w"));
        QCOMPARE(o.dataDir, QStringLiteral("/d"));
        QVERIFY(o.inMemory);
        QCOMPARE(o.exclusive, QStringList{QStringLiteral("lock:db")});
        QCOMPARE(o.allowedHosts, QStringList{QStringLiteral("box.local")});
        QCOMPARE(o.liveWindowSeconds, 60);
        QCOMPARE(o.mcpProgressMs, 500);
        QCOMPARE(o.ledgerRetainRows, 5000);
        QCOMPARE(o.ledgerRetainDays, 7);
        QCOMPARE(o.maxConnections, 100);
        QCOMPARE(o.headTimeoutMs, 2000);
        QCOMPARE(o.parkAfterMs, 900);
        QCOMPARE(o.storeTimeoutMs, 3000);
        QCOMPARE(o.commitWindowUs, 800);
        QCOMPARE(o.advertise, QStringLiteral("http://h:1"));
        QCOMPARE(o.etcd, (QStringList{"http://e1:2379", "http://e2:2379"}));
        QCOMPARE(o.etcdPrefix, QStringLiteral("lh/"));
        QCOMPARE(o.sessionTtlSeconds, 5);
        QCOMPARE(o.etcdCaFile, QStringLiteral("/ca.pem"));
        QCOMPARE(o.etcdCertFile, QStringLiteral("/c.pem"));
        QCOMPARE(o.etcdKeyFile, QStringLiteral("/k.pem"));
    }

    void refusalsNameTheKey_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("port wraps no more") << QByteArray(R"({"port": 70000})")
                                            << "\"port\" must be a whole number from 0 to 65535 "
                                               "(got 70000)";
        QTest::newRow("negative port") << QByteArray(R"({"port": -1})")
                                       << "\"port\" must be a whole number from 0 to 65535 "
                                          "(got -1)";
        QTest::newRow("port as text") << QByteArray(R"({"port": "7878"})")
                                      << "\"port\" must be a whole number from 0 to 65535";
        QTest::newRow("fraction") << QByteArray(R"({"headTimeoutMs": 150.5})")
                                  << "\"headTimeoutMs\" must be a whole number from 100 to "
                                     "600000 (got 150.5)";
        QTest::newRow("below range") << QByteArray(R"({"liveWindowSeconds": 1})")
                                     << "\"liveWindowSeconds\" must be a whole number from 5 to "
                                        "86400 (got 1)";
        QTest::newRow("typo") << QByteArray(R"({"workspce": "/w"})")
                              << "unknown setting \"workspce\"";
        QTest::newRow("flag as text")
            << QByteArray(R"({"open": "yes"})") << "\"open\" must be true or false";
        QTest::newRow("list of numbers")
            << QByteArray(R"({"exclusive": [1]})") << "\"exclusive\" must be an array of strings";
        QTest::newRow("group as text") << QByteArray(R"({"etcd": "http:\/\/e:2379"})")
                                       << "\"etcd\" must be an object of settings";
        QTest::newRow("typo in a group")
            << QByteArray(R"({"etcd": {"endpoint": []}})") << "unknown setting \"etcd.endpoint\"";
        QTest::newRow("session too short")
            << QByteArray(R"({"etcd": {"sessionTtlSeconds": 1}})")
            << "\"etcd.sessionTtlSeconds\" must be a whole number from 2 to 600 (got 1)";
        QTest::newRow("webhook without a secret")
            << QByteArray(R"({"webhooks": {"endpoints": [{"url": "http:\/\/h\/x"}]}})")
            << "\"webhooks.endpoints\" [0]: secret is required (the receiver checks "
               "X-Leasehold-Signature with it)";
        QTest::newRow("webhook with an unknown event")
            << QByteArray(R"({"webhooks": {"endpoints": [{"url": "http:\/\/h\/x", "secret": )"
                          R"("12345678", "events": ["boom"]}]}})")
            << "\"webhooks.endpoints\" [0]: events: unknown event \"boom\" (known: deadlock, "
               "expired, force_release, release_request, suspended, store, leader, "
               "hot_resource)";
        QTest::newRow("webhook retry too short")
            << QByteArray(R"({"webhooks": {"retryForMs": 5}})")
            << "\"webhooks.retryForMs\" must be a whole number from 1000 to 604800000 (got 5)";
        QTest::newRow("array") << QByteArray("[]") << "must be a JSON object of settings";
        QTest::newRow("not json") << QByteArray("port = 1") << "not JSON (illegal value at byte 1)";
    }
    void refusalsNameTheKey()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        AppOptions o;
        o.workspace = QStringLiteral("/before");
        QString error;
        // A valid setting before the bad one is not half-applied.
        QByteArray withValid = json;
        if (json.startsWith("{"))
            withValid = R"({"workspace": "/after", )" + json.mid(1);
        QVERIFY(!applyConfig(withValid, o, &error));
        QCOMPARE(error, expected);
        QCOMPARE(o.workspace, QStringLiteral("/before"));
        QCOMPARE(o.port, 7878);
    }

    void readConfigNamesTheFile()
    {
        AppOptions o;
        QString error;
        QVERIFY(!readConfig(QStringLiteral("/nonexistent/leasehold.json"), o, &error));
        QVERIFY2(error.startsWith(QStringLiteral("--config /nonexistent/leasehold.json: ")),
                 qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestConfigFile)
#include "tst_configfile.moc"

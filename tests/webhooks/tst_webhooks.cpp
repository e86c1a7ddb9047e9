// Webhooks in one process: the engine's tap, the outbox and the delivery thread against a real
// receiver on 127.0.0.1. The engine runs on a manual clock; deliveries are waited for as
// conditions (QTRY_*, bounded), never by sleeping.
#include "enginehost.h"
#include "webhookpayload.h"
#include "webhooks.h"
#include "webhooktap.h"

#include "webhookreceiver.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace leasehold;

namespace {

AcquireRequest request(const std::string &actor, const std::string &name)
{
    AcquireRequest r;
    r.actor = actor;
    r.resources.push_back(std::get<ResourceName>(ResourceParser("/w").parse(name)));
    r.ttlMs = 60'000;
    return r;
}

QJsonObject bodyOf(const WebhookReceiver::Request &r)
{
    return QJsonDocument::fromJson(r.body).object();
}

} // namespace

class TstWebhooks : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void checkNamesTheField_data();
    void checkNamesTheField();
    void releaseRequestsAreMatchedByKindName();
    void aForceReleaseArrivesSignedWithItsDetails();
    void anEndpointHearsOnlyItsEvents();
    void aReceiverDownForAWhileGetsEveryDeliveryOnceInOrder();
    void aDeliveryIsGivenUpAfterTheBoundAndTheNextGoesOn();
    void anEndpointAddedForAllEventsOutlivesARestart();
    void aHangingReceiverIsCutByTheTimeout();
    void aHotResourceIsToldOncePerMinute();
    void deliveriesLeftPendingAreSentAfterARestart();

private:
    // Starts the webhooks with one configured endpoint to the receiver.
    void start(std::vector<std::string> events = {}, std::int64_t retryForMs = 60'000,
               int timeoutMs = 2'000);
    nlohmann::json listNow();

    std::unique_ptr<QTemporaryDir> m_dir;
    ManualClock m_clock{1'700'000'000'000};
    std::unique_ptr<EngineHost> m_host;
    std::unique_ptr<WebhookReceiver> m_receiver;
    std::unique_ptr<Webhooks> m_webhooks;
    std::unique_ptr<WebhookTap> m_tap;
    const QByteArray m_secret = "a-test-secret-1234";
};

void TstWebhooks::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_host = std::make_unique<EngineHost>(EngineConfig{}, &m_clock);
    m_receiver = std::make_unique<WebhookReceiver>();
    QVERIFY(m_receiver->listen());
}

void TstWebhooks::cleanup()
{
    m_tap.reset();
    m_webhooks.reset();
    m_receiver.reset();
    m_host.reset();
}

void TstWebhooks::start(std::vector<std::string> events, std::int64_t retryForMs, int timeoutMs)
{
    WebhookOptions o;
    o.path = m_dir->filePath("webhooks.db");
    o.retryForMs = retryForMs;
    o.firstRetryMs = 20;
    o.maxRetryMs = 100;
    o.timeoutMs = timeoutMs;
    WebhookEndpoint e;
    e.url = m_receiver->url().toStdString();
    e.id = configuredWebhookId(e.url);
    e.secret = m_secret.toStdString();
    e.events = std::move(events);
    o.configured.push_back(e);
    m_webhooks = std::make_unique<Webhooks>(o);
    QString error;
    QVERIFY2(m_webhooks->start(&error), qPrintable(error));
    m_tap = std::make_unique<WebhookTap>(*m_host, *m_webhooks, 3);
}

nlohmann::json TstWebhooks::listNow()
{
    nlohmann::json out;
    bool done = false;
    m_webhooks->ask<nlohmann::json>([](WebhookDispatcher &d) { return d.list(10); }, this,
                                    [&](nlohmann::json j) {
                                        out = std::move(j);
                                        done = true;
                                    });
    [&] { QTRY_VERIFY_WITH_TIMEOUT(done, 5'000); }();
    return out;
}

void TstWebhooks::checkNamesTheField_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("secret");
    QTest::addColumn<QString>("event");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("field");
    QTest::newRow("empty url") << ""
                               << "secret-123"
                               << ""
                               << "json"
                               << "url";
    QTest::newRow("not a url") << "not a url"
                               << "secret-123"
                               << ""
                               << "json"
                               << "url";
    QTest::newRow("ftp url") << "ftp://x/y"
                             << "secret-123"
                             << ""
                             << "json"
                             << "url";
    QTest::newRow("no secret") << "http://x/y"
                               << ""
                               << ""
                               << "json"
                               << "secret";
    QTest::newRow("short secret") << "http://x/y"
                                  << "short"
                                  << ""
                                  << "json"
                                  << "secret";
    QTest::newRow("unknown event") << "http://x/y"
                                   << "secret-123"
                                   << "boom"
                                   << "json"
                                   << "events";
    QTest::newRow("unknown format") << "http://x/y"
                                    << "secret-123"
                                    << ""
                                    << "xml"
                                    << "format";
    QTest::newRow("fine") << "https://hooks.example/x"
                          << "secret-123"
                          << "deadlock"
                          << "slack"
                          << "";
}

void TstWebhooks::checkNamesTheField()
{
    QFETCH(QString, url);
    QFETCH(QString, secret);
    QFETCH(QString, event);
    QFETCH(QString, format);
    QFETCH(QString, field);
    WebhookEndpoint e{"x", url.toStdString(), secret.toStdString(), {}, format.toStdString()};
    if (!event.isEmpty())
        e.events.push_back(event.toStdString());
    const std::string problem = checkWebhookEndpoint(e);
    if (field.isEmpty())
        QVERIFY2(problem.empty(), problem.c_str());
    else
        QVERIFY2(problem.rfind(field.toStdString(), 0) == 0, problem.c_str());
}

void TstWebhooks::releaseRequestsAreMatchedByKindName()
{
    LedgerEvent e;
    e.kind = EventKind::Granted; // stands for a kind this build does not have yet
    e.resource = "lock:deploy";
    e.actorDid = "did:agent:b";
    QVERIFY(!webhookEventFromLedger(e, "coordination.lease.granted"));
    for (const char *what : {"raised", "declined", "overdue"}) {
        const auto w =
            webhookEventFromLedger(e, std::string("coordination.release_request.") + what);
        QVERIFY(w);
        QCOMPARE(w->name, std::string("release_request"));
    }
    QVERIFY(!webhookEventFromLedger(e, "coordination.release_request.other"));
}

void TstWebhooks::aForceReleaseArrivesSignedWithItsDetails()
{
    start();
    m_host->run([](LeaseEngine &e) { e.acquire(request("did:agent:a", "lock:deploy")); });
    m_host->run([](LeaseEngine &e) { e.releaseHolder("did:op:alice", "did:agent:a"); });
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver->requests().size(), std::size_t(1), 10'000);
    const WebhookReceiver::Request &r = m_receiver->requests()[0];
    QVERIFY(WebhookReceiver::signatureValid(r, m_secret));
    QVERIFY(!WebhookReceiver::signatureValid(r, "another-secret"));
    const QJsonObject body = bodyOf(r);
    QCOMPARE(body["event"].toString(), QStringLiteral("force_release"));
    QCOMPARE(body["id"].toString().toUtf8(), r.headers.value("x-leasehold-delivery"));
    QVERIFY(body["timestamp"].toString().endsWith('Z'));
    QCOMPARE(body["details"].toObject()["target"].toString(), QStringLiteral("did:agent:a"));
    QVERIFY(body["summary"].toString().contains("did:op:alice"));
    // A tampered body no longer verifies.
    WebhookReceiver::Request tampered = r;
    tampered.body.replace("did:agent:a", "did:agent:z");
    QVERIFY(!WebhookReceiver::signatureValid(tampered, m_secret));
}

void TstWebhooks::anEndpointHearsOnlyItsEvents()
{
    start({"suspended"});
    m_host->run([](LeaseEngine &e) { e.acquire(request("did:agent:a", "lock:deploy")); });
    m_host->run([](LeaseEngine &e) { e.releaseHolder("did:op:alice", "did:agent:a"); });
    m_host->run([](LeaseEngine &e) { e.suspend("did:op:alice", "did:agent:a", true); });
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver->requests().size(), std::size_t(1), 10'000);
    QCOMPARE(bodyOf(m_receiver->requests()[0])["event"].toString(), QStringLiteral("suspended"));
    // The force release before it was never queued for this endpoint.
    QTRY_COMPARE_WITH_TIMEOUT(listNow()[0]["delivered"].get<int>(), 1, 5'000);
    QCOMPARE(listNow()[0]["pending"].get<int>(), 0);
}

void TstWebhooks::aReceiverDownForAWhileGetsEveryDeliveryOnceInOrder()
{
    start();
    m_receiver->setStatus(503);
    constexpr int kEvents = 12;
    for (int i = 0; i < kEvents; ++i)
        m_webhooks->publish(hotResourceEvent("lock:r" + std::to_string(100 + i), 9, 3, i));
    // Down: the head is tried again and again, the rest wait behind it.
    QTRY_VERIFY_WITH_TIMEOUT(m_receiver->requests().size() >= 4, 10'000);
    QCOMPARE(m_receiver->uniqueIds().size(), 1);
    m_receiver->setStatus(200);
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver->uniqueIds().size(), kEvents, 20'000);
    QTRY_COMPARE_WITH_TIMEOUT(listNow()[0]["delivered"].get<int>(), kEvents, 5'000);
    // In order: each delivery's first arrival comes after the one queued before it.
    QStringList order;
    QList<QByteArray> seen;
    for (const WebhookReceiver::Request &r : m_receiver->requests()) {
        const QByteArray id = r.headers.value("x-leasehold-delivery");
        if (seen.contains(id))
            continue;
        seen << id;
        order << bodyOf(r)["details"].toObject()["resource"].toString();
        QVERIFY(WebhookReceiver::signatureValid(r, m_secret));
    }
    for (int i = 0; i < kEvents; ++i)
        QCOMPARE(order[i], QStringLiteral("lock:r%1").arg(100 + i));
    // Every retry of a delivery carried the same body (dedup by id is safe).
    for (const WebhookReceiver::Request &r : m_receiver->requests())
        if (r.headers.value("x-leasehold-delivery") == seen[0])
            QCOMPARE(r.body, m_receiver->requests()[0].body);
}

void TstWebhooks::aDeliveryIsGivenUpAfterTheBoundAndTheNextGoesOn()
{
    start({}, 1'000);
    QVERIFY(m_webhooks->troubles().empty());
    m_receiver->setStatus(500);
    m_webhooks->publish(hotResourceEvent("lock:first", 9, 3, 0));
    // While it is retried, the health check hears of it (by host, never by path)...
    QTRY_VERIFY_WITH_TIMEOUT(!m_webhooks->troubles().empty(), 10'000);
    const WebhookTrouble retrying = m_webhooks->troubles()[0];
    QCOMPARE(retrying.host, std::string("127.0.0.1"));
    QCOMPARE(retrying.lastError, std::string("HTTP 500"));
    QTRY_COMPARE_WITH_TIMEOUT(listNow()[0]["failed"].get<int>(), 1, 10'000);
    // ...and once given up, as a failure of the last hour.
    QTRY_COMPARE_WITH_TIMEOUT(m_webhooks->troubles().at(0).failedLastHour, std::int64_t(1), 10'000);
    QVERIFY(!m_webhooks->troubles()[0].retrying);
    const nlohmann::json failed = listNow()[0]["recent"][0];
    QCOMPARE(failed["state"].get<std::string>(), std::string("failed"));
    QCOMPARE(failed["lastError"].get<std::string>(), std::string("HTTP 500"));
    QVERIFY(failed["attempts"].get<int>() >= 2);
    m_receiver->setStatus(200);
    m_webhooks->publish(hotResourceEvent("lock:second", 9, 3, 0));
    QTRY_COMPARE_WITH_TIMEOUT(listNow()[0]["delivered"].get<int>(), 1, 10'000);
}

void TstWebhooks::anEndpointAddedForAllEventsOutlivesARestart()
{
    start();
    WebhookEndpoint all;
    all.url = "http://127.0.0.1:9/all";
    all.secret = "another-secret-99";
    std::optional<WebhookEndpoint> added;
    bool done = false;
    m_webhooks->ask<std::optional<WebhookEndpoint>>(
        [all](WebhookDispatcher &d) {
            std::string error;
            return d.add(all, &error);
        },
        this,
        [&](std::optional<WebhookEndpoint> e) {
            added = std::move(e);
            done = true;
        });
    QTRY_VERIFY_WITH_TIMEOUT(done, 5'000);
    QVERIFY(added.has_value()); // no events named: all of them (stored as such)
    m_tap.reset();
    m_webhooks.reset();
    start();
    const nlohmann::json list = listNow();
    QCOMPARE(list.size(), std::size_t(2));
    bool found = false;
    for (const nlohmann::json &w : list)
        if (w["id"] == added->id) {
            found = true;
            QVERIFY2(w["events"] == nlohmann::json::array({"all"}), w.dump().c_str());
        }
    QVERIFY(found);
}

void TstWebhooks::aHangingReceiverIsCutByTheTimeout()
{
    start({}, 60'000, 300);
    m_receiver->setMode(WebhookReceiver::Mode::Hang);
    m_webhooks->publish(hotResourceEvent("lock:slow", 9, 3, 0));
    QTRY_VERIFY_WITH_TIMEOUT(listNow()[0]["recent"][0]["attempts"].get<int>() >= 1, 10'000);
    const std::string why = listNow()[0]["recent"][0]["lastError"].get<std::string>();
    QVERIFY2(why.find("no answer within 300 ms") != std::string::npos, why.c_str());
    QVERIFY(m_receiver->requests().size() >= 1);
}

void TstWebhooks::aHotResourceIsToldOncePerMinute()
{
    start({"hot_resource"});
    m_host->run([](LeaseEngine &e) { e.acquire(request("did:agent:a", "lock:hot")); });
    for (int i = 0; i < 5; ++i)
        m_host->run([](LeaseEngine &e) { e.acquire(request("did:agent:b", "lock:hot")); });
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver->requests().size(), std::size_t(1), 10'000);
    const QJsonObject body = bodyOf(m_receiver->requests()[0]);
    QCOMPARE(body["details"].toObject()["resource"].toString(), QStringLiteral("lock:hot"));
    QCOMPARE(body["details"].toObject()["threshold"].toInt(), 3);
    // The next minute counts afresh: hot again, told again.
    m_clock.advance(61'000);
    m_host->tick();
    m_host->run([](LeaseEngine &e) { e.acquire(request("did:agent:a", "lock:hot")); });
    for (int i = 0; i < 3; ++i)
        m_host->run([](LeaseEngine &e) { e.acquire(request("did:agent:b", "lock:hot")); });
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver->requests().size(), std::size_t(2), 10'000);
}

void TstWebhooks::deliveriesLeftPendingAreSentAfterARestart()
{
    start();
    m_receiver->setStatus(503);
    for (int i = 0; i < 3; ++i)
        m_webhooks->publish(hotResourceEvent("lock:k" + std::to_string(i), 9, 3, 0));
    QTRY_VERIFY_WITH_TIMEOUT(m_receiver->requests().size() >= 2, 10'000);
    m_tap.reset();
    m_webhooks.reset(); // the delivery thread stops; the outbox keeps what is pending
    m_receiver->setStatus(200);
    start();
    QTRY_COMPARE_WITH_TIMEOUT(m_receiver->uniqueIds().size(), 3, 10'000);
    QTRY_COMPARE_WITH_TIMEOUT(listNow()[0]["delivered"].get<int>(), 3, 5'000);
}

QTEST_GUILESS_MAIN(TstWebhooks)
#include "tst_webhooks.moc"

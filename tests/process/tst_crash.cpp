// kill -9 at random points, many times over, on one data directory: after every restart each
// acknowledged, unreleased lease is back with its token and holder, new tokens are above every
// token ever acknowledged, no token appears twice, the ledger reads in order, and no
// acknowledged trust is lost. Leases whose fate was unknown at the kill (a request in flight)
// are taken from what came back, so later runs keep contending for every resource and their
// tokens, issued if not acknowledged, count as used too. Replay a run with LEASEHOLD_SEED;
// LEASEHOLD_CRASH_CYCLES sets how many kills (default 25).

#include "leaseholdprocess.h"

#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <map>
#include <set>

using nlohmann::json;

class TstCrash : public QObject
{
    Q_OBJECT

private slots:
    void killNineAtRandomPointsLosesNothingAcknowledged();

private:
    struct Ack
    {
        std::string resource;
        std::string holder;
        std::uint64_t token;
    };

    quint16 start(QProcess &process);
    QNetworkReply *send(const QByteArray &method, const QString &path, const json &body);
    static std::pair<int, json> finish(QNetworkReply *reply);
    // Checks what came back against `held`, then makes `held` exactly what came back (adding
    // leases granted by requests in flight at the kill) and raises `maxToken` to cover them.
    // Returns how many leases were added that way.
    int checkRestored(std::map<std::string, Ack> &held, const std::map<std::string, double> &trust,
                      std::uint64_t &maxToken);

    QTemporaryDir m_data;
    QNetworkAccessManager m_net;
    quint16 m_port = 0;
};

quint16 TstCrash::start(QProcess &process)
{
    return leasehold::test::startLeasehold(
        process, {"--headless", "--open", "--port", "0", "--data-dir", m_data.path()});
}

QNetworkReply *TstCrash::send(const QByteArray &method, const QString &path, const json &body)
{
    QNetworkRequest request(QUrl(
        QStringLiteral("http://127.0.0.1:%1/api/v1/acp/coordination%2").arg(m_port).arg(path)));
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    return m_net.sendCustomRequest(
        request, method, body.is_null() ? QByteArray() : QByteArray::fromStdString(body.dump()));
}

std::pair<int, json> TstCrash::finish(QNetworkReply *reply)
{
    if (!reply->isFinished()) {
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
    }
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray raw = reply->readAll();
    reply->deleteLater();
    return {status, json::parse(raw.begin(), raw.end(), nullptr, false)};
}

int TstCrash::checkRestored(std::map<std::string, Ack> &held,
                            const std::map<std::string, double> &trust, std::uint64_t &maxToken)
{
    int adopted = 0;
    // Plain variables, not a structured binding: the checks below run in lambdas (QCOMPARE
    // returns from the function it is in), and C++20 lambdas cannot capture bindings (clang).
    const auto statusPage = finish(send("GET", QStringLiteral("/status"), nullptr));
    const int status = statusPage.first;
    const json &snapshot = statusPage.second;
    [&] { QCOMPARE(status, 200); }();
    if (QTest::currentTestFailed())
        return adopted;
    std::map<std::string, json> leases;
    [&] {
        std::set<std::uint64_t> tokens;
        for (const json &l : snapshot["leases"]) {
            leases[l["leaseId"]] = l;
            QVERIFY2(tokens.insert(l["token"].get<std::uint64_t>()).second,
                     "a token appears twice");
        }
        for (const auto &[leaseId, ack] : held) {
            QVERIFY2(leases.count(leaseId), ("acknowledged lease lost: " + leaseId).c_str());
            const json &l = leases[leaseId];
            QCOMPARE(l["token"].get<std::uint64_t>(), ack.token);
            QCOMPARE(l["holder"].get<std::string>(), ack.holder);
            QCOMPARE(l["resource"].get<std::string>(), ack.resource);
        }
        for (const json &t : snapshot["trust"]) {
            auto it = trust.find(t["actorDid"]);
            if (it != trust.end()) // releases in flight at the kill may only have added to it
                QVERIFY2(t["score"].get<double>() >= it->second, "acknowledged trust lost");
        }
    }();
    if (QTest::currentTestFailed())
        return adopted;
    std::map<std::string, Ack> restored;
    for (const auto &[leaseId, l] : leases) {
        restored[leaseId] = {l["resource"], l["holder"], l["token"]};
        maxToken = std::max(maxToken, l["token"].get<std::uint64_t>());
        adopted += held.count(leaseId) ? 0 : 1;
    }
    held = std::move(restored);
    const auto ledgerPage =
        finish(send("GET", QStringLiteral("/ledger?since=0&limit=1000"), nullptr));
    const int ledgerStatus = ledgerPage.first;
    const json &ledger = ledgerPage.second;
    [&] {
        QCOMPARE(ledgerStatus, 200);
        std::uint64_t previous = 0;
        for (const json &e : ledger["events"]) {
            QVERIFY(e["seq"].get<std::uint64_t>() > previous);
            previous = e["seq"];
        }
    }();
    return adopted;
}

void TstCrash::killNineAtRandomPointsLosesNothingAcknowledged()
{
    QVERIFY(m_data.isValid());
    const quint32 seed = qEnvironmentVariableIsSet("LEASEHOLD_SEED")
                             ? quint32(qEnvironmentVariableIntValue("LEASEHOLD_SEED"))
                             : QRandomGenerator::system()->generate();
    const int cycles = qEnvironmentVariableIsSet("LEASEHOLD_CRASH_CYCLES")
                           ? qEnvironmentVariableIntValue("LEASEHOLD_CRASH_CYCLES")
                           : 25;
    qInfo("seed %u, %d cycles", seed, cycles);
    QRandomGenerator rng(seed);
    std::map<std::string, Ack> held; // acknowledged and not released (nor in flight)
    std::map<std::string, double> trust;
    std::uint64_t maxToken = 0;
    int grants = 0, releases = 0, refusals = 0, inFlight = 0, adopted = 0;
    const auto agent = [&] { return "did:agent:" + std::to_string(rng.bounded(6)); };
    const auto resource = [&] { return "lock:r" + std::to_string(rng.bounded(16)); };

    for (int cycle = 0; cycle < cycles; ++cycle) {
        QProcess process;
        m_port = start(process);
        QVERIFY2(m_port != 0, process.readAllStandardError().constData());
        adopted += checkRestored(held, trust, maxToken);
        if (QTest::currentTestFailed())
            return;

        const int steps = 5 + int(rng.bounded(40));
        for (int step = 0; step < steps; ++step) {
            if (held.empty() || rng.bounded(3) != 0) {
                const std::string who = agent();
                const std::string what = resource();
                const auto [status, body] =
                    finish(send("POST", QStringLiteral("/lease"),
                                {{"resource", what}, {"actorDid", who}, {"ttlMs", 600'000}}));
                if (status == 409) {
                    ++refusals;
                    continue;
                }
                QCOMPARE(status, 200);
                const json &l = body["lease"];
                const std::uint64_t token = l["token"];
                if (!l.value("extended", false)) { // an extension keeps its token
                    QVERIFY2(token > maxToken, "a new token is not above every earlier one");
                    maxToken = token;
                }
                held[l["leaseId"]] = {what, who, token};
                ++grants;
            } else {
                auto it = held.begin();
                std::advance(it, rng.bounded(quint32(held.size())));
                const auto [status, body] = finish(send("POST", QStringLiteral("/release"),
                                                        {{"resource", it->second.resource},
                                                         {"actorDid", it->second.holder},
                                                         {"leaseId", it->first}}));
                QCOMPARE(status, 200);
                trust[it->second.holder] = body["trust"];
                held.erase(it);
                ++releases;
            }
        }
        // Requests in flight when the process dies: their outcome is unknown, so a release
        // sent now takes its lease out of what must come back.
        const int flying = int(rng.bounded(5));
        for (int i = 0; i < flying; ++i, ++inFlight) {
            if (!held.empty() && rng.bounded(2)) {
                auto it = held.begin();
                send("POST", QStringLiteral("/release"),
                     {{"resource", it->second.resource}, {"actorDid", it->second.holder}});
                held.erase(it);
            } else {
                send("POST", QStringLiteral("/lease"),
                     {{"resource", resource()}, {"actorDid", agent()}, {"ttlMs", 600'000}});
            }
        }
        for (int spins = int(rng.bounded(4)); spins > 0; --spins)
            QCoreApplication::processEvents();
        process.kill(); // SIGKILL: no shutdown path runs
        QVERIFY(process.waitForFinished(10'000));
        QCOMPARE(process.exitStatus(), QProcess::CrashExit);
        // A reply that raced the kill is ignored: the next start checks the state itself.
        for (QNetworkReply *reply : m_net.findChildren<QNetworkReply *>())
            reply->abort();
    }
    QProcess process;
    m_port = start(process);
    QVERIFY(m_port != 0);
    const std::size_t checked = held.size();
    adopted += checkRestored(held, trust, maxToken);
    QVERIFY(!QTest::currentTestFailed());
    qInfo("%d kills: %d acknowledged grants (max token %llu), %d releases, %d refusals, %d "
          "requests in flight at a kill (%d leases they left behind taken over); %zu leases "
          "checked after the last restart",
          cycles, grants, static_cast<unsigned long long>(maxToken), releases, refusals, inFlight,
          adopted, checked);
    process.terminate();
    QVERIFY(process.waitForFinished(10'000));
}

QTEST_MAIN(TstCrash)
#include "tst_crash.moc"

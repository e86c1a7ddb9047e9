// Two Leasehold processes on one three-member etcd, all on loopback: one leads, the other
// stands by and redirects; kill -9 of the leader hands the leases (ids, holders, tokens) to
// the standby, whose new tokens are higher; a leader frozen past its session steps down when
// it wakes, granting nothing; with one etcd member lost the pair goes on, with two the leader
// refuses grants (store_unavailable) and serves reads, and leads on when they return.

#include "etcdcluster.h"
#include "historyagent.h"
#include "historychecker.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <QRandomGenerator>
#include <QTimer>

#include <csignal>

using nlohmann::json;

namespace {

const QString kBase = QStringLiteral("/api/v1/acp/coordination");

} // namespace

class TstFailover : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void theLeaderServesAndTheStandbyRedirects();
    void killNineOnTheLeaderHandsItsLeasesToTheStandby();
    void aFrozenLeaderStepsDownWhenItWakes();
    void historyThroughFailoversHasNoDoubleGrant();
    void losingEtcdQuorumCostsGrantsOnlyWhileItLasts();
    void aLeaderSpeaksTlsToEtcd();

private:
    struct Instance
    {
        std::unique_ptr<QProcess> process;
        quint16 port = 0;
        QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(port); }
    };
    // Starts `instance` on this test's etcd, or on `etcd` with `extra` arguments.
    bool start(Instance &instance, const QString &name, const EtcdCluster *etcd = nullptr,
               const QStringList &extra = {});
    // One request, answered within 10 s: status (0: none) and body.
    std::pair<int, json> call(const Instance &to, const QByteArray &method, const QString &path,
                              const json &body = nullptr, QByteArray *location = nullptr);
    // The role /healthz reports ("leader", "standby"), or empty.
    QString role(const Instance &instance);
    // The leader /healthz names, or empty.
    QString leaderSeenBy(const Instance &instance);
    // What `leasehold ctl status` prints about `instance`.
    QString ctlStatus(const Instance &instance, const QString &name);
    // Does a supervisor's job: starts A or B again if it went (a leader whose session etcd let
    // lapse under load steps down with exit 7), then waits for one to lead and the other to
    // name it.
    bool bothStanding();
    std::pair<int, json> acquire(const Instance &to, const std::string &agent,
                                 const std::string &resource)
    {
        return call(to, "POST", kBase + "/lease",
                    {{"actorDid", agent}, {"resources", {resource}}, {"ttlMs", 600'000}});
    }

    std::unique_ptr<EtcdCluster> m_etcd;
    QTemporaryDir m_data;
    QNetworkAccessManager m_net;
    Instance m_a, m_b;
    std::uint64_t m_token = 0;
    std::string m_leaseId;
};

bool TstFailover::start(Instance &instance, const QString &name, const EtcdCluster *etcd,
                        const QStringList &extra)
{
    QStringList endpoints;
    for (const QUrl &url : (etcd ? etcd : m_etcd.get())->endpoints())
        endpoints << url.toString();
    instance.process = std::make_unique<QProcess>();
    instance.process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    const QStringList arguments = QStringList{"--headless",    "--open",
                                              "--port",        "0",
                                              "--data-dir",    m_data.filePath(name),
                                              "--etcd",        endpoints.join(','),
                                              "--session-ttl", "2"} +
                                  extra;
    instance.process->start(QStringLiteral(LEASEHOLD_BINARY), arguments);
    if (!instance.process->waitForStarted(10'000))
        return false;
    while (!instance.process->canReadLine()) {
        if (!instance.process->waitForReadyRead(20'000))
            return false;
    }
    const QByteArray line = instance.process->readLine().trimmed();
    instance.port = quint16(line.mid(line.lastIndexOf(':') + 1).toUInt());
    return line.startsWith("listening http://127.0.0.1:") && instance.port != 0;
}

std::pair<int, json> TstFailover::call(const Instance &to, const QByteArray &method,
                                       const QString &path, const json &body, QByteArray *location)
{
    QNetworkRequest request(QUrl(to.url() + path));
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(10'000);
    QNetworkReply *reply = m_net.sendCustomRequest(
        request, method, body.is_null() ? QByteArray() : QByteArray::fromStdString(body.dump()));
    QEventLoop loop;
    connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (location)
        *location = reply->rawHeader("Location");
    const QByteArray bytes = reply->readAll();
    reply->deleteLater();
    return {status, json::parse(bytes.toStdString(), nullptr, false)};
}

QString TstFailover::role(const Instance &instance)
{
    const auto [status, body] = call(instance, "GET", "/healthz");
    if (status == 0 || !body.is_object() || !body.contains("cluster"))
        return {};
    return QString::fromStdString(body["cluster"].value("role", std::string()));
}

QString TstFailover::leaderSeenBy(const Instance &instance)
{
    const auto [status, body] = call(instance, "GET", "/healthz");
    if (status == 0 || !body.is_object() || !body.contains("cluster"))
        return {};
    return QString::fromStdString(body["cluster"].value("leader", std::string()));
}

bool TstFailover::bothStanding()
{
    for (auto [instance, name] : {std::pair{&m_a, "a"}, std::pair{&m_b, "b"}}) {
        if (instance->process->state() == QProcess::Running)
            continue;
        qInfo("%s had gone (exit %d): started again", name, instance->process->exitCode());
        if (!start(*instance, QString::fromLatin1(name)))
            return false;
    }
    return QTest::qWaitFor(
        [&] {
            return (role(m_a) == "leader" && leaderSeenBy(m_b) == m_a.url()) ||
                   (role(m_b) == "leader" && leaderSeenBy(m_a) == m_b.url());
        },
        20'000);
}

QString TstFailover::ctlStatus(const Instance &instance, const QString &name)
{
    QProcess ctl;
    ctl.start(QStringLiteral(LEASEHOLD_BINARY),
              {"ctl", "status", "--url", instance.url(), "--data-dir", m_data.filePath(name)});
    if (!ctl.waitForFinished(20'000) || ctl.exitCode() != 0)
        return QStringLiteral("(ctl failed: %1)").arg(QString::fromUtf8(ctl.readAll()));
    return QString::fromUtf8(ctl.readAllStandardOutput());
}

void TstFailover::initTestCase()
{
    m_etcd = std::make_unique<EtcdCluster>(3);
    std::string error;
    QVERIFY2(m_etcd->start(&error), error.c_str());
    QVERIFY(start(m_a, "a"));
    QVERIFY(QTest::qWaitFor([&] { return role(m_a) == "leader"; }, 10'000));
    QVERIFY(start(m_b, "b"));
    QVERIFY(QTest::qWaitFor([&] { return leaderSeenBy(m_b) == m_a.url(); }, 10'000));
    QCOMPARE(role(m_b), QStringLiteral("standby"));
}

void TstFailover::cleanupTestCase()
{
    for (Instance *i : {&m_a, &m_b}) {
        if (i->process && i->process->state() != QProcess::NotRunning) {
            ::kill(pid_t(i->process->processId()), SIGCONT);
            i->process->kill();
            i->process->waitForFinished(10'000);
        }
    }
}

void TstFailover::theLeaderServesAndTheStandbyRedirects()
{
    const auto [status, body] = acquire(m_a, "did:agent:x", "lock:deploy/production");
    QCOMPARE(status, 200);
    m_token = body["lease"]["token"].get<std::uint64_t>();
    m_leaseId = body["lease"]["leaseId"].get<std::string>();
    QByteArray location;
    const auto [redirected, why] =
        call(m_b, "POST", kBase + "/lease",
             {{"actorDid", "did:agent:y"}, {"resources", {"lock:deploy/production"}}}, &location);
    QCOMPARE(redirected, 307);
    QCOMPARE(QString::fromUtf8(location), m_a.url() + kBase + "/lease");
    QCOMPARE(why.value("reason", std::string()), std::string("not_leading"));
    QCOMPARE(why.value("leader", std::string()), m_a.url().toStdString());
    // `ctl status` shows the cluster from either side (once the leader's last look at the
    // election, every 250 ms, has seen the standby).
    QVERIFY(QTest::qWaitFor(
        [&] {
            const auto [answered, health] = call(m_a, "GET", "/healthz");
            return answered == 200 &&
                   health.value("cluster", json::object()).value("members", json::array()).size() ==
                       2;
        },
        5'000));
    const QString members =
        QStringLiteral("members: %1 (leader), %2 (standby)").arg(m_a.url(), m_b.url());
    const QString leader = ctlStatus(m_a, "a");
    QVERIFY2(leader.contains("cluster:    leader (term ") && leader.contains(members) &&
                 leader.contains("leases:     1"),
             qPrintable(leader));
    const QString standby = ctlStatus(m_b, "b");
    QVERIFY2(standby.contains("cluster:    standby; the leader is " + m_a.url()) &&
                 standby.contains(members) && !standby.contains("leases:"),
             qPrintable(standby));
    const auto [healthy, health] = call(m_b, "GET", "/healthz");
    QCOMPARE(healthy, 200);
    QCOMPARE(health["cluster"].value("leader", std::string()), m_a.url().toStdString());
}

void TstFailover::killNineOnTheLeaderHandsItsLeasesToTheStandby()
{
    QVERIFY(m_token > 0);
    m_a.process->kill(); // SIGKILL
    m_a.process->waitForFinished(10'000);
    QElapsedTimer took;
    took.start();
    QVERIFY(QTest::qWaitFor([&] { return role(m_b) == "leader"; }, 15'000));
    qInfo("the standby led %lld ms after the leader was killed (session TTL 2 s)", took.elapsed());
    // The lease is there, with its id, holder and token: another agent is refused...
    const auto [held, refusal] = acquire(m_b, "did:agent:y", "lock:deploy/production");
    QCOMPARE(held, 409);
    QCOMPARE(refusal.value("holder", std::string()), std::string("did:agent:x"));
    // ...its holder renews it by its id...
    const auto [renewed, lease] = call(m_b, "POST", kBase + "/renew",
                                       {{"actorDid", "did:agent:x"},
                                        {"resource", "lock:deploy/production"},
                                        {"leaseId", m_leaseId}});
    QCOMPARE(renewed, 200);
    QCOMPARE(lease["lease"]["token"].get<std::uint64_t>(), m_token);
    // ...and new tokens are higher than any the old leader issued.
    const auto [granted, fresh] = acquire(m_b, "did:agent:y", "lock:other");
    QCOMPARE(granted, 200);
    QVERIFY(fresh["lease"]["token"].get<std::uint64_t>() > m_token);
    // The old leader, back, stands by behind the new one.
    QVERIFY(start(m_a, "a"));
    QVERIFY(QTest::qWaitFor([&] { return leaderSeenBy(m_a) == m_b.url(); }, 10'000));
    QCOMPARE(role(m_a), QStringLiteral("standby"));
}

void TstFailover::aFrozenLeaderStepsDownWhenItWakes()
{
    QCOMPARE(role(m_b), QStringLiteral("leader"));
    ::kill(pid_t(m_b.process->processId()), SIGSTOP);
    QVERIFY(QTest::qWaitFor([&] { return role(m_a) == "leader"; }, 15'000));
    // A request reaches the frozen old leader (the kernel queues it) before it wakes.
    QNetworkRequest request(QUrl(m_b.url() + kBase + "/lease"));
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    request.setTransferTimeout(15'000);
    QNetworkReply *late = m_net.post(request, QByteArray::fromStdString(json{
                                                  {"actorDid", "did:agent:z"},
                                                  {"resources", {"lock:frozen"}},
                                                  {"ttlMs", 600'000}}.dump()));
    bool sent = false; // written to the socket: in the frozen process's kernel queue
    connect(late, &QNetworkReply::uploadProgress, this,
            [&](qint64 done, qint64 total) { sent = sent || (total > 0 && done == total); });
    QVERIFY(QTest::qWaitFor([&] { return sent; }, 5'000));
    const auto [granted, lease] = acquire(m_a, "did:agent:w", "lock:frozen");
    QCOMPARE(granted, 200);
    ::kill(pid_t(m_b.process->processId()), SIGCONT);
    // It wakes, finds its session gone, and goes (exit 7); the late request is not granted.
    QVERIFY(m_b.process->waitForFinished(15'000));
    QCOMPARE(m_b.process->exitCode(), 7);
    QVERIFY(QTest::qWaitFor([&] { return late->isFinished(); }, 15'000));
    QVERIFY2(late->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() != 200,
             late->readAll().constData());
    late->deleteLater();
    // The new leader holds lock:frozen for w alone.
    const auto [status, refusal] = acquire(m_a, "did:agent:z", "lock:frozen");
    QCOMPARE(status, 409);
    QCOMPARE(refusal.value("holder", std::string()), std::string("did:agent:w"));
}

void TstFailover::historyThroughFailoversHasNoDoubleGrant()
{
    // B went in the last test; it stands again.
    QVERIFY(start(m_b, "b"));
    QVERIFY(QTest::qWaitFor([&] { return leaderSeenBy(m_b) == m_a.url(); }, 10'000));
    QElapsedTimer clock;
    clock.start();
    std::vector<GrantRecord> history;
    std::vector<std::unique_ptr<HistoryAgent>> agents;
    for (int i = 0; i < 4; ++i) {
        agents.push_back(std::make_unique<HistoryAgent>(
            m_net, "did:agent:h" + std::to_string(i),
            [this] {
                return QStringList{m_a.url(), m_b.url()};
            },
            clock, history));
        agents.back()->start();
    }
    // The agents run on this thread's event loop. After 50 grants the leader goes, three
    // times: killed, frozen past its session (then woken: it finds its key gone and exits 7)
    // and killed again; each time it is brought back to stand by, and 50 more grants are
    // waited for.
    auto grantsReach = [&](std::size_t n) {
        return QTest::qWaitFor([&] { return history.size() >= n; }, 30'000);
    };
    QVERIFY(grantsReach(50));
    std::vector<std::size_t> before;
    for (int failover = 0; failover < 3; ++failover) {
        Instance &leader = role(m_a) == "leader" ? m_a : m_b;
        Instance &standby = &leader == &m_a ? m_b : m_a;
        before.push_back(history.size());
        const bool freeze = failover == 1;
        if (freeze)
            ::kill(pid_t(leader.process->processId()), SIGSTOP);
        else
            leader.process->kill();
        QVERIFY(QTest::qWaitFor([&] { return role(standby) == "leader"; }, 15'000));
        if (freeze)
            ::kill(pid_t(leader.process->processId()), SIGCONT);
        // (waitForFinished() is false for a process already seen to end)
        QVERIFY(leader.process->state() == QProcess::NotRunning ||
                leader.process->waitForFinished(15'000));
        if (freeze)
            QCOMPARE(leader.process->exitCode(), 7);
        QVERIFY(start(leader, &leader == &m_a ? "a" : "b"));
        QVERIFY(grantsReach(history.size() + 50));
    }
    for (auto &agent : agents)
        agent->stop();
    QVERIFY(QTest::qWaitFor(
        [&] {
            return std::all_of(agents.begin(), agents.end(),
                               [](const auto &a) { return a->idle(); });
        },
        20'000));
    int renewals = 0;
    for (const auto &agent : agents)
        renewals += agent->renewals();
    qInfo("%zu grants acknowledged (%zu, %zu and %zu before each failover), %d renewals",
          history.size(), before[0], before[1], before[2], renewals);
    // Work went on after each failover, and nothing a lock service must never do happened.
    QVERIFY(before[0] > 5);
    QVERIFY(before[1] > before[0]);
    QVERIFY(before[2] > before[1]);
    QVERIFY(history.size() > before[2]);
    QVERIFY(renewals > 0);
    const std::vector<std::string> wrong = checkHistory(history);
    for (const std::string &w : wrong)
        qWarning("%s", w.c_str());
    QVERIFY(wrong.empty());
}

void TstFailover::losingEtcdQuorumCostsGrantsOnlyWhileItLasts()
{
    QVERIFY(bothStanding());
    Instance &leader = role(m_a) == "leader" ? m_a : m_b;
    Instance &standby = &leader == &m_a ? m_b : m_a;
    auto cluster = [&](const Instance &i) {
        const auto [status, health] = call(i, "GET", "/healthz");
        return status != 0 && health.is_object() ? health.value("cluster", json::object())
                                                 : json::object();
    };
    const std::int64_t term = cluster(leader).value("term", std::int64_t(0));
    QVERIFY(term > 0);

    // One member lost (a follower: etcd keeps its leader): grants go on, not one refused.
    const int etcdLeader = m_etcd->leader();
    QVERIFY(etcdLeader >= 0);
    const int first = (etcdLeader + 1) % m_etcd->size();
    m_etcd->kill(first);
    const auto [one, held] = acquire(leader, "did:agent:q", "lock:quorum/one");
    QCOMPARE(one, 200);
    const std::uint64_t token = held["lease"]["token"].get<std::uint64_t>();

    // Two lost (now etcd's leader too), no quorum: a grant is refused within a bound, naming
    // the store; reads go on.
    const int second = etcdLeader;
    m_etcd->kill(second);
    QElapsedTimer took;
    took.start();
    const auto [two, refusal] = acquire(leader, "did:agent:q", "lock:quorum/two");
    qInfo("without quorum a grant was refused after %lld ms", took.elapsed());
    QCOMPARE(two, 503);
    QCOMPARE(refusal.value("reason", std::string()), std::string("store_unavailable"));
    QVERIFY(took.elapsed() < 10'000);
    const auto [read, status] = call(leader, "GET", kBase + "/status");
    QCOMPARE(read, 200);
    QVERIFY2(status.dump().find("lock:quorum/one") != std::string::npos, status.dump().c_str());
    // Past its reckoning of the session it says so, and still leads (nobody else can).
    QVERIFY(QTest::qWaitFor([&] { return cluster(leader).value("lapsed", false); }, 10'000));
    QCOMPARE(cluster(leader).value("role", std::string()), std::string("leader"));
    QVERIFY(leader.process->state() == QProcess::Running);

    // Both back: the same leader, same term, grants again, without a restart.
    std::string error;
    QVERIFY2(m_etcd->restart(first, &error), error.c_str());
    QVERIFY2(m_etcd->restart(second, &error), error.c_str());
    took.restart();
    int granted = 0;
    json lease;
    QVERIFY(QTest::qWaitFor(
        [&] {
            std::tie(granted, lease) = acquire(leader, "did:agent:q", "lock:quorum/three");
            return granted == 200;
        },
        30'000));
    qInfo("quorum back: granting again after %lld ms", took.elapsed());
    QVERIFY(lease["lease"]["token"].get<std::uint64_t>() > token);
    const json after = cluster(leader);
    QCOMPARE(after.value("role", std::string()), std::string("leader"));
    QCOMPARE(after.value("term", std::int64_t(0)), term);
    QCOMPARE(after.value("lapsed", true), false);
    QVERIFY(leader.process->state() == QProcess::Running);
    // What was granted before stands, and the standby still sends agents to the leader.
    const auto [busy, holder] = acquire(leader, "did:agent:r", "lock:quorum/one");
    QCOMPARE(busy, 409);
    QCOMPARE(holder.value("holder", std::string()), std::string("did:agent:q"));
    QCOMPARE(leaderSeenBy(standby), leader.url());
}

void TstFailover::aLeaderSpeaksTlsToEtcd()
{
    EtcdCluster secure(1, true);
    std::string error;
    QVERIFY2(secure.start(&error), error.c_str());
    const leasehold::etcd::Client::Tls files = secure.clientTls();
    Instance tls;
    QVERIFY(start(
        tls, "tls", &secure,
        {"--etcd-ca", files.caFile, "--etcd-cert", files.certFile, "--etcd-key", files.keyFile}));
    QVERIFY(QTest::qWaitFor([&] { return role(tls) == "leader"; }, 10'000));
    QCOMPARE(acquire(tls, "did:agent:s", "lock:over/tls").first, 200);
    tls.process->kill();
    tls.process->waitForFinished(10'000);
    // A certificate without its key is named before the start.
    QProcess refused;
    refused.start(QStringLiteral(LEASEHOLD_BINARY),
                  {"--headless", "--port", "0", "--data-dir", m_data.filePath("tls2"), "--etcd",
                   secure.endpoint(0).toString(), "--etcd-cert", files.certFile});
    QVERIFY(refused.waitForFinished(10'000));
    QCOMPARE(refused.exitCode(), 2);
    QVERIFY(refused.readAllStandardError().contains("needs its key"));
    // Without the CA it cannot trust the member, so it never leads, and says why.
    Instance untrusting;
    QVERIFY(start(untrusting, "tls3", &secure,
                  {"--etcd-cert", files.certFile, "--etcd-key", files.keyFile}));
    QString problem;
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     const auto [answered, health] = call(untrusting, "GET", "/healthz");
                     problem = QString::fromStdString(
                         health.is_object()
                             ? health.value("cluster", json::object()).value("problem", "")
                             : std::string());
                     return problem.contains(QStringLiteral("certificate"));
                 },
                 10'000),
             qPrintable(problem));
    const auto [status, body] = acquire(untrusting, "did:agent:t", "lock:over/tls");
    QCOMPARE(status, 503);
    QCOMPARE(body.value("reason", std::string()), std::string("not_leading"));
    untrusting.process->kill();
    untrusting.process->waitForFinished(10'000);
}

QTEST_MAIN(TstFailover)
#include "tst_failover.moc"

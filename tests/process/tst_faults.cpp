// The leasehold binary when the machine misbehaves: a data directory on a filesystem that really
// fills up, and a crowd of idle and half-sent connections. Every request is answered within a
// bound, grants are refused while the disk is full and work again once it has room, and a fresh
// agent gets its lease however many connections others hold open.

#include "leaseholdprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

using nlohmann::json;

namespace {

constexpr const char *kLease = "/api/v1/acp/coordination/lease";
constexpr const char *kRelease = "/api/v1/acp/coordination/release";

struct Answer
{
    int status = 0;
    json body;
    QByteArray raw;
    qint64 ms = 0; // how long it took
};

} // namespace

class TstFaults : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void aFullDiskRefusesGrantsAndRecovers();
    void idleAndHalfSentConnectionsDoNotLockOutAnAgent();
    void aParkedConnectionIsServedAndItsCloseNoticed();

private:
    static quint16 start(QProcess &process, const QString &dataDir, const json &config);
    static Answer call(quint16 port, const QByteArray &method, const QByteArray &path,
                       const json &body = nullptr);
    // A number /metrics reports, or -1.
    static int gauge(quint16 port, const char *name);
    // A data directory inside `dir` (empty when it cannot be made).
    static QString dataDir(const QTemporaryDir &dir);
    // SIGTERM, then a clean exit 0 within 15 s.
    static bool stopsCleanly(QProcess &server);
};

void TstFaults::initTestCase()
{
    // The client side of 2 000 connections needs descriptors too.
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
}

quint16 TstFaults::start(QProcess &process, const QString &dataDir, const json &config)
{
    const QString configPath = QDir(dataDir).filePath(QStringLiteral("../leasehold-test.json"));
    QFile file(configPath);
    if (!file.open(QIODevice::WriteOnly))
        return 0;
    file.write(QByteArray::fromStdString(config.dump()));
    file.close();
    process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    return leasehold::test::startLeasehold(
        process,
        {"--headless", "--open", "--port", "0", "--data-dir", dataDir, "--config", configPath});
}

QString TstFaults::dataDir(const QTemporaryDir &dir)
{
    const QString data = dir.filePath(QStringLiteral("data"));
    return dir.isValid() && QDir().mkpath(data) ? data : QString();
}

bool TstFaults::stopsCleanly(QProcess &server)
{
    server.terminate();
    return server.waitForFinished(15'000) && server.exitStatus() == QProcess::NormalExit &&
           server.exitCode() == 0;
}

int TstFaults::gauge(quint16 port, const char *name)
{
    const QByteArray raw = call(port, "GET", "/metrics").raw;
    const QByteArray key = QByteArray("\n") + name + ' ';
    const qsizetype at = raw.indexOf(key);
    if (at < 0)
        return -1;
    const qsizetype from = at + key.size();
    return raw.mid(from, raw.indexOf('\n', from) - from).toInt();
}

Answer TstFaults::call(quint16 port, const QByteArray &method, const QByteArray &path,
                       const json &body)
{
    QElapsedTimer clock;
    clock.start();
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    Answer a;
    if (!socket.waitForConnected(5'000))
        return a;
    const QByteArray payload =
        body.is_null() ? QByteArray() : QByteArray::fromStdString(body.dump());
    socket.write(method + ' ' + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                 "Content-Type: application/json\r\nContent-Length: " +
                 QByteArray::number(payload.size()) + "\r\n\r\n" + payload);
    QByteArray raw;
    // Connection: close - the answer ends when the server closes; 15 s is past every bound.
    while (socket.state() == QAbstractSocket::ConnectedState && socket.waitForReadyRead(15'000))
        raw += socket.readAll();
    raw += socket.readAll();
    a.ms = clock.elapsed();
    const qsizetype end = raw.indexOf("\r\n\r\n");
    const QList<QByteArray> words = raw.left(end).split(' ');
    a.status = words.size() > 1 ? words[1].toInt() : 0;
    a.raw = raw.mid(end + 4);
    a.body = json::parse(a.raw.toStdString(), nullptr, false);
    return a;
}

void TstFaults::aFullDiskRefusesGrantsAndRecovers()
{
    QTemporaryDir dir;
    const QString data = dataDir(dir);
    QVERIFY(!data.isEmpty());
    if (geteuid() != 0)
        QSKIP("mounting a small tmpfs needs root; the same faults are covered by tst_sqlitefaults");
    if (::mount("tmpfs", data.toUtf8().constData(), "tmpfs", 0, "size=6m") != 0)
        QSKIP(qPrintable(QStringLiteral("cannot mount a tmpfs here (%1); the same faults are "
                                        "covered by tst_sqlitefaults")
                             .arg(QString::fromLocal8Bit(strerror(errno)))));
    struct Unmount
    {
        QByteArray path;
        ~Unmount() { ::umount2(path.constData(), MNT_DETACH); }
    } unmount{data.toUtf8()};

    QProcess server;
    const quint16 port = start(server, data, {{"storeTimeoutMs", 2000}});
    QVERIFY(port != 0);
    QCOMPARE(
        call(port, "POST", kLease, {{"actorDid", "did:agent:a"}, {"resource", "lock:a"}}).status,
        200);

    // Fill the filesystem while agents work.
    QFile filler(QDir(data).filePath(QStringLiteral("filler")));
    QVERIFY(filler.open(QIODevice::WriteOnly));
    const QByteArray block(64 * 1024, 'x');
    while (filler.write(block) == block.size() && filler.flush()) {
    }
    filler.close();

    // Agents keep working; the ledger grows until the database needs a page the disk has not.
    // Every request is answered within 10 s; grants are refused, never left hanging.
    int refused = 0;
    qint64 slowest = 0;
    for (int i = 0; i < 4000 && refused < 3; ++i) {
        const std::string agent = "did:agent:w" + std::to_string(i % 8);
        const std::string lock = "lock:w" + std::to_string(i % 8);
        const Answer a = call(port, "POST", kLease, {{"actorDid", agent}, {"resource", lock}});
        slowest = std::max(slowest, a.ms);
        QVERIFY2(a.status == 200 || a.status == 503, a.body.dump().c_str());
        if (a.status == 503) {
            QVERIFY(a.body["reason"] == "store_unavailable");
            ++refused;
            continue;
        }
        const Answer r = call(port, "POST", kRelease, {{"actorDid", agent}, {"resource", lock}});
        slowest = std::max(slowest, r.ms);
        QVERIFY2(r.status == 200, r.body.dump().c_str());
    }
    QVERIFY2(refused > 0, "the disk never filled up");
    QVERIFY2(slowest < 10'000, qPrintable(QStringLiteral("slowest answer %1 ms").arg(slowest)));
    const Answer health = call(port, "GET", "/healthz");
    QCOMPARE(health.status, 503);
    QVERIFY2(health.body["store"] == "disk_full", health.raw.constData());
    // The operator's view says the same, with its own exit code.
    QProcess ctl;
    ctl.start(QStringLiteral(LEASEHOLD_BINARY),
              {"ctl", "status", "--url", QStringLiteral("http://127.0.0.1:%1").arg(port),
               "--data-dir", data});
    QVERIFY(ctl.waitForFinished(15'000));
    const QByteArray printed = ctl.readAllStandardOutput();
    QCOMPARE(ctl.exitCode(), 6);
    QVERIFY2(printed.contains("store:      UNAVAILABLE (disk_full)"), printed.constData());
    // Releases are still applied and answered.
    QCOMPARE(
        call(port, "POST", kRelease, {{"actorDid", "did:agent:a"}, {"resource", "lock:a"}}).status,
        200);

    // Room again: the writer's next commit succeeds and grants resume, with no restart.
    QVERIFY(QFile::remove(filler.fileName()));
    // Each try is a real request; the writer's back-off (at most 1 s) decides when one succeeds.
    // Until then every answer is a refusal, never anything else.
    int unexpected = 0;
    auto tryLease = [&] {
        const int status =
            call(port, "POST", kLease, {{"actorDid", "did:agent:b"}, {"resource", "lock:b"}})
                .status;
        if (status != 200 && status != 503)
            unexpected = status;
        return status;
    };
    QTRY_COMPARE_WITH_TIMEOUT(tryLease(), 200, 15'000);
    QCOMPARE(unexpected, 0);
    QCOMPARE(call(port, "GET", "/healthz").status, 200);
    // Nothing granted behind a refused answer was left: only b's lease is live.
    const Answer status = call(port, "GET", "/api/v1/acp/coordination/status");
    QVERIFY2(status.body["leases"].size() == 1, status.raw.constData());
    QVERIFY(status.body["leases"][0]["holder"] == "did:agent:b");

    QVERIFY(stopsCleanly(server));
}

void TstFaults::idleAndHalfSentConnectionsDoNotLockOutAnAgent()
{
    QTemporaryDir dir;
    const QString data = dataDir(dir);
    QVERIFY(!data.isEmpty());
    QProcess server;
    const quint16 port = start(server, data, {{"maxConnections", 2000}, {"headTimeoutMs", 1000}});
    QVERIFY(port != 0);

    // 2 000 idle keep-alive connections fill the cap...
    std::vector<std::unique_ptr<QTcpSocket>> idle;
    for (int i = 0; i < 2000; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QHostAddress::LocalHost, port);
        QVERIFY(socket->waitForConnected(5'000));
        idle.push_back(std::move(socket));
    }
    // ...and 200 more send half a request and stop.
    std::vector<std::unique_ptr<QTcpSocket>> halfSent;
    for (int i = 0; i < 200; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QHostAddress::LocalHost, port);
        QVERIFY(socket->waitForConnected(5'000));
        socket->write("POST /api/v1/acp/coordination/lease HTTP/1.1\r\nHost: 127.0.0.1\r\nConte");
        QVERIFY(socket->waitForBytesWritten(5'000));
        halfSent.push_back(std::move(socket));
    }

    // A fresh agent is served at once: the longest-idle connection made room for it.
    const Answer lease =
        call(port, "POST", kLease, {{"actorDid", "did:agent:fresh"}, {"resource", "lock:x"}});
    QCOMPARE(lease.status, 200);
    QVERIFY2(lease.ms < 1000, qPrintable(QStringLiteral("%1 ms").arg(lease.ms)));

    // The half-sent requests are answered 408 and closed once their head is overdue.
    for (auto &socket : halfSent) {
        QByteArray got;
        while (socket->state() == QAbstractSocket::ConnectedState &&
               socket->waitForReadyRead(10'000))
            got += socket->readAll();
        got += socket->readAll();
        QVERIFY2(got.startsWith("HTTP/1.1 408"), got.constData());
        if (socket->state() != QAbstractSocket::UnconnectedState)
            QVERIFY(socket->waitForDisconnected(10'000));
    }
    QCOMPARE(gauge(port, "leasehold_requests_timed_out_total"), 200);
    // Each connection over the cap closed the longest-idle one, unless a half-sent one had
    // already timed out and made room (on a slow machine some time out before the last
    // arrive): so the fresh agent evicted at least one, and every eviction is an idle
    // connection the server closed.
    const int evicted = gauge(port, "leasehold_connections_evicted_total");
    QVERIFY2(evicted >= 1 && evicted <= 201, qPrintable(QString::number(evicted)));
    int closedIdle = 0;
    for (auto &socket : idle) {
        if (socket->state() == QAbstractSocket::ConnectedState)
            socket->waitForReadyRead(1);
        closedIdle += socket->state() == QAbstractSocket::UnconnectedState ? 1 : 0;
    }
    QCOMPARE(closedIdle, evicted);

    QVERIFY(stopsCleanly(server));
}

void TstFaults::aParkedConnectionIsServedAndItsCloseNoticed()
{
    QTemporaryDir dir;
    const QString data = dataDir(dir);
    QVERIFY(!data.isEmpty());
    QProcess server;
    const quint16 port = start(server, data, {{"parkAfterMs", 100}});
    QVERIFY(port != 0);
    auto ask = [](QTcpSocket &socket, const QByteArray &agent) {
        const QByteArray body =
            R"({"actorDid":"did:agent:)" + agent + R"(","resource":"lock:)" + agent + R"("})";
        socket.write(QByteArray("POST ") + kLease + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                     "Content-Type: application/json\r\nContent-Length: " +
                     QByteArray::number(body.size()) + "\r\n\r\n" + body);
        QByteArray got;
        while (!got.contains("\r\n\r\n{") || !got.endsWith("}")) {
            if (!socket.waitForReadyRead(10'000))
                break;
            got += socket.readAll();
        }
        return got;
    };

    QTcpSocket keepAlive;
    keepAlive.connectToHost(QHostAddress::LocalHost, port);
    QVERIFY(keepAlive.waitForConnected(5'000));
    QVERIFY(ask(keepAlive, "a").startsWith("HTTP/1.1 200"));
    // Idle past parkAfterMs: parked (the /metrics probe's own connection is not yet idle).
    QTRY_COMPARE_WITH_TIMEOUT(gauge(port, "leasehold_parked_connections"), 1, 10'000);
    // The same connection's next request is served as if nothing happened.
    QVERIFY(ask(keepAlive, "b").startsWith("HTTP/1.1 200"));
    QTRY_COMPARE_WITH_TIMEOUT(gauge(port, "leasehold_parked_connections"), 1, 10'000);
    // A parked connection that the client closes is let go.
    keepAlive.disconnectFromHost();
    QTRY_COMPARE_WITH_TIMEOUT(gauge(port, "leasehold_open_connections"), 1, 10'000); // the probe's
    QCOMPARE(gauge(port, "leasehold_parked_connections"), 0);

    QVERIFY(stopsCleanly(server));
}

QTEST_GUILESS_MAIN(TstFaults)
#include "tst_faults.moc"

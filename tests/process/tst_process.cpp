// The leasehold binary as an operator runs it: flags, the listening line, exit codes, keys
// from the data directory, and a graceful stop on SIGTERM that answers waits in flight.

#include "leaseholdprocess.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

class TstProcess : public QObject
{
    Q_OBJECT

private slots:
    void versionAndHelp();
    void printsListeningLineAndServes();
    void portInUseExitsWithTwo();
    void openRefusesANonLoopbackBind();
    void clusterFlagsAreChecked();
    void sigtermAnswersWaitsAndExitsZero();
    void inMemoryKeepsNothingAcrossRestarts();

private:
    static quint16 startServer(QProcess &process, const QStringList &extra, QTemporaryDir &dir);
    static QByteArray request(quint16 port, const QByteArray &raw, bool waitForAnswer = true);
    static QByteArray post(quint16 port, const QByteArray &path, const QByteArray &body);
};

quint16 TstProcess::startServer(QProcess &process, const QStringList &extra, QTemporaryDir &dir)
{
    return leasehold::test::startLeasehold(
        process, QStringList{"--headless", "--port", "0", "--data-dir", dir.path()} + extra);
}

QByteArray TstProcess::request(quint16 port, const QByteArray &raw, bool waitForAnswer)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!socket.waitForConnected(5'000))
        return {};
    socket.write(raw);
    socket.waitForBytesWritten(5'000);
    QByteArray answer;
    while (waitForAnswer && socket.waitForReadyRead(10'000)) {
        answer += socket.readAll();
        const qsizetype end = answer.indexOf("\r\n\r\n");
        if (end < 0)
            continue;
        const QByteArray head = answer.left(end).toLower();
        const qsizetype at = head.indexOf("content-length:");
        const qsizetype length =
            at < 0 ? 0 : head.mid(at + 15, head.indexOf('\r', at) - at - 15).trimmed().toLongLong();
        if (answer.size() >= end + 4 + length)
            break;
    }
    return answer;
}

QByteArray TstProcess::post(quint16 port, const QByteArray &path, const QByteArray &body)
{
    return request(port, "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                             "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" +
                             body);
}

void TstProcess::versionAndHelp()
{
    QProcess p;
    p.start(QStringLiteral(LEASEHOLD_BINARY), {"--version"});
    QVERIFY(p.waitForFinished(10'000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(p.readAllStandardOutput().startsWith("leasehold "));
    p.start(QStringLiteral(LEASEHOLD_BINARY), {"--help"});
    QVERIFY(p.waitForFinished(10'000));
    const QByteArray help = p.readAllStandardOutput();
    for (const char *flag : {"--headless", "--port", "--bind", "--open", "--keys", "--workspace",
                             "--data-dir", "--in-memory", "--config", "--demo", "--etcd",
                             "--advertise", "--etcd-prefix", "--session-ttl"})
        QVERIFY2(help.contains(flag), flag);
    p.start(QStringLiteral(LEASEHOLD_BINARY), {"--no-such-flag"});
    QVERIFY(p.waitForFinished(10'000));
    QCOMPARE(p.exitCode(), 2);
}

void TstProcess::printsListeningLineAndServes()
{
    QTemporaryDir dir;
    QProcess server;
    const quint16 port = startServer(server, {}, dir);
    QVERIFY(port != 0);
    const QByteArray answer =
        request(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
    // First start created the data directory's key store with an admin key.
    QVERIFY(QFile::exists(dir.filePath("keys.json")));
    QVERIFY(QFile::permissions(dir.filePath("keys.json")) ==
            (QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser |
             QFileDevice::WriteUser));
    server.terminate();
    QVERIFY(server.waitForFinished(10'000));
    QCOMPARE(server.exitCode(), 0);
}

void TstProcess::portInUseExitsWithTwo()
{
    QTemporaryDir dir;
    QProcess first;
    const quint16 port = startServer(first, {}, dir);
    QVERIFY(port != 0);
    QProcess second;
    second.start(QStringLiteral(LEASEHOLD_BINARY),
                 {"--headless", "--port", QString::number(port), "--data-dir", dir.path()});
    QVERIFY(second.waitForFinished(10'000));
    QCOMPARE(second.exitCode(), 2);
    QVERIFY(second.readAllStandardError().contains("cannot listen"));
    first.terminate();
    QVERIFY(first.waitForFinished(10'000));
}

void TstProcess::openRefusesANonLoopbackBind()
{
    QTemporaryDir dir;
    QProcess p;
    p.start(QStringLiteral(LEASEHOLD_BINARY),
            {"--headless", "--open", "--bind", "0.0.0.0", "--data-dir", dir.path()});
    QVERIFY(p.waitForFinished(10'000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(p.readAllStandardError().contains("loopback"));
}

void TstProcess::clusterFlagsAreChecked()
{
    QTemporaryDir dir;
    const std::pair<QStringList, const char *> cases[] = {
        {{"--etcd", "127.0.0.1:2379"}, "takes http(s)://HOST:PORT"},
        {{"--etcd", "http://127.0.0.1:2379,ftp://x:1"}, "(got 'ftp://x:1')"},
        {{"--etcd", "http://127.0.0.1:2379", "--in-memory"}, "cannot run --in-memory"},
        {{"--etcd", "http://127.0.0.1:2379", "--session-ttl", "1"}, "--session-ttl must be"},
    };
    for (const auto &[flags, says] : cases) {
        QProcess p;
        p.start(QStringLiteral(LEASEHOLD_BINARY),
                QStringList{"--headless", "--data-dir", dir.path()} + flags);
        QVERIFY(p.waitForFinished(10'000));
        QCOMPARE(p.exitCode(), 2);
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(err.contains(says), err.constData());
    }
}

void TstProcess::sigtermAnswersWaitsAndExitsZero()
{
    QTemporaryDir dir;
    QProcess server;
    const quint16 port = startServer(server, {"--open"}, dir);
    QVERIFY(port != 0);
    QVERIFY(post(port, "/api/v1/acp/coordination/lease",
                 R"({"resource":"lock:x","actorDid":"did:agent:a"})")
                .startsWith("HTTP/1.1 200"));
    // A second agent parks in a bounded wait; then the server is asked to stop.
    QTcpSocket waiter;
    waiter.connectToHost(QHostAddress::LocalHost, port);
    QVERIFY(waiter.waitForConnected(5'000));
    const QByteArray wait = R"({"resource":"lock:x","actorDid":"did:agent:b","waitMs":20000})";
    waiter.write("POST /api/v1/acp/coordination/lease HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                 QByteArray::number(wait.size()) + "\r\n\r\n" + wait);
    QVERIFY(waiter.waitForBytesWritten(5'000));
    // Ask the server, not the clock, whether the waiter is parked yet.
    const QByteArray probe = "GET /api/v1/acp/coordination/wait HTTP/1.1\r\nHost: x\r\n"
                             "Connection: close\r\n\r\n";
    QTRY_VERIFY(request(port, probe).contains("\"kind\":\"parked\""));
    QCOMPARE(waiter.bytesAvailable(), 0); // no answer yet
    ::kill(static_cast<pid_t>(server.processId()), SIGTERM);
    QVERIFY(waiter.waitForReadyRead(10'000));
    const QByteArray answer = waiter.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 409"), answer.constData());
    QVERIFY(answer.contains("\"paused\""));
    QVERIFY(server.waitForFinished(10'000));
    QCOMPARE(server.exitStatus(), QProcess::NormalExit);
    QCOMPARE(server.exitCode(), 0);
}

void TstProcess::inMemoryKeepsNothingAcrossRestarts()
{
    const QByteArray metrics = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    const QByteArray lease = "/api/v1/acp/coordination/lease";
    QTemporaryDir dir;
    {
        // The default keeps state on disk; the metric says so.
        QProcess server;
        const quint16 port = startServer(server, {"--open"}, dir);
        QVERIFY(port != 0);
        const QByteArray text = request(port, metrics);
        QVERIFY(text.contains("\nleasehold_store_persistent 1\n"));
        // The ledger archive's counters (partitions moved, moves failed, still waiting) too.
        QVERIFY(text.contains("\nleasehold_store_archived_partitions_total 0\n"));
        QVERIFY(text.contains("\nleasehold_store_archive_failures_total 0\n"));
        QVERIFY(text.contains("\nleasehold_store_archive_backlog_partitions 0\n"));
        // The store's threads carry names, for `top -H` and perf.
        QStringList names;
        const QString tasks = QStringLiteral("/proc/%1/task").arg(server.processId());
        for (const QString &task : QDir(tasks).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            QFile comm(tasks + QLatin1Char('/') + task + QStringLiteral("/comm"));
            if (comm.open(QIODevice::ReadOnly))
                names << QString::fromUtf8(comm.readAll().trimmed());
        }
        for (const char *name : {"lh-store-writer", "lh-store-reader", "lh-archiver"})
            QVERIFY2(names.contains(QLatin1String(name)), qPrintable(names.join(u' ')));
        server.terminate();
        QVERIFY(server.waitForFinished(10'000));
    }
    QVERIFY(QFile::remove(dir.filePath("leasehold.db")));
    const QByteArray first = R"({"resource":"lock:x","actorDid":"did:agent:a","ttlMs":60000})";
    const QByteArray second = R"({"resource":"lock:x","actorDid":"did:agent:b"})";
    for (int run = 0; run < 2; ++run) {
        QProcess server;
        const quint16 port = startServer(server, {"--open", "--in-memory"}, dir);
        QVERIFY(port != 0);
        const QByteArray text = request(port, metrics);
        QVERIFY(text.contains("\nleasehold_store_persistent 0\n"));
        QVERIFY(!text.contains("leasehold_store_archived_partitions_total"));
        // Run 0: a holds lock:x, so b is refused. Run 1: a's lease (60 s) went with the
        // process, so b gets it at once.
        if (run == 0) {
            QVERIFY(post(port, lease, first).startsWith("HTTP/1.1 200"));
            QVERIFY(post(port, lease, second).startsWith("HTTP/1.1 409"));
        } else {
            QVERIFY(post(port, lease, second).startsWith("HTTP/1.1 200"));
        }
        server.terminate();
        QVERIFY(server.waitForFinished(10'000));
        QCOMPARE(server.exitCode(), 0);
        QVERIFY2(!QFile::exists(dir.filePath("leasehold.db")), "no state database is written");
        QVERIFY(QFile::exists(dir.filePath("keys.json"))); // keys still live in the data dir
    }
}

QTEST_GUILESS_MAIN(TstProcess)
#include "tst_process.moc"

// `leasehold ctl` against a running instance (the real binary, headless, on port 0): every
// subcommand in text and --json, and the exit codes a script relies on when the instance is
// down, the key is wrong or the usage is.

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "ctlprocess.h"

using ctltest::Run;

class TstCtl : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void statusInTextAndJson();
    void keysAddMintsAWorkingKey();
    void holdersAndWaitShowWhoHoldsAndWaits();
    void leversReachTheInstance();
    void ledgerPagesAndFollows();
    void watchShowsLeasesThenEachChange();
    void exitCodesScriptsCanRelyOn();

private:
    Run ctl(const QStringList &args, const QStringList &connection = {});
    int acquire(const QByteArray &key, const QString &resource, QJsonObject *body = nullptr);
    QByteArray mint(const QString &did);

    QTemporaryDir m_dir;
    QProcess m_server;
    QString m_url;
    QNetworkAccessManager m_net;
};

void TstCtl::initTestCase()
{
    m_server.start(QStringLiteral(LEASEHOLD_BINARY),
                   {"--headless", "--port", "0", "--data-dir", m_dir.path()});
    QVERIFY(m_server.waitForStarted(10'000));
    while (!m_server.canReadLine())
        QVERIFY(m_server.waitForReadyRead(10'000));
    const QByteArray line = m_server.readLine().trimmed();
    QVERIFY2(line.startsWith("listening "), line.constData());
    m_url = QString::fromLatin1(line.mid(10));
}

void TstCtl::cleanupTestCase()
{
    m_server.terminate();
    QVERIFY(m_server.waitForFinished(10'000));
}

Run TstCtl::ctl(const QStringList &args, const QStringList &connection)
{
    // By default: the URL from the flag, the admin key from the data directory's key store.
    return ctltest::ctl(
        connection.isEmpty() ? QStringList{"--url", m_url, "--data-dir", m_dir.path()} : connection,
        args);
}

int TstCtl::acquire(const QByteArray &key, const QString &resource, QJsonObject *body)
{
    return ctltest::acquire(m_net, m_url, key, resource, 60'000, body);
}

QByteArray TstCtl::mint(const QString &did)
{
    const Run r = ctl({"keys", "add", did});
    return r.code == 0 ? r.out.trimmed() : QByteArray();
}

void TstCtl::statusInTextAndJson()
{
    const Run text = ctl({"status"});
    QCOMPARE(text.code, 0);
    QVERIFY2(text.out.contains("admissions: open"), text.out.constData());
    QVERIFY(text.out.contains(m_url.toLatin1()));
    const Run json = ctl({"status", "--json"});
    QCOMPARE(json.code, 0);
    const QJsonObject status = QJsonDocument::fromJson(json.out).object();
    QVERIFY(status.contains("leases"));
    QProcess version;
    version.start(QStringLiteral(LEASEHOLD_BINARY), {"--version"});
    QVERIFY(version.waitForFinished(10'000));
    // One version everywhere: the binary, /healthz and so ctl.
    QCOMPARE("leasehold " + status.value("version").toString().toLatin1(),
             version.readAllStandardOutput().trimmed());
}

void TstCtl::keysAddMintsAWorkingKey()
{
    const QByteArray key = mint("did:agent:minted");
    QVERIFY(key.size() >= 32);
    QJsonObject body;
    QCOMPARE(acquire(key, "lock:minted", &body), 200);
    QCOMPARE(body.value("lease").toObject().value("holder").toString(),
             QStringLiteral("did:agent:minted"));
    const Run json = ctl({"keys", "add", "did:op:second", "--role", "admin", "--json"});
    QCOMPARE(json.code, 0);
    QCOMPARE(QJsonDocument::fromJson(json.out).object().value("role").toString(),
             QStringLiteral("admin"));
    QCOMPARE(ctl({"keys", "add", "did:agent:x", "--role", "root"}).code, 2);
    QCOMPARE(ctl({"release-all", "--yes"}).code, 0);
}

void TstCtl::holdersAndWaitShowWhoHoldsAndWaits()
{
    const QByteArray a = mint("did:agent:holder");
    const QByteArray b = mint("did:agent:waiter");
    QCOMPARE(acquire(a, "lock:deploy/production"), 200);
    QCOMPARE(acquire(b, "lock:deploy/production"), 409);

    const Run holders = ctl({"holders"});
    QCOMPARE(holders.code, 0);
    const QList<QByteArray> lines = holders.out.split('\n');
    QVERIFY(lines[0].startsWith("RESOURCE"));
    QVERIFY2(lines[1].startsWith("lock:deploy/production") && lines[1].contains("did:agent:holder"),
             holders.out.constData());
    const QJsonArray leases = QJsonDocument::fromJson(ctl({"holders", "--json"}).out).array();
    QCOMPARE(leases.size(), 1);
    QCOMPARE(leases[0].toObject().value("holder").toString(), QStringLiteral("did:agent:holder"));

    // Patterns are shown as written, and --covers answers "what covers this path?".
    QCOMPARE(acquire(b, "src/**/*.ts"), 200);
    QCOMPARE(acquire(a, "docs"), 200);
    const Run all = ctl({"holders"});
    QVERIFY2(all.out.contains("\nfs:src/**/*.ts "), all.out.constData());
    const Run ts = ctl({"holders", "--covers", "src/a/b.ts"});
    QCOMPARE(ts.code, 0);
    QCOMPARE(ts.out.count('\n'), 2); // the header and the pattern
    QVERIFY2(ts.out.contains("fs:src/**/*.ts") && ts.out.contains("did:agent:waiter"),
             ts.out.constData());
    const QJsonArray doc =
        QJsonDocument::fromJson(ctl({"holders", "--covers", "docs/x.md", "--json"}).out).array();
    QCOMPARE(doc.size(), 1);
    QCOMPARE(doc[0].toObject().value("resource").toString(), QStringLiteral("fs:docs"));
    const Run none = ctl({"holders", "--covers", "README.md", "--json"});
    QCOMPARE(QJsonDocument::fromJson(none.out).array().size(), 0);
    const Run bad = ctl({"holders", "--covers", "../x"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("--covers ../x: "), bad.err.constData());

    const Run wait = ctl({"wait"});
    QCOMPARE(wait.code, 0);
    QVERIFY2(wait.out.contains("did:agent:waiter") && wait.out.contains("want"),
             wait.out.constData());
    const QJsonObject view = QJsonDocument::fromJson(ctl({"wait", "--json"}).out).object();
    QCOMPARE(view.value("waiters").toArray().at(0).toObject().value("holder").toString(),
             QStringLiteral("did:agent:holder"));
    QCOMPARE(ctl({"release-all", "--yes"}).code, 0);
}

void TstCtl::leversReachTheInstance()
{
    const QByteArray a = mint("did:agent:la");
    const QByteArray b = mint("did:agent:lb");
    QCOMPARE(acquire(a, "lock:l1"), 200);
    QCOMPARE(acquire(a, "lock:l2"), 200);
    const Run released = ctl({"release-holder", "did:agent:la"});
    QCOMPARE(released.code, 0);
    QCOMPARE(released.out.trimmed(), QByteArray("released 2 leases of did:agent:la"));
    QCOMPARE(acquire(b, "lock:l1"), 200);

    const Run unconfirmed = ctl({"release-all"});
    QCOMPARE(unconfirmed.code, 2);
    QVERIFY(unconfirmed.err.contains("--yes"));
    QCOMPARE(QJsonDocument::fromJson(ctl({"release-all", "--yes", "--json"}).out)
                 .object()
                 .value("released")
                 .toInt(),
             1);

    QCOMPARE(ctl({"suspend", "did:agent:lb"}).code, 0);
    QJsonObject refusal;
    QCOMPARE(acquire(b, "lock:l3", &refusal), 403); // suspended: 403 in the refusal table
    QCOMPARE(refusal.value("reason").toString(), QStringLiteral("suspended"));
    QCOMPARE(ctl({"unsuspend", "did:agent:lb"}).code, 0);
    QCOMPARE(acquire(b, "lock:l3"), 200);

    QCOMPARE(ctl({"pause"}).out.trimmed(), QByteArray("admissions paused"));
    QCOMPARE(acquire(a, "lock:l4", &refusal), 409);
    QCOMPARE(refusal.value("reason").toString(), QStringLiteral("paused"));
    QVERIFY(ctl({"status"}).out.contains("admissions: PAUSED"));
    QCOMPARE(ctl({"resume"}).code, 0);
    QCOMPARE(acquire(a, "lock:l4"), 200);
    QCOMPARE(ctl({"release-all", "--yes"}).code, 0);
}

void TstCtl::ledgerPagesAndFollows()
{
    const QByteArray key = mint("did:agent:ledger");
    QCOMPARE(acquire(key, "lock:ledger-1"), 200);
    const Run text = ctl({"ledger", "--since", "0", "--agent", "did:agent:ledger"});
    QCOMPARE(text.code, 0);
    QVERIFY(text.out.startsWith("SEQ\tTIME\tKIND"));
    QVERIFY2(text.out.contains("granted\tdid:agent:ledger\tlock:ledger-1"), text.out.constData());
    const Run json =
        ctl({"ledger", "--since", "0", "--json", "--kind", "coordination.lease.granted"});
    QCOMPARE(json.code, 0);
    quint64 last = 0;
    for (const QByteArray &line : json.out.trimmed().split('\n')) {
        const QJsonObject e = QJsonDocument::fromJson(line).object();
        QCOMPARE(e.value("kind").toString(), QStringLiteral("coordination.lease.granted"));
        QVERIFY(quint64(e.value("seq").toInteger()) > last); // in order
        last = quint64(e.value("seq").toInteger());
    }

    // --follow prints what happens after it started, until it is stopped.
    QProcess follow;
    follow.start(QStringLiteral(LEASEHOLD_BINARY),
                 {"ctl", "--url", m_url, "--data-dir", m_dir.path(), "ledger", "--follow", "--json",
                  "--agent", "did:agent:ledger"});
    QVERIFY(follow.waitForStarted(10'000));
    QByteArray seen;
    // Read what is buffered before waiting: output that came while acquire() ran its own event
    // loop is already in the process's buffer, and waitForReadyRead() waits only for more.
    auto until = [&](const char *wanted) {
        for (seen += follow.readAllStandardOutput(); !seen.contains(wanted);
             seen += follow.readAllStandardOutput()) {
            if (!follow.waitForReadyRead(10'000)) {
                seen += "\n--- stderr: " + follow.readAllStandardError();
                return false;
            }
        }
        return true;
    };
    QVERIFY2(until("lock:ledger-1"), seen.constData()); // the recent past first
    QCOMPARE(acquire(key, "lock:ledger-2"), 200);
    QVERIFY2(until("lock:ledger-2"), seen.constData());
    ::kill(pid_t(follow.processId()), SIGTERM);
    QVERIFY(follow.waitForFinished(10'000));
    QCOMPARE(follow.exitCode(), 0);
    QCOMPARE(ctl({"release-all", "--yes"}).code, 0);
}

void TstCtl::watchShowsLeasesThenEachChange()
{
    const QByteArray key = mint("did:agent:watcher");
    QCOMPARE(acquire(key, "lock:watch/held"), 200);
    QCOMPARE(acquire(key, "fs:outside/prefix"), 200);
    QProcess watch;
    watch.start(
        QStringLiteral(LEASEHOLD_BINARY),
        {"ctl", "--url", m_url, "--data-dir", m_dir.path(), "watch", "--prefix", "lock:watch/"});
    QVERIFY(watch.waitForStarted(10'000));
    QByteArray seen;
    // What arrived while the test ran an event loop of its own (an HTTP call) is already in
    // the process's buffer: it is read before waiting for more, or the wait would miss it.
    auto until = [&](const QByteArray &text) {
        for (seen += watch.readAllStandardOutput(); !seen.contains(text);
             seen += watch.readAllStandardOutput()) {
            if (!watch.waitForReadyRead(10'000)) {
                seen += "\n--- stderr: " + watch.readAllStandardError();
                return false;
            }
        }
        return true;
    };
    QVERIFY2(until("= held\tlock:watch/held\tdid:agent:watcher"), seen.constData());
    QVERIFY2(seen.contains("1 lease"), seen.constData()); // the other is not under the prefix
    QCOMPARE(acquire(key, "lock:watch/new"), 200);
    QVERIFY2(until("+ granted\tlock:watch/new\tdid:agent:watcher"), seen.constData());
    QCOMPARE(ctl({"release-all", "--yes"}).code, 0);
    QVERIFY2(until("- released\tlock:watch/held"), seen.constData());
    QVERIFY(!seen.contains("fs:outside"));
    ::kill(pid_t(watch.processId()), SIGTERM);
    QVERIFY(watch.waitForFinished(10'000));
    QCOMPARE(watch.exitCode(), 0);
}

void TstCtl::exitCodesScriptsCanRelyOn()
{
    // An instance that is not there: a port that was just free.
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
    const QString down = QStringLiteral("http://127.0.0.1:%1").arg(probe.serverPort());
    probe.close();
    const Run unreachable = ctl({"status"}, {"--url", down, "--key", "whatever-key-0000"});
    QCOMPARE(unreachable.code, 3);
    QVERIFY(unreachable.err.contains("cannot reach"));
    // A wrong key, and an agent's key on an admin lever.
    QCOMPARE(
        ctl({"release-all", "--yes"}, {"--url", m_url, "--key", "wrong-key-wrong-key-00"}).code, 4);
    const QByteArray agent = mint("did:agent:plain");
    QCOMPARE(
        ctl({"release-all", "--yes"}, {"--url", m_url, "--key", QString::fromLatin1(agent)}).code,
        4);
    // The environment is a source too.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("LEASEHOLD_URL", m_url);
    env.insert("LEASEHOLD_KEY", QString::fromLatin1(agent));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(LEASEHOLD_BINARY), {"ctl", "holders"});
    QVERIFY(p.waitForFinished(10'000));
    QCOMPARE(p.exitCode(), 0); // an agent key may read
    // Usage.
    QCOMPARE(ctl({"no-such-command"}).code, 2);
    QCOMPARE(ctl({"release-holder"}).code, 2);
    QCOMPARE(ctl({"status", "--timeout", "zero"}).code, 2);
    QCOMPARE(ctl({}).code, 2);
    QCOMPARE(ctl({"--help"}, {"--url", m_url}).code, 0);
}

QTEST_MAIN(TstCtl)
#include "tst_ctl.moc"

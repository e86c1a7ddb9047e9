// `leasehold ctl doctor` and `ctl sweep` against the real binary (headless, port 0), on an
// instance whose live window is 5 s: a holder that stops calling is soon "gone", as a crashed
// agent is after the default 5 minutes.
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "ctlprocess.h"

#include <unistd.h>

#include <algorithm>

using ctltest::Run;

class TstDoctor : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void aHealthyInstanceHasNoFindings();
    void aGoneHolderIsFoundWithItsFix();
    void sweepChecksItsBoundAndADryRunChangesNothing();
    void aReleaseRequestReachesWhyThenTheDoctorWhenOverdue();
    void aStoreUnderASmallQuotaIsFound();

private:
    // Starts the binary headless on port 0 with `config` (JSON text) and data in `dataDir`; its
    // URL, or empty with `why` set.
    static QString start(QProcess &server, const QString &dataDir, const QString &configPath,
                         const QByteArray &config, QString *why);
    Run ctl(const QStringList &args);
    int acquire(const QByteArray &key, const QString &resource);
    int post(const QByteArray &key, const QString &route, const QJsonObject &body,
             QJsonObject *reply);

    QTemporaryDir m_dir;
    QProcess m_server;
    QString m_url;
    QNetworkAccessManager m_net;
    QByteArray m_key;
};

QString TstDoctor::start(QProcess &server, const QString &dataDir, const QString &configPath,
                         const QByteArray &config, QString *why)
{
    QFile file(configPath);
    if (!file.open(QIODevice::WriteOnly) || file.write(config) != config.size()) {
        *why = "cannot write " + configPath;
        return {};
    }
    file.close();
    server.start(QStringLiteral(LEASEHOLD_BINARY),
                 {"--headless", "--port", "0", "--data-dir", dataDir, "--config", configPath});
    QDeadlineTimer deadline(10'000);
    while (!server.canReadLine() && !deadline.hasExpired())
        server.waitForReadyRead(int(std::max<qint64>(1, deadline.remainingTime())));
    const QByteArray line = server.readLine().trimmed();
    if (!line.startsWith("listening ")) {
        *why = "the instance did not start: " + QString::fromUtf8(line + server.readAll());
        return {};
    }
    return QString::fromLatin1(line.mid(10));
}

void TstDoctor::initTestCase()
{
    // Any disk room counts as enough here; aStoreUnderASmallQuotaIsFound tries the default.
    QString why;
    m_url = start(m_server, m_dir.filePath("data"), m_dir.filePath("config.json"),
                  R"({"liveWindowSeconds": 5, "minFreeDiskMegabytes": 1})", &why);
    QVERIFY2(!m_url.isEmpty(), qPrintable(why));
    const Run minted = ctl({"keys", "add", "did:agent:crashed"});
    QCOMPARE(minted.code, 0);
    m_key = minted.out.trimmed();
}

void TstDoctor::cleanupTestCase()
{
    m_server.terminate();
    QVERIFY(m_server.waitForFinished(10'000));
}

Run TstDoctor::ctl(const QStringList &args)
{
    return ctltest::ctl({"--url", m_url, "--data-dir", m_dir.filePath("data")}, args);
}

int TstDoctor::acquire(const QByteArray &key, const QString &resource)
{
    return ctltest::acquire(m_net, m_url, key, resource, 600'000);
}

int TstDoctor::post(const QByteArray &key, const QString &route, const QJsonObject &body,
                    QJsonObject *reply)
{
    return ctltest::post(m_net, m_url, key, route, body, reply);
}

void TstDoctor::aHealthyInstanceHasNoFindings()
{
    const Run r = ctl({"doctor"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("no findings"), r.out.constData());
}

void TstDoctor::aGoneHolderIsFoundWithItsFix()
{
    QCOMPARE(acquire(m_key, "lock:deploy/production"), 200);
    // Live for the 5 s window after its call; then the doctor names it. Ask until it does.
    Run r;
    QDeadlineTimer deadline(30'000);
    do {
        r = ctl({"doctor", "--json"});
    } while (r.code == 0 && !deadline.hasExpired());
    QCOMPARE(r.code, 1); // something to act on
    const QJsonObject out = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(out.value("worst").toString(), QStringLiteral("warning"));
    const QByteArray text = ctl({"doctor"}).out;
    QVERIFY2(
        text.contains("did:agent:crashed holds 1 lease (lock:deploy/production) and is live on "
                      "no surface"),
        text.constData());
    QVERIFY2(text.contains("fix: leasehold ctl release-holder did:agent:crashed"),
             text.constData());
}

void TstDoctor::sweepChecksItsBoundAndADryRunChangesNothing()
{
    QCOMPARE(ctl({"sweep"}).code, 2);
    QCOMPARE(ctl({"sweep", "--not-live-for", "5s"}).code, 2); // under a minute
    QCOMPARE(ctl({"sweep", "--not-live-for", "soon"}).code, 2);
    const Run dry = ctl({"sweep", "--not-live-for", "1m", "--dry-run"});
    QCOMPARE(dry.code, 0);
    // Gone for seconds, not a minute: nobody yet, and the lease is still there.
    QVERIFY2(dry.out.contains("no holder has been gone for 1 min"), dry.out.constData());
    QCOMPARE(acquire(m_key, "lock:deploy/production"), 200); // still its own: an extension
}

// A holder inside `leasehold run` learns of a release request from `leasehold why` (what the run
// tells its command); left unanswered past its deadline, the doctor names it with the lever that
// ends it, and that lever works.
void TstDoctor::aReleaseRequestReachesWhyThenTheDoctorWhenOverdue()
{
    const QByteArray holder = ctl({"keys", "add", "did:agent:busy"}).out.trimmed();
    const QByteArray waiter = ctl({"keys", "add", "did:agent:hotfix"}).out.trimmed();
    QVERIFY(!holder.isEmpty() && !waiter.isEmpty());
    QCOMPARE(acquire(holder, "lock:release/train"), 200);
    QCOMPARE(acquire(waiter, "lock:release/train"), 409);
    QJsonObject asked;
    QCOMPARE(post(waiter, "/release-request",
                  {{"resource", "lock:release/train"},
                   {"reason", "the hotfix must ship"},
                   {"urgency", "high"},
                   {"deadlineSeconds", 1}},
                  &asked),
             200);
    const QString leaseId = asked["request"].toObject()["leaseId"].toString();
    QVERIFY2(!leaseId.isEmpty(), QJsonDocument(asked).toJson().constData());

    // `leasehold why` as the run's command would call it: the run's folder, the agent's key.
    QTemporaryDir run;
    QFile root(run.filePath("root"));
    QVERIFY(root.open(QIODevice::WriteOnly));
    root.write(QFile::encodeName(m_dir.path()));
    root.close();
    QProcess why;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("LEASEHOLD_RUN", run.path());
    env.insert("LEASEHOLD_URL", m_url);
    env.insert("LEASEHOLD_KEY", QString::fromLatin1(holder));
    env.insert("LEASEHOLD_AGENT", "did:agent:busy");
    why.setProcessEnvironment(env);
    why.start(QStringLiteral(LEASEHOLD_BINARY), {"why"});
    QVERIFY(why.waitForFinished(20'000));
    QCOMPARE(why.exitCode(), 0);
    const QByteArray told = why.readAllStandardOutput();
    QVERIFY2(told.contains("did:agent:hotfix asks you to let go of lock:release/train (high "
                           "urgency"),
             told.constData());
    QVERIFY2(told.contains("\"the hotfix must ship\""), told.constData());

    // A second on, unanswered: overdue. Ask the doctor until it says so (bounded).
    Run r;
    QDeadlineTimer deadline(20'000);
    do {
        r = ctl({"doctor"});
    } while (!r.out.contains("has not answered") && !deadline.hasExpired());
    QVERIFY2(r.out.contains("did:agent:busy has not answered the high-urgency release request "
                            "for lock:release/train by did:agent:hotfix"),
             r.out.constData());
    QVERIFY2(r.out.contains("fix: leasehold ctl release-lease " + leaseId.toLatin1()),
             r.out.constData());
    QCOMPARE(r.code, 1);
    QCOMPARE(ctl({"release-lease", leaseId}).code, 0);
    QCOMPARE(ctl({"release-lease", leaseId}).code, 1); // gone: refused, naming it
    QVERIFY(!ctl({"doctor"}).out.contains("has not answered"));
    QCOMPARE(acquire(waiter, "lock:release/train"), 200);
}

// The data directory on a file system of 8 MiB (a tmpfs mounted here, so root only), under the
// default 1 GiB the health check asks for: the doctor names the folder and its room, and exits 1.
void TstDoctor::aStoreUnderASmallQuotaIsFound()
{
    if (::geteuid() != 0)
        QSKIP("mounting a small tmpfs needs root");
    const QString small = m_dir.filePath("small");
    QVERIFY(QDir().mkpath(small));
    const int mounted =
        QProcess::execute("mount", {"-t", "tmpfs", "-o", "size=8m", "tmpfs", small});
    if (mounted != 0)
        QSKIP("mount -t tmpfs failed here (no CAP_SYS_ADMIN in this container?)");
    QProcess server;
    QString why;
    const QString url = start(server, small + "/data", m_dir.filePath("small.json"), "{}", &why);
    Run r;
    if (!url.isEmpty())
        r = ctltest::ctl({"--url", url, "--data-dir", small + "/data"}, {"doctor"});
    server.terminate();
    server.waitForFinished(10'000);
    QProcess::execute("umount", {"-l", small});
    QVERIFY2(!url.isEmpty(), qPrintable(why));
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("the data directory " + QFile::encodeName(small) + "/data has "),
             r.out.constData());
    QVERIFY2(r.out.contains("of 8 MiB (below 1024 MiB)"), r.out.constData());
    QVERIFY2(r.out.contains("critical: "), r.out.constData());
}

QTEST_GUILESS_MAIN(TstDoctor)
#include "tst_doctor.moc"

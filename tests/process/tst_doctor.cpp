// `leasehold ctl doctor` and `ctl sweep` against the real binary (headless, port 0), on an
// instance whose live window is 5 s: a holder that stops calling is soon "gone", as a crashed
// agent is after the default 5 minutes.
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

private:
    Run ctl(const QStringList &args);
    int acquire(const QByteArray &key, const QString &resource);

    QTemporaryDir m_dir;
    QProcess m_server;
    QString m_url;
    QNetworkAccessManager m_net;
    QByteArray m_key;
};

void TstDoctor::initTestCase()
{
    QFile config(m_dir.filePath("config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(R"({"liveWindowSeconds": 5})");
    config.close();
    m_server.start(QStringLiteral(LEASEHOLD_BINARY),
                   {"--headless", "--port", "0", "--data-dir", m_dir.filePath("data"), "--config",
                    config.fileName()});
    QVERIFY(m_server.waitForStarted(10'000));
    while (!m_server.canReadLine())
        QVERIFY(m_server.waitForReadyRead(10'000));
    const QByteArray line = m_server.readLine().trimmed();
    QVERIFY2(line.startsWith("listening "), line.constData());
    m_url = QString::fromLatin1(line.mid(10));
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
    QVERIFY2(text.contains("did:agent:crashed holds 1 lease and is live on no surface"),
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

QTEST_GUILESS_MAIN(TstDoctor)
#include "tst_doctor.moc"

// The console of an instance in cluster mode, against a real etcd on loopback: on a standby it
// names the leader and is read-only (levers off, and refused with the reason should one reach
// the engine anyway); once that instance takes over, the same window leads, levers and all.

#include "consoletest.h"
#include "etcdcluster.h"

#include <QAction>
#include <QDir>
#include <QPushButton>
#include <QStatusBar>

using namespace consoletest;

class TstStandbyConsole : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void aStandbysConsoleIsReadOnlyUntilItLeads();

private:
    std::function<void(AppOptions &)> inCluster() const
    {
        QStringList endpoints;
        for (const QUrl &url : m_etcd->endpoints())
            endpoints << url.toString();
        return [endpoints](AppOptions &o) {
            o.etcd = endpoints;
            o.sessionTtlSeconds = 2;
        };
    }
    static bool leverOn(const ConsoleFixture &f, const char *name)
    {
        const auto *action = f.window->findChild<QAction *>(QLatin1String(name));
        return action && action->isEnabled();
    }

    std::unique_ptr<EtcdCluster> m_etcd;
};

void TstStandbyConsole::initTestCase()
{
    m_etcd = std::make_unique<EtcdCluster>(1);
    std::string error;
    QVERIFY2(m_etcd->start(&error), error.c_str());
}

void TstStandbyConsole::aStandbysConsoleIsReadOnlyUntilItLeads()
{
    ConsoleFixture leader(false, inCluster());
    QVERIFY(leader.started);
    QVERIFY(QTest::qWaitFor(
        [&] { return leader.window->clusterText().startsWith(QStringLiteral("Leader (term")); },
        10'000));
    QVERIFY(!leader.window->readOnly());
    QVERIFY(leverOn(leader, "releaseAll"));
    QCOMPARE(leader.acquire(kKeyA, QStringLiteral("lock:deploy/production")).status, 200);

    ConsoleFixture standby(false, inCluster());
    QVERIFY(standby.started);
    const QString names = QStringLiteral("Standby: the leader is %1 ").arg(leader.url);
    QVERIFY2(
        QTest::qWaitFor([&] { return standby.window->clusterText().startsWith(names); }, 10'000),
        qPrintable(standby.window->clusterText()));
    QVERIFY(standby.window->readOnly());
    for (const char *lever : {"releaseLease", "releaseHolder", "releaseAll", "pause", "suspend",
                              "unsuspend", "connectAgent"})
        QVERIFY2(!leverOn(standby, lever), lever);
    QVERIFY(leverOn(standby, "exportLedger")); // reading stays possible
    standby.window->showAgent(QStringLiteral("did:agent:a"));
    const auto *suspend = standby.window->findChild<QPushButton *>(QStringLiteral("agentSuspend"));
    QVERIFY(suspend && !suspend->isEnabled());
    if (const QString dir = qEnvironmentVariable("LEASEHOLD_ARTIFACTS"); !dir.isEmpty()) {
        QDir().mkpath(dir);
        standby.window->resize(1280, 760);
        QVERIFY(standby.nextFrames());
        QVERIFY(standby.window->grab().save(dir + QStringLiteral("/console-standby.png")));
    }
    // A lever that reaches the standby's engine anyway is refused, saying where to go.
    standby.window->setConfirm([](const QString &, const QString &) { return true; });
    standby.window->releaseAll();
    const QString refused = QStringLiteral("Not done: this instance stands by; the levers are on "
                                           "the leader's console (%1)")
                                .arg(leader.url);
    QVERIFY2(QTest::qWaitFor(
                 [&] { return standby.window->statusBar()->currentMessage() == refused; }, 5'000),
             qPrintable(standby.window->statusBar()->currentMessage()));
    // The leader's lease was not touched, and the leader names two instances standing.
    QCOMPARE(leader.acquire(kKeyB, QStringLiteral("lock:deploy/production")).status, 409);
    QVERIFY(QTest::qWaitFor(
        [&] { return leader.window->clusterText().contains(QStringLiteral("of 2 instances")); },
        10'000));

    // The leader goes (resigning); the standby takes over and its console leads.
    leader.stop();
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     return standby.window->clusterText().startsWith(
                         QStringLiteral("Leader (term"));
                 },
                 15'000),
             qPrintable(standby.window->clusterText()));
    QVERIFY(!standby.window->readOnly());
    QVERIFY(leverOn(standby, "releaseAll"));
    QVERIFY(suspend->isEnabled());
    // With the fleet: the lease came over, and the lever now acts on it.
    QCOMPARE(standby.acquire(kKeyB, QStringLiteral("lock:deploy/production")).status, 409);
    standby.window->releaseAll();
    QVERIFY(QTest::qWaitFor(
        [&] {
            return standby.window->statusBar()->currentMessage() ==
                   QStringLiteral("Released all 1 lease");
        },
        5'000));
    QCOMPARE(standby.acquire(kKeyB, QStringLiteral("lock:deploy/production")).status, 200);
}

QTEST_MAIN(TstStandbyConsole)
#include "tst_standbyconsole.moc"

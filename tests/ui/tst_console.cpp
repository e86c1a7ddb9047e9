// The console against a running service: every lever reaches the engine (and release-all asks
// first, saying how much it affects), filters narrow the views, incidents raise a banner, the
// connect dialog's key works (also after a restart), and the ledger exports.

#include "agentdetailpage.h"
#include "connectagentdialog.h"
#include "consolerows.h"
#include "consoletest.h"
#include "incidentnotifier.h"
#include "ledgerfilterproxy.h"
#include "ledgermodel.h"
#include "resourcetreepage.h"
#include "snapshottablemodel.h"
#include "tablepage.h"
#include "timelinepage.h"
#include "timelineview.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QTableView>
#include <QTreeWidget>

using namespace consoletest;

namespace {

// Selects the row of `page` whose column `column` shows `text`; false when there is none.
bool selectRow(TablePage *page, int column, const QString &text)
{
    QSortFilterProxyModel *proxy = page->proxy();
    for (int r = 0; r < proxy->rowCount(); ++r) {
        if (proxy->index(r, column).data(SnapshotTableModel::RawRole).toString() == text) {
            page->view()->setFocus();
            page->view()->selectRow(r);
            return true;
        }
    }
    return false;
}

// a holds src/a.cpp and b the deploy lock, and the console's Holders show both; false (with
// the failure reported) otherwise.
bool holdAFileAndTheDeployLock(ConsoleFixture &f)
{
    if (!f.started || f.acquire(kKeyA, QStringLiteral("src/a.cpp")).status != 200 ||
        f.acquire(kKeyB, QStringLiteral("lock:deploy/production")).status != 200) {
        QTest::qFail("the service did not grant the two leases", __FILE__, __LINE__);
        return false;
    }
    SnapshotTableModel *holders = f.window->model(QStringLiteral("Holders"));
    if (!QTest::qWaitFor([holders] { return holders->rowCount() == 2; }, 5000)) {
        QTest::qFail("Holders did not show the two leases", __FILE__, __LINE__);
        return false;
    }
    return true;
}

bool ledgerHas(const LedgerModel *m, leasehold::EventKind kind, const QString &actor)
{
    for (int r = 0; r < m->rowCount(); ++r) {
        const leasehold::LedgerEvent &e = m->event(r);
        if (e.kind == kind && QString::fromStdString(e.actorDid) == actor)
            return true;
    }
    return false;
}

} // namespace

class TestConsole : public QObject
{
    Q_OBJECT

private slots:
    void leversReachTheEngine();
    void releaseAllAsksFirst();
    void pauseAndSuspendRefuseAgents();
    void filtersNarrowTheViews();
    void holdersAnswerWhatCoversAPath();
    void theResourceTreeNarrowsTheTables();
    void theAgentDetailFollowsTheSelection();
    void theTimelineReadsWhatTheConsoleDidNotSee();
    void deadlockRaisesAnIncident();
    void connectDialogKeyWorksAndSurvivesRestart();
    void ledgerExports();
};

void TestConsole::theTimelineReadsWhatTheConsoleDidNotSee()
{
    // a holds and lets go of a file, b holds the deploy lock; then the service restarts, so
    // the new console never saw a's lease: the timeline reads it from the store.
    ConsoleFixture f;
    QVERIFY(holdAFileAndTheDeployLock(f));
    QCOMPARE(f.post(QStringLiteral("/release"), {{"resource", "src/a.cpp"}}, kKeyA).status, 200);
    f.stop();
    QVERIFY(f.start());
    QVERIFY(f.nextFrames(1));
    f.window->showView(QStringLiteral("Timeline"));
    TimelinePage *timeline = f.window->timeline();
    timeline->filterEdit()->setText(QStringLiteral("fs:src/a.cpp"));
    auto lane = [timeline]() -> const TimelineModel::Lane * {
        const auto &lanes = timeline->view()->lanes();
        return lanes.size() == 1 ? &lanes.front() : nullptr;
    };
    QTRY_VERIFY(lane() && !lane()->bars.empty());
    const TimelineModel::Bar *held = lane()->bars.front();
    QCOMPARE(held->agent, "did:agent:a");
    QCOMPARE(held->end, TimelineModel::Bar::End::Released);
    QVERIFY(timeline->historyEvents() >= 2); // its grant and its release, from the store
    QVERIFY(timeline->summary().contains(QStringLiteral("for fs:src/a.cpp")));

    // b's lease lived through the restart: Enter on its lane selects it in Holders.
    timeline->filterEdit()->setText(QStringLiteral("lock:deploy"));
    QTRY_VERIFY(lane() && !lane()->bars.empty());
    timeline->view()->setFocus();
    QTest::keyClick(timeline->view(), Qt::Key_Down);
    QTest::keyClick(timeline->view(), Qt::Key_Return);
    TablePage *holders = f.window->page(QStringLiteral("Holders"));
    QCOMPARE(f.window->findChild<QStackedWidget *>()->currentWidget(), holders);
    const QModelIndex current = holders->view()->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(current.data(SnapshotTableModel::KeyRole).toString(),
             QString::fromStdString(lane()->bars.front()->leaseId));
}

void TestConsole::theResourceTreeNarrowsTheTables()
{
    ConsoleFixture f;
    QVERIFY(holdAFileAndTheDeployLock(f));
    f.window->showView(QStringLiteral("Resources"));
    ResourceTreePage *tree = f.window->resourceTree();
    QTRY_VERIFY(tree->item(QStringLiteral("lock:deploy")));
    QCOMPARE(tree->item(QStringLiteral("fs:"))->data(ResourceTreePage::Held, Qt::DisplayRole),
             QVariant(1));

    // Selecting a folder narrows Holders, Queue and the Ledger to what lies below it.
    tree->view()->setCurrentItem(tree->item(QStringLiteral("lock:deploy")));
    TablePage *holdersPage = f.window->page(QStringLiteral("Holders"));
    QCOMPARE(holdersPage->filterEdit()->text(), QStringLiteral("lock:deploy"));
    QCOMPARE(holdersPage->proxy()->rowCount(), 1);
    QCOMPARE(f.window->page(QStringLiteral("Queue"))->filterEdit()->text(),
             QStringLiteral("lock:deploy"));
    auto *ledgerResource = f.window->findChild<QLineEdit *>(QStringLiteral("resourceFilter"));
    QCOMPARE(ledgerResource->text(), QStringLiteral("lock:deploy"));
    // Another row moves the filters along; a filter the operator typed is left alone.
    f.window->page(QStringLiteral("Queue"))->filterEdit()->setText(QStringLiteral("mine"));
    tree->view()->setCurrentItem(tree->item(QStringLiteral("fs:src")));
    QCOMPARE(holdersPage->filterEdit()->text(), QStringLiteral("fs:src"));
    QCOMPARE(f.window->page(QStringLiteral("Queue"))->filterEdit()->text(), QStringLiteral("mine"));
    // Clearing the selection gives the tables back.
    tree->view()->clearSelection();
    QCOMPARE(holdersPage->filterEdit()->text(), QString());
    QCOMPARE(holdersPage->proxy()->rowCount(), 2);
}

void TestConsole::theAgentDetailFollowsTheSelection()
{
    ConsoleFixture f;
    QVERIFY(holdAFileAndTheDeployLock(f));
    SnapshotTableModel *holders = f.window->model(QStringLiteral("Holders"));
    auto *dock = f.window->findChild<QDockWidget *>(QStringLiteral("agentDock"));
    QVERIFY(dock && dock->isHidden()); // until an agent is picked

    // Picking b's row in Holders shows b beside it.
    f.window->showView(QStringLiteral("Holders"));
    QVERIFY(selectRow(f.window->page(QStringLiteral("Holders")), consolerows::HolderAgent,
                      QStringLiteral("did:agent:b")));
    AgentDetailPage *detail = f.window->agentDetail();
    QVERIFY(dock->isVisible());
    QCOMPARE(detail->agent(), QStringLiteral("did:agent:b"));
    QCOMPARE(detail->leases()->topLevelItemCount(), 1);
    QCOMPARE(detail->leases()->topLevelItem(0)->text(0), QStringLiteral("lock:deploy/production"));

    // Its lever acts on b through the engine: b's lease goes, a's stays.
    detail->findChild<QPushButton *>(QStringLiteral("agentRelease"))->click();
    QTRY_COMPARE(holders->rowCount(), 1);
    QTRY_COMPARE(detail->leases()->topLevelItemCount(), 0);
}

void TestConsole::leversReachTheEngine()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/a.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/b.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("lock:deploy/production")).status, 200);
    SnapshotTableModel *holders = f.window->model(QStringLiteral("Holders"));
    QTRY_COMPARE(holders->rowCount(), 3);
    // The navigation shows each view's count.
    auto *views = f.window->findChild<QListWidget *>(QStringLiteral("views"));
    const QList<QListWidgetItem *> holdersItem =
        views->findItems(QStringLiteral("Holders"), Qt::MatchStartsWith);
    QCOMPARE(holdersItem.size(), 1);
    QCOMPARE(holdersItem.front()->text(), QStringLiteral("Holders  3"));

    // Release one lease: select it in Holders, press the lever.
    f.window->showView(QStringLiteral("Holders"));
    QVERIFY(selectRow(f.window->page(QStringLiteral("Holders")), consolerows::HolderResource,
                      QStringLiteral("fs:src/a.cpp")));
    f.window->findChild<QAction *>(QStringLiteral("releaseLease"))->trigger();
    QTRY_COMPARE(holders->rowCount(), 2);
    QTRY_VERIFY(ledgerHas(f.window->ledgerModel(), leasehold::EventKind::AdminReleaseLease,
                          QStringLiteral("did:op:tester")));

    // Release a holder from the Agents view: everything a holds goes, b keeps its lock.
    f.window->showView(QStringLiteral("Agents"));
    QVERIFY(selectRow(f.window->page(QStringLiteral("Agents")), consolerows::AgentDid,
                      QStringLiteral("did:agent:a")));
    f.window->findChild<QAction *>(QStringLiteral("releaseHolder"))->trigger();
    QTRY_COMPARE(holders->rowCount(), 1);
    QCOMPARE(holders->rows().front().values[consolerows::HolderAgent].toString(),
             QStringLiteral("did:agent:b"));
    QTRY_VERIFY(ledgerHas(f.window->ledgerModel(), leasehold::EventKind::AdminReleaseHolder,
                          QStringLiteral("did:op:tester")));
    // The engine agrees: a can take its file again at once.
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/b.cpp")).status, 200);
}

void TestConsole::releaseAllAsksFirst()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/a.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/b.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/c.cpp")).status, 200);
    SnapshotTableModel *holders = f.window->model(QStringLiteral("Holders"));
    QTRY_COMPARE(holders->rowCount(), 3);

    QString asked;
    f.window->setConfirm([&](const QString &, const QString &text) {
        asked = text;
        return false;
    });
    QAction *all = f.window->findChild<QAction *>(QStringLiteral("releaseAll"));
    all->trigger();
    QVERIFY2(asked.contains(QLatin1String("3 leases")) && asked.contains(QLatin1String("2 agents")),
             qPrintable(asked));
    QVERIFY(f.nextFrames());
    QCOMPARE(holders->rowCount(), 3); // declined: nothing happened

    f.window->setConfirm([](const QString &, const QString &) { return true; });
    all->trigger();
    QTRY_COMPARE(holders->rowCount(), 0);
    QTRY_VERIFY(ledgerHas(f.window->ledgerModel(), leasehold::EventKind::AdminReleaseAll,
                          QStringLiteral("did:op:tester")));
}

void TestConsole::pauseAndSuspendRefuseAgents()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/a.cpp")).status, 200);
    QTRY_COMPARE(f.window->model(QStringLiteral("Agents"))->rowCount(), 1);

    QAction *pause = f.window->findChild<QAction *>(QStringLiteral("pause"));
    pause->trigger();
    QTRY_VERIFY(f.window->state().frame()->snapshot.paused);
    QTRY_VERIFY(pause->isChecked());
    Reply refused = f.acquire(kKeyB, QStringLiteral("src/b.cpp"));
    QCOMPARE(refused.body.value("reason").toString(), QStringLiteral("paused"));
    pause->trigger();
    QTRY_VERIFY(!f.window->state().frame()->snapshot.paused);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/b.cpp")).status, 200);

    f.window->showView(QStringLiteral("Agents"));
    QTRY_COMPARE(f.window->model(QStringLiteral("Agents"))->rowCount(), 2);
    QVERIFY(selectRow(f.window->page(QStringLiteral("Agents")), consolerows::AgentDid,
                      QStringLiteral("did:agent:b")));
    f.window->findChild<QAction *>(QStringLiteral("suspend"))->trigger();
    SnapshotTableModel *agents = f.window->model(QStringLiteral("Agents"));
    QTRY_VERIFY(agents->rowByKey(QStringLiteral("did:agent:b"))
                    ->values[consolerows::AgentSuspended]
                    .toBool());
    refused = f.acquire(kKeyB, QStringLiteral("src/c.cpp"));
    QCOMPARE(refused.body.value("reason").toString(), QStringLiteral("suspended"));
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/c.cpp")).status, 200); // a is not affected

    f.window->findChild<QAction *>(QStringLiteral("unsuspend"))->trigger();
    QTRY_VERIFY(!agents->rowByKey(QStringLiteral("did:agent:b"))
                     ->values[consolerows::AgentSuspended]
                     .toBool());
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/d.cpp")).status, 200);
}

void TestConsole::filtersNarrowTheViews()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/a.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("docs/guide.md")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("lock:deploy/production")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/a.cpp")).status, 409);
    TablePage *holders = f.window->page(QStringLiteral("Holders"));
    QTRY_COMPARE(holders->proxy()->rowCount(), 3);
    holders->filterEdit()->setText(QStringLiteral("deploy"));
    QCOMPARE(holders->proxy()->rowCount(), 1);
    holders->filterEdit()->setText(QStringLiteral("did:agent:a"));
    QCOMPARE(holders->proxy()->rowCount(), 2);
    holders->filterEdit()->clear();
    QCOMPARE(holders->proxy()->rowCount(), 3);

    TablePage *ledger = f.window->page(QStringLiteral("Ledger"));
    QTRY_COMPARE(f.window->ledgerModel()->rowCount(), 4);
    auto *kind = ledger->findChild<QComboBox *>(QStringLiteral("kindFilter"));
    kind->setCurrentIndex(kind->findData(QStringLiteral("refused")));
    QCOMPARE(ledger->proxy()->rowCount(), 1);
    kind->setCurrentIndex(0);
    ledger->findChild<QLineEdit *>(QStringLiteral("agentFilter"))
        ->setText(QStringLiteral("agent:b"));
    QCOMPARE(ledger->proxy()->rowCount(), 2);
    ledger->findChild<QLineEdit *>(QStringLiteral("resourceFilter"))
        ->setText(QStringLiteral("deploy"));
    QCOMPARE(ledger->proxy()->rowCount(), 1);
}

void TestConsole::holdersAnswerWhatCoversAPath()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/lib")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/**/*.ts")).status, 409); // meets src/lib
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("tests/**/*.ts")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("docs/*.md")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("lock:deploy/production")).status, 200);
    TablePage *holders = f.window->page(QStringLiteral("Holders"));
    QTRY_COMPARE(holders->proxy()->rowCount(), 4);
    auto *covers = holders->findChild<QLineEdit *>(QStringLiteral("coversFilter"));
    QVERIFY(covers);
    auto shown = [&] {
        QStringList names;
        for (int r = 0; r < holders->proxy()->rowCount(); ++r)
            names << holders->proxy()->index(r, consolerows::HolderResource).data().toString();
        names.sort();
        return names;
    };
    // A pattern covers what it matches and what lies below a match; a folder what is below it.
    covers->setText(QStringLiteral("tests/unit/a.ts"));
    QCOMPARE(shown(), QStringList{QStringLiteral("fs:tests/**/*.ts")});
    covers->setText(QStringLiteral("src/lib/x/y.ts"));
    QCOMPARE(shown(), QStringList{QStringLiteral("fs:src/lib")});
    covers->setText(QStringLiteral("docs/guide.md/figure.png"));
    QCOMPARE(shown(), QStringList{QStringLiteral("fs:docs/*.md")});
    covers->setText(QStringLiteral("docs/sub/guide.md")); // `*` stays within one folder
    QCOMPARE(shown(), QStringList());
    covers->setText(QStringLiteral("lock:deploy/production/eu"));
    QCOMPARE(shown(), QStringList{QStringLiteral("lock:deploy/production")});
    // The text filter still applies beside it; a path that names nothing says why.
    covers->setText(QStringLiteral("tests/a.ts"));
    holders->filterEdit()->setText(QStringLiteral("did:agent:a"));
    QCOMPARE(shown(), QStringList());
    holders->filterEdit()->clear();
    QCOMPARE(shown(), QStringList{QStringLiteral("fs:tests/**/*.ts")});
    covers->setText(QStringLiteral("../outside"));
    QCOMPARE(shown(), QStringList());
    QVERIFY2(!covers->toolTip().isEmpty(), qPrintable(covers->toolTip()));
    covers->clear();
    QCOMPARE(holders->proxy()->rowCount(), 4);
}

void TestConsole::deadlockRaisesAnIncident()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/parser.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/lexer.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/lexer.cpp")).status, 409);
    const Reply deadlock = f.acquire(kKeyB, QStringLiteral("src/parser.cpp"), 5000);
    QCOMPARE(deadlock.body.value("reason").toString(), QStringLiteral("deadlock"));

    SnapshotTableModel *deadlocks = f.window->model(QStringLiteral("Deadlocks"));
    QTRY_COMPARE(deadlocks->rowCount(), 1);
    QCOMPARE(deadlocks->rows().front().mark, RowMark::Incident);
    QCOMPARE(deadlocks->rows().front().values[3].toString(), QStringLiteral("fs:src/lexer.cpp"));
    // No tray on the offscreen platform: the window shows a banner.
    QVERIFY(!f.window->notifier()->usesTray());
    QTRY_VERIFY(f.window->bannerText().contains(QLatin1String("Deadlock")));
    QCOMPARE(f.window->notifier()->notifications(), 1);
    // "Show" in the banner opens the view the incident is in.
    f.window->showView(QStringLiteral("Holders"));
    auto *banner = f.window->findChild<QLabel *>(QStringLiteral("banner"));
    emit banner->linkActivated(QStringLiteral("show"));
    QCOMPARE(f.window->findChild<QListWidget *>(QStringLiteral("views"))
                 ->currentItem()
                 ->data(Qt::UserRole)
                 .toString(),
             QStringLiteral("Deadlocks"));
    QVERIFY(f.window->bannerText().isEmpty());
}

void TestConsole::connectDialogKeyWorksAndSurvivesRestart()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QTRY_VERIFY(f.window->state().frame());
    f.window->connectAgent();
    auto *dialog = f.window->findChild<ConnectAgentDialog *>();
    QVERIFY(dialog);
    dialog->findChild<QLineEdit *>(QStringLiteral("did"))->setText(QStringLiteral("did:agent:new"));
    dialog->findChild<QPushButton *>(QStringLiteral("mint"))->click();
    QTRY_VERIFY(!dialog->key().isEmpty());
    const QByteArray key = dialog->key().toLatin1();
    QVERIFY(dialog->snippet(QStringLiteral("claude")).contains(f.url + QStringLiteral("/mcp")));
    QVERIFY(dialog->snippet(QStringLiteral("claude")).contains(QLatin1String("Bearer " + key)));
    QVERIFY(dialog->snippet(QStringLiteral("json")).contains(QLatin1String(key)));
    QVERIFY(dialog->snippet(QStringLiteral("curl")).contains(QLatin1String(key)));
    // The guards take the key from the agent's environment; each snippet names the instance.
    for (const char *way : {"run", "hook", "guard", "git"}) {
        const QString text = dialog->snippet(QLatin1String(way));
        QVERIFY2(text.contains(QLatin1String("LEASEHOLD_KEY=" + key)), qPrintable(text));
        QVERIFY2(text.contains(f.url), qPrintable(text));
    }
    QVERIFY(dialog->snippet(QStringLiteral("run")).contains(QLatin1String("leasehold run")));
    QVERIFY(dialog->snippet(QStringLiteral("hook"))
                .contains(QLatin1String("leasehold ctl install-hooks claude-code")));
    QVERIFY(
        dialog->snippet(QStringLiteral("guard")).contains(QLatin1String("leasehold guard mcp")));
    QVERIFY(dialog->snippet(QStringLiteral("git"))
                .contains(QLatin1String("leasehold guard git install")));

    Reply granted = f.acquire(key, QStringLiteral("src/new.cpp"));
    QCOMPARE(granted.status, 200);
    QCOMPARE(granted.body.value("lease").toObject().value("holder").toString(),
             QStringLiteral("did:agent:new"));
    QTRY_VERIFY(
        f.window->model(QStringLiteral("Agents"))->rowByKey(QStringLiteral("did:agent:new")));
    QCOMPARE(f.window->model(QStringLiteral("Agents"))
                 ->rowByKey(QStringLiteral("did:agent:new"))
                 ->values[consolerows::AgentKeys]
                 .toInt(),
             1);
    // ... and how it is connected.
    QTRY_COMPARE(f.window->model(QStringLiteral("Agents"))
                     ->rowByKey(QStringLiteral("did:agent:new"))
                     ->values[consolerows::AgentVia]
                     .toString(),
                 QStringLiteral("rest"));
    QCOMPARE(f.acquire("not-a-key-at-all-000", QStringLiteral("src/x.cpp")).status, 401);

    // The key was kept (as a digest): it still works after a restart.
    f.stop();
    QVERIFY(f.start());
    QCOMPARE(f.acquire(key, QStringLiteral("src/new2.cpp")).status, 200);
}

void TestConsole::ledgerExports()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QCOMPARE(f.acquire(kKeyA, QStringLiteral("src/a.cpp")).status, 200);
    QCOMPARE(f.acquire(kKeyB, QStringLiteral("src/a.cpp")).status, 409);
    QTemporaryDir out;
    const QString path = out.filePath(QStringLiteral("ledger.csv"));
    QSignalSpy done(f.link.get(), &EngineLink::exportFinished);
    f.link->exportLedger(path, QStringLiteral("csv"));
    QTRY_COMPARE(done.count(), 1);
    QCOMPARE(done.at(0).at(1).toLongLong(), 2LL);
    QCOMPARE(done.at(0).at(2).toString(), QString());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().split('\n');
    QCOMPARE(lines.size(), 4); // header, two events, and the empty tail after the last CRLF
    QVERIFY(lines[0].startsWith("seq,at,kind,actorDid"));
    QVERIFY(lines[2].contains("coordination.lease.refused"));
}

QTEST_MAIN(TestConsole)
#include "tst_console.moc"

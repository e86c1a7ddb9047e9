// MainWindow: the levers, their actions, shortcuts and context menus.

#include "mainwindow.h"

#include "agentdetailpage.h"
#include "connectagentdialog.h"
#include "consolerows.h"
#include "enginelink.h"
#include "ledgermodel.h"
#include "snapshottablemodel.h"
#include "tablepage.h"
#include "webhooksdialog.h"
#include "wording.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>

#include <set>

using namespace leasehold;

void MainWindow::buildActions()
{
    auto *toolbar = addToolBar(tr("Levers"));
    toolbar->setObjectName(QStringLiteral("levers"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    auto make = [this](const char *name, const QString &text, const QKeySequence &key,
                       const QString &tip, auto slot) {
        auto *a = new QAction(text, this);
        a->setObjectName(QLatin1String(name));
        a->setShortcut(key);
        a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
        a->setStatusTip(tip);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    QAction *releaseLease =
        make("releaseLease", tr("Release lease"), QKeySequence::Delete,
             tr("End the selected leases now"), [this] { releaseSelectedLeases(); });
    QAction *releaseHolder = make(
        "releaseHolder", tr("Release holder"), QKeySequence(Qt::SHIFT | Qt::Key_Delete),
        tr("Release everything the selected agents hold"), [this] { releaseSelectedHolders(); });
    QAction *all =
        make("releaseAll", tr("Release all…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Delete),
             tr("Release every lease of every agent"), [this] { releaseAll(); });
    m_pauseAction = make("pause", tr("Pause admissions"), QKeySequence(Qt::CTRL | Qt::Key_P),
                         tr("Refuse new requests until resumed (held leases stay)"),
                         [this] { togglePaused(); });
    m_pauseAction->setCheckable(true);
    QAction *suspend =
        make("suspend", tr("Suspend agent"), QKeySequence(Qt::CTRL | Qt::Key_D),
             tr("Release the selected agents' leases and refuse them until unsuspended"),
             [this] { suspendSelected(true); });
    QAction *unsuspend =
        make("unsuspend", tr("Unsuspend"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D),
             tr("Let the selected agents acquire again"), [this] { suspendSelected(false); });
    QAction *connectAgent = make(
        "connectAgent", tr("Connect an agent…"), QKeySequence(Qt::CTRL | Qt::Key_N),
        tr("Mint a key and copy an MCP client configuration"), [this] { this->connectAgent(); });
    QAction *exportLedger = make(
        "exportLedger", tr("Export ledger…"), QKeySequence(Qt::CTRL | Qt::Key_E),
        tr("Write the whole ledger to a JSON Lines or CSV file"), [this] { this->exportLedger(); });
    // The agent detail's own levers; a release request's force-release is Release lease.
    connect(m_agentDetail, &AgentDetailPage::releaseHolderRequested, m_link,
            &EngineLink::releaseHolder);
    connect(m_agentDetail, &AgentDetailPage::suspendRequested, m_link, &EngineLink::setSuspended);
    connect(m_agentDetail, &AgentDetailPage::releaseLeaseRequested, m_link,
            &EngineLink::releaseLease);
    m_levers = {releaseLease, releaseHolder, all, m_pauseAction, suspend, unsuspend, connectAgent};
    for (QAction *a : {releaseLease, releaseHolder, all, m_pauseAction, suspend, unsuspend})
        toolbar->addAction(a);
    toolbar->addSeparator();
    toolbar->addAction(connectAgent);
    toolbar->addAction(exportLedger);

    QAction *webhooks =
        make("webhooks", tr("Webhooks…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_W),
             tr("The endpoints told of incidents: deliveries, failures, add, "
                "remove"),
             [this] {
                 auto *dialog = new WebhooksDialog(m_link, this);
                 dialog->setAttribute(Qt::WA_DeleteOnClose);
                 dialog->show();
             });
    m_levers.push_back(webhooks);

    QMenu *file = menuBar()->addMenu(tr("&Leasehold"));
    file->addAction(connectAgent);
    file->addAction(webhooks);
    file->addAction(exportLedger);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    QMenu *levers = menuBar()->addMenu(tr("L&evers"));
    for (QAction *a : {releaseLease, releaseHolder, all, m_pauseAction, suspend, unsuspend})
        levers->addAction(a);
    QMenu *views = menuBar()->addMenu(tr("&View"));
    const QStringList names = {tr("Overview"),  tr("Resources"),  tr("Holders"), tr("Queue"),
                               tr("Deadlocks"), tr("Wait graph"), tr("Trust"),   tr("Pins"),
                               tr("Agents"),    tr("Ledger")};
    for (int i = 0; i < names.size(); ++i) {
        views->addAction(names[i], QKeySequence(Qt::CTRL | (i < 9 ? Qt::Key_1 + i : Qt::Key_0)),
                         this, [this, name = names[i]] { showView(name); });
        if (i == 1) // the pictures of time and of the tree belong together
            views->addAction(tr("Timeline"), QKeySequence(Qt::CTRL | Qt::Key_T), this,
                             [this] { showView(tr("Timeline")); });
    }
    views->addSeparator();
    QAction *agentPanel = m_agentDock->toggleViewAction();
    agentPanel->setText(tr("Agent detail"));
    agentPanel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    views->addAction(agentPanel);
    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Leasehold"), this, [this] {
        QMessageBox::about(this, tr("About Leasehold"),
                           tr("<b>Leasehold %1</b><p>Short, self-expiring leases for fleets of "
                              "agents: who holds what, who waits, and the levers to make them "
                              "let go.</p>")
                               .arg(QApplication::applicationVersion()));
    });

    // Context menus: what makes sense on each view's rows.
    for (TablePage *p : pages()) {
        QTableView *v = p->view();
        if (p->name() == tr("Holders"))
            v->addAction(releaseLease);
        v->addAction(releaseHolder);
        v->addAction(suspend);
        v->addAction(unsuspend);
    }
}

QStringList MainWindow::selectedAgents() const
{
    if (m_stack->currentWidget() == m_ledgerPage)
        return m_ledgerPage->selectedValues(LedgerModel::Agent);
    for (const Table &t : m_tables) {
        if (t.page == m_stack->currentWidget() && t.model->agentColumn() >= 0)
            return t.page->selectedValues(t.model->agentColumn());
    }
    return {};
}

void MainWindow::releaseSelectedLeases()
{
    TablePage *holders = page(tr("Holders"));
    if (m_stack->currentWidget() != holders) {
        statusBar()->showMessage(tr("Select leases in Holders to release them"), 5000);
        return;
    }
    for (const QString &id : holders->selectedValues(consolerows::HolderLeaseId))
        m_link->releaseLease(id);
}

void MainWindow::releaseSelectedHolders()
{
    const QStringList agents = selectedAgents();
    if (agents.isEmpty())
        return statusBar()->showMessage(tr("Select an agent's row first"), 5000);
    for (const QString &did : agents)
        m_link->releaseHolder(did);
}

void MainWindow::releaseAll()
{
    const ConsoleFrame *f = m_state.frame();
    const std::size_t leases = f ? f->snapshot.leases.size() : 0;
    std::set<std::string> holders;
    if (f) {
        for (const LeaseInfo &l : f->snapshot.leases)
            holders.insert(l.holder);
    }
    const QString text = tr("Release %1 held by %2?")
                             .arg(leasehold::countOf(qint64(leases), "lease", "leases"),
                                  leasehold::countOf(qint64(holders.size()), "agent", "agents")) +
                         tr(" Their holders are not told; the next fenced write with an old "
                            "token is refused.");
    if (m_confirm(tr("Release every lease"), text))
        m_link->releaseAll();
}

void MainWindow::togglePaused()
{
    const ConsoleFrame *f = m_state.frame();
    m_link->setPaused(!(f && f->snapshot.paused));
}

void MainWindow::suspendSelected(bool suspended)
{
    const QStringList agents = selectedAgents();
    if (agents.isEmpty())
        return statusBar()->showMessage(tr("Select an agent's row first"), 5000);
    for (const QString &did : agents)
        m_link->setSuspended(did, suspended);
}

void MainWindow::connectAgent()
{
    const ConsoleFrame *f = m_state.frame();
    auto *dialog = new ConnectAgentDialog(m_link, f ? f->facts.listenUrl : QString(),
                                          f && f->facts.open, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
}

void MainWindow::exportLedger()
{
    QString format;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the ledger"), QStringLiteral("leasehold-ledger.jsonl"),
        tr("JSON Lines (*.jsonl);;CSV (*.csv)"), &format);
    if (path.isEmpty())
        return;
    m_link->exportLedger(path, path.endsWith(QLatin1String(".csv")) ? QStringLiteral("csv")
                                                                    : QStringLiteral("jsonl"));
    statusBar()->showMessage(tr("Exporting the ledger to %1…").arg(path));
}

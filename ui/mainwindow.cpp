// MainWindow: layout, frames, status bar and settings. The levers are in mainwindow_levers.cpp,
// the views by name in mainwindow_views.cpp, the moves between views in mainwindow_navigation.cpp.

#include "mainwindow.h"

#include "agentdetailpage.h"
#include "consolerows.h"
#include "coverfilterproxy.h"
#include "enginelink.h"
#include "incidentnotifier.h"
#include "ledgerfilterproxy.h"
#include "ledgermodel.h"
#include "overviewpage.h"
#include "resourcetreepage.h"
#include "snapshottablemodel.h"
#include "tablepage.h"
#include "timelinepage.h"
#include "waitgraphpage.h"
#include "wording.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

using namespace leasehold;

MainWindow::MainWindow(EngineLink *link, QWidget *parent)
    : QMainWindow(parent)
    , m_link(link)
    , m_nav(new QListWidget(this))
    , m_stack(new QStackedWidget(this))
    , m_overview(new OverviewPage(this))
    , m_waitGraph(new WaitGraphPage(this))
    , m_resourceTree(new ResourceTreePage(this))
    , m_timeline(new TimelinePage(this))
    , m_ledger(new LedgerModel(10'000, this))
    , m_ledgerFilter(new LedgerFilterProxy(this))
    , m_notifier(new IncidentNotifier(this))
    , m_banner(new QLabel(this))
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("Leasehold"));
    m_confirm = [this](const QString &title, const QString &text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    buildViews();
    buildAgentDetail();
    buildActions();
    buildStatusBar();

    connect(m_link, &EngineLink::frameArrived, this, &MainWindow::applyFrame);
    connect(m_link, &EngineLink::leverDone, this, [this](const QString &summary) {
        m_lever->setText(summary);
        statusBar()->showMessage(summary, 8000);
    });
    connect(
        m_link, &EngineLink::exportFinished, this,
        [this](const QString &path, qint64 events, const QString &error) {
            statusBar()->showMessage(
                error.isEmpty()
                    ? tr("Exported %1 to %2")
                          .arg(leasehold::countOf(events, "ledger event", "ledger events"), path)
                    : tr("Export to %1 failed: %2").arg(path, error),
                10'000);
        });
    connect(m_notifier, &IncidentNotifier::notified, this,
            [this](const QString &title, const QString &text, Incident::Kind kind) {
                m_bannerKind = kind;
                if (!m_notifier->usesTray())
                    showBanner(title, text);
            });
    connect(m_notifier, &IncidentNotifier::openRequested, this, [this](Incident::Kind kind) {
        showNormal();
        raise();
        activateWindow();
        showIncidentView(kind);
    });
    connect(m_banner, &QLabel::linkActivated, this, [this] {
        showIncidentView(m_bannerKind);
        m_banner->hide();
    });
    m_clock.setInterval(1000);
    connect(&m_clock, &QTimer::timeout, this, &MainWindow::tick);
    m_clock.start();
    m_bannerTimer.setSingleShot(true);
    m_bannerTimer.setInterval(10'000);
    connect(&m_bannerTimer, &QTimer::timeout, m_banner, &QLabel::hide);

    setMinimumSize(860, 540);
    resize(1280, 800);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_nav->setCurrentRow(settings.value(QStringLiteral("window/view"), 0).toInt());
    m_link->requestFrame();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildViews()
{
    using namespace consolerows;
    m_nav->setObjectName(QStringLiteral("views"));
    addNavItem(tr("Overview"));
    m_stack->addWidget(m_overview);
    addNavItem(tr("Resources"));
    m_stack->addWidget(m_resourceTree);
    connect(m_resourceTree, &ResourceTreePage::resourceSelected, this,
            &MainWindow::filterToResource);
    addNavItem(tr("Timeline"));
    m_stack->addWidget(m_timeline);
    m_timeline->setHistoryReader(
        [this](std::uint64_t since, std::size_t limit, const LedgerFilter &filter) {
            return m_link->readLedger(since, limit, filter);
        });
    connect(m_link, &EngineLink::ledgerRead, m_timeline, &TimelinePage::takeHistory);
    connect(m_timeline, &TimelinePage::leaseActivated, this, &MainWindow::showLease);
    // Holders: besides the text filter, "what covers this path?" (a folder, a pattern).
    auto *covers = new CoverFilterProxy(HolderResource, this);
    TablePage *holders = addTable(tr("Holders"), holderColumns(), holderRows, holderCount, covers);
    auto *path = new QLineEdit(holders);
    path->setObjectName(QStringLiteral("coversFilter"));
    path->setPlaceholderText(tr("What covers this path?"));
    path->setAccessibleName(tr("Show the leases that cover a path"));
    path->setClearButtonEnabled(true);
    holders->bar()->insertWidget(1, path, 1);
    connect(path, &QLineEdit::textChanged, covers, &CoverFilterProxy::setPath);
    connect(covers, &CoverFilterProxy::problemChanged, path,
            [path](const QString &problem) { path->setToolTip(problem); });
    addTable(tr("Queue"), queueColumns(), queueRows, queueCount);
    addTable(tr("Deadlocks"), deadlockColumns(), deadlockRows, deadlockCount);
    addNavItem(tr("Wait graph"));
    m_stack->addWidget(m_waitGraph);
    addTable(tr("Trust"), trustColumns(), trustRows, trustCount);
    addTable(tr("Pins"), pinColumns(), pinRows, pinCount);
    addTable(tr("Agents"), agentColumns(), agentRows, agentCount);
    addTable(tr("Health"), healthColumns(), healthRows, healthCount);

    // The ledger: newest first, with its own three filters.
    auto *ledgerPage =
        new TablePage(tr("Ledger"), m_ledger, m_ledgerFilter, m_stack, TablePage::OwnFiltersOnly);
    auto *agent = new QLineEdit(ledgerPage);
    agent->setObjectName(QStringLiteral("agentFilter"));
    agent->setPlaceholderText(tr("Agent…"));
    agent->setClearButtonEnabled(true);
    auto *resource = new QLineEdit(ledgerPage);
    resource->setObjectName(QStringLiteral("resourceFilter"));
    m_ledgerResource = resource;
    resource->setPlaceholderText(tr("Resource…"));
    resource->setClearButtonEnabled(true);
    auto *kind = new QComboBox(ledgerPage);
    kind->setObjectName(QStringLiteral("kindFilter"));
    kind->addItem(tr("All kinds"), QString());
    for (int k = int(EventKind::Granted); k <= int(EventKind::ReleaseRequestOverdue); ++k)
        kind->addItem(LedgerModel::shortKind(EventKind(k)), LedgerModel::shortKind(EventKind(k)));
    ledgerPage->bar()->insertWidget(0, agent, 1);
    ledgerPage->bar()->insertWidget(1, resource, 1);
    ledgerPage->bar()->insertWidget(2, kind);
    connect(agent, &QLineEdit::textChanged, m_ledgerFilter, &LedgerFilterProxy::setAgent);
    connect(resource, &QLineEdit::textChanged, m_ledgerFilter, &LedgerFilterProxy::setResource);
    connect(kind, &QComboBox::currentIndexChanged, this,
            [this, kind] { m_ledgerFilter->setKind(kind->currentData().toString()); });
    m_ledgerPage = ledgerPage;
    m_stack->addWidget(ledgerPage);
    addNavItem(tr("Ledger"));

    m_nav->setFixedWidth(m_nav->sizeHintForColumn(0) + 64); // room for "Deadlocks  12"
    connect(m_nav, &QListWidget::currentRowChanged, m_stack, &QStackedWidget::setCurrentIndex);
    connect(m_stack, &QStackedWidget::currentChanged, this, [this] {
        for (Table &t : m_tables) {
            if (t.stale && m_stack->currentWidget() == t.page)
                build(t);
        }
    });
    m_present.setSingleShot(true);
    connect(&m_present, &QTimer::timeout, this, &MainWindow::present);

    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setWordWrap(true);
    m_banner->setMargin(8);
    m_banner->setAutoFillBackground(true);
    m_banner->setTextFormat(Qt::RichText);
    m_banner->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    QPalette warn = m_banner->palette();
    warn.setColor(QPalette::Window, QColor(200, 60, 50));
    warn.setColor(QPalette::WindowText, Qt::white);
    m_banner->setPalette(warn);
    m_banner->hide();

    auto *central = new QWidget(this);
    auto *column = new QVBoxLayout(central);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    column->addWidget(m_banner);
    buildClusterLine();
    column->addWidget(m_clusterLine);
    auto *row = new QHBoxLayout;
    row->addWidget(m_nav);
    row->addWidget(m_stack, 1);
    column->addLayout(row, 1);
    setCentralWidget(central);
}

void MainWindow::buildStatusBar()
{
    auto label = [this](const char *name) {
        auto *l = new QLabel(this);
        l->setObjectName(QLatin1String(name));
        statusBar()->addPermanentWidget(l);
        return l;
    };
    m_lever = new QLabel(this);
    m_lever->setObjectName(QStringLiteral("leverStatus"));
    statusBar()->addWidget(m_lever, 1);
    m_address = label("address");
    m_mode = label("mode");
    m_strict = label("strict");
    m_live = label("live");
    m_latency = label("latency");
}

void MainWindow::applyFrame(ConsoleFramePtr frame)
{
    // What must see every frame takes it now: incidents, the ledger, the timeline. Tables and
    // pictures are drawn from the newest frame once the queue is drained (present), so a burst
    // of frames never piles up on this thread.
    m_sinceFrame.start();
    ++m_unpresented;
    const std::vector<Incident> incidents = m_state.absorb(frame);
    m_timeline->absorb(*frame);
    m_ledger->append(frame->events);
    m_notifier->report(incidents);
    if (!m_present.isActive())
        m_present.start(int(std::min<qint64>(m_presentCostMs, 1000)));
}

void MainWindow::build(Table &t)
{
    if (!m_state.frame())
        return;
    t.model->setNow(m_state.frame()->snapshot.at);
    t.model->apply(t.rows(m_state));
    t.stale = false;
}

void MainWindow::present()
{
    QElapsedTimer took;
    took.start();
    const std::int64_t now = m_state.frame()->snapshot.at;
    for (Table &t : m_tables) {
        // A hidden table with many rows is built when shown; its count comes from the frame.
        const std::size_t rows = t.count(m_state);
        if (m_stack->currentWidget() == t.page || rows <= kEagerRows)
            build(t);
        else
            t.stale = true;
        // Each table's row count next to its name, so "how many are waiting?" needs no click.
        const QString name = t.nav->data(Qt::UserRole).toString();
        const QString text = rows ? QStringLiteral("%1  %2").arg(name).arg(rows) : name;
        if (t.nav->text() != text)
            t.nav->setText(text);
    }
    m_ledger->setNow(now);
    m_overview->showState(m_state);
    m_waitGraph->showState(m_state);
    m_resourceTree->showState(m_state);
    m_timeline->showState(m_state);
    m_agentDetail->showState(m_state);
    updateStatus();
    m_frames += std::exchange(m_unpresented, 0);
    // The next present waits as long as this one took: drawing never takes more than half
    // of this thread, however large the frames.
    m_presentCostMs = took.elapsed();
}

void MainWindow::tick()
{
    if (!m_state.frame())
        return;
    const std::int64_t now = engineNow();
    for (const Table &t : m_tables)
        t.model->setNow(now);
    m_ledger->setNow(now);
    m_overview->sample(m_state);
}

void MainWindow::updateStatus()
{
    const ConsoleFrame *f = m_state.frame();
    const ServiceFacts &s = f->facts;
    m_address->setText(tr("Listening %1").arg(s.listenUrl));
    m_mode->setText((s.open ? tr("open (agents name themselves)") : tr("keyed")) +
                    (!s.cluster.role.empty() ? tr(" · state in etcd")
                     : s.store               ? QString()
                               : tr(" · in memory only: nothing survives a restart")) +
                    (s.storeHealth == "ok" ? QString()
                                           : tr(" · STORE UNAVAILABLE: %1; grants refused")
                                                 .arg(QString::fromStdString(s.storeProblem))));
    m_mode->setStyleSheet(s.storeHealth == "ok" ? QString()
                                                : QStringLiteral("color: palette(bright-text); "
                                                                 "background: #b3261e;"));
    m_strict->setText(!s.workspace ? tr("no workspace")
                      : s.strict   ? tr("strict: writes need a lease")
                                   : tr("workspace: relaxed"));
    m_live->setText(leasehold::countOf(s.liveAgents, "live agent", "live agents"));
    m_latency->setText(
        tr("%1 requests/s · engine lag %2 ms%3")
            .arg(m_state.requestRate(), 0, 'f', 0)
            .arg(s.engineLoopLagMs)
            .arg(s.store && s.storeStats.droppedEvents
                     ? tr(" · %1 not stored")
                           .arg(leasehold::countOf(qint64(s.storeStats.droppedEvents),
                                                   "ledger event", "ledger events"))
                     : QString()));
    m_latency->setToolTip(tr("Engine lag: how late the engine thread ran its last scheduled "
                             "publication; it grows when the engine is saturated."));
    if (m_pauseAction && m_pauseAction->isChecked() != f->snapshot.paused) {
        const QSignalBlocker block(m_pauseAction);
        m_pauseAction->setChecked(f->snapshot.paused);
    }
    setWindowTitle(f->snapshot.paused ? tr("Leasehold — admissions paused")
                                      : QStringLiteral("Leasehold"));
    showCluster(s.cluster);
}

void MainWindow::showBanner(const QString &title, const QString &text)
{
    m_banner->setText(QStringLiteral("<b>%1</b> — %2 &nbsp; <a href=\"show\" "
                                     "style=\"color: white\">Show</a>")
                          .arg(title.toHtmlEscaped(), text.toHtmlEscaped()));
    m_banner->show();
    m_bannerTimer.start();
}

void MainWindow::showIncidentView(Incident::Kind kind)
{
    switch (kind) {
    case Incident::Kind::Deadlock:
        return showView(tr("Deadlocks"));
    case Incident::Kind::Expiry:
        return showView(tr("Trust"));
    case Incident::Kind::Suspension:
        return showView(tr("Agents"));
    case Incident::Kind::Store:
        return showView(tr("Overview"));
    case Incident::Kind::Overdue:
        return showView(tr("Health"));
    }
}

void MainWindow::buildAgentDetail()
{
    m_agentDetail = new AgentDetailPage(m_ledger, this);
    m_agentDock = new QDockWidget(tr("Agent"), this);
    m_agentDock->setObjectName(QStringLiteral("agentDock"));
    m_agentDock->setWidget(m_agentDetail);
    m_agentDock->setAllowedAreas(Qt::RightDockWidgetArea | Qt::BottomDockWidgetArea);
    addDockWidget(Qt::RightDockWidgetArea, m_agentDock);
    m_agentDock->hide(); // until an agent is picked
    // Picked anywhere: a box in the wait graph, a row in any table that names an agent.
    connect(m_waitGraph, &WaitGraphPage::agentSelected, this, &MainWindow::showAgent);
    for (TablePage *p : pages()) {
        connect(p->view()->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
                [this, p] {
                    if (m_stack->currentWidget() != p)
                        return;
                    // Only a different agent opens the panel: rows moving under a frame keep
                    // the current row's agent, so a panel the operator closed stays closed.
                    const QStringList agents = selectedAgents();
                    if (!agents.isEmpty() && !agents.front().isEmpty() &&
                        agents.front() != m_agentDetail->agent())
                        showAgent(agents.front());
                });
    }
}

void MainWindow::showAgent(const QString &did)
{
    if (did != m_agentDetail->agent())
        m_agentDetail->setAgent(did);
    m_agentDock->show();
}

QString MainWindow::bannerText() const
{
    return m_banner->isHidden() ? QString() : m_banner->text();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/view"), m_nav->currentRow());
    event->accept();
}

#pragma once

#include "consolestate.h"
#include "tablerow.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QTimer>

#include <functional>

class EngineLink;
class IncidentNotifier;
class LedgerFilterProxy;
class QSortFilterProxyModel;
class LedgerModel;
class OverviewPage;
class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QStackedWidget;
class SnapshotTableModel;
class TablePage;
class AgentDetailPage;
class QDockWidget;
class ResourceTreePage;
class TimelinePage;
class WaitGraphPage;

// The operator console: an overview and one view each for holders, the queue, deadlocks,
// trust, pins, agents and the ledger; levers in a toolbar, context menus and shortcuts; a
// status bar with the service's address, mode and health. It shows what frames tell it and
// acts only through the EngineLink; it never blocks on the engine.
//
// Thread: the UI thread.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    // Asks the operator; returns true to go ahead. Tests replace it.
    using Confirm = std::function<bool(const QString &title, const QString &text)>;

    MainWindow(EngineLink *link, QWidget *parent = nullptr);
    ~MainWindow() override;

    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }
    // Selects view `name` ("Overview", "Holders", ... "Ledger").
    void showView(const QString &name);
    TablePage *page(const QString &name) const;
    SnapshotTableModel *model(const QString &name) const;
    LedgerModel *ledgerModel() const { return m_ledger; }
    LedgerFilterProxy *ledgerFilter() const { return m_ledgerFilter; }
    OverviewPage *overview() const { return m_overview; }
    WaitGraphPage *waitGraph() const { return m_waitGraph; }
    ResourceTreePage *resourceTree() const { return m_resourceTree; }
    TimelinePage *timeline() const { return m_timeline; }
    // Shows lease `leaseId` on `resource`: selected in Holders while it is live, else the
    // ledger of its resource.
    void showLease(const QString &leaseId, const QString &resource, bool live);
    AgentDetailPage *agentDetail() const { return m_agentDetail; }
    // Shows `did` in the agent detail beside the current view.
    void showAgent(const QString &did);
    IncidentNotifier *notifier() const { return m_notifier; }
    const ConsoleState &state() const { return m_state; }
    QString bannerText() const;
    // Cluster mode: what the cluster line says ("" when not in a cluster), and whether the
    // console is read-only (a standby's: its engine is not the one agents use).
    QString clusterText() const;
    bool readOnly() const { return m_readOnly; }
    std::uint64_t framesApplied() const { return m_frames; }

    // The levers, acting on the current view's selection.
    void releaseSelectedLeases();
    void releaseSelectedHolders();
    void releaseAll();
    void togglePaused();
    void suspendSelected(bool suspended);
    void connectAgent();
    void exportLedger();

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    QListWidgetItem *addNavItem(const QString &name);
    void buildViews();
    void buildActions();
    void buildStatusBar();
    void buildAgentDetail();
    void applyFrame(leasehold::ConsoleFramePtr frame);
    void tick();
    void updateStatus();
    void showBanner(const QString &title, const QString &text);
    // Cluster mode: the line naming role and leader, and the levers off on a standby
    // (mainwindow_cluster.cpp).
    void buildClusterLine();
    void showCluster(const leasehold::ClusterFacts &cluster);
    // The view where an incident of `kind` shows.
    void showIncidentView(Incident::Kind kind);
    // Holders, Queue and Ledger show `path`'s subtree (empty: what they showed before).
    void filterToResource(const QString &path);
    QStringList selectedAgents() const;
    using RowBuilder = std::vector<TableRow> (*)(const ConsoleState &);
    // How many rows a frame gives a table, without building them.
    using RowCount = std::size_t (*)(const ConsoleState &);
    TablePage *addTable(const QString &name, std::vector<TableColumn> columns, RowBuilder rows,
                        RowCount count, QSortFilterProxyModel *proxy = nullptr);
    // Draws the tables and pictures from the newest frame.
    void present();
    // Every table page, the ledger's last.
    QList<TablePage *> pages() const;
    std::int64_t engineNow() const;

    EngineLink *m_link;
    ConsoleState m_state;
    Confirm m_confirm;
    QListWidget *m_nav;
    QStackedWidget *m_stack;
    OverviewPage *m_overview;
    WaitGraphPage *m_waitGraph;
    ResourceTreePage *m_resourceTree;
    TimelinePage *m_timeline;
    AgentDetailPage *m_agentDetail = nullptr;
    QDockWidget *m_agentDock = nullptr;
    QString m_treeFilter; // the subtree the tree asked Holders, Queue and Ledger to show
    // One live table: its model, its page, how a frame becomes its rows, its navigation line.
    struct Table
    {
        SnapshotTableModel *model;
        TablePage *page;
        RowBuilder rows;
        QListWidgetItem *nav;
        RowCount count;     // its rows in a frame, without building them
        bool stale = false; // hidden and not built for the newest frame
    };
    // Builds `t`'s rows from the newest frame.
    void build(Table &t);
    // A hidden table is built every frame only up to this many rows (so a fleet of 1 000
    // agents costs no Trust and Agents tables while the operator looks at something else).
    static constexpr std::size_t kEagerRows = 500;
    std::vector<Table> m_tables;
    LedgerModel *m_ledger;
    TablePage *m_ledgerPage = nullptr;
    QLineEdit *m_ledgerResource = nullptr; // the Ledger's resource filter
    LedgerFilterProxy *m_ledgerFilter;
    IncidentNotifier *m_notifier;
    QLabel *m_banner;
    QLabel *m_clusterLine = nullptr;
    QList<QAction *> m_levers; // off while read-only
    bool m_readOnly = false;
    QTimer m_bannerTimer;
    Incident::Kind m_bannerKind = Incident::Kind::Deadlock;
    QTimer m_clock; // once a second: relative times and the chart
    QElapsedTimer m_sinceFrame;
    std::uint64_t m_frames = 0;      // frames drawn
    std::uint64_t m_unpresented = 0; // frames taken in since the last present
    QTimer m_present;
    qint64 m_presentCostMs = 0;
    QLabel *m_address, *m_mode, *m_strict, *m_live, *m_latency, *m_lever;
    class QAction *m_pauseAction = nullptr;
};

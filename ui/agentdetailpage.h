#pragma once

#include "agentdetail.h"

#include "statepage.h"

#include <QWidget>

class ConsoleState;
class LedgerFilterProxy;
class LedgerModel;
class QLabel;
class QPushButton;
class QTableView;
class QTreeWidget;
class TrustSparkline;

// One agent at a glance, beside whatever view picked it: how it is connected, its trust now and
// over the last changes (a sparkline), its keys, what it holds, what it waits for, its recent
// ledger, the release requests it made or that were made of it (with their age; once one's
// deadline passed unanswered, a one-click force-release of the lease it names), and the levers
// that apply to it (release everything it holds, suspend or unsuspend).
// Worked out only while visible.
//
// Thread: the UI thread.
class AgentDetailPage : public StatePage
{
    Q_OBJECT

public:
    AgentDetailPage(LedgerModel *ledger, QWidget *parent = nullptr);

    // Shows `did` (empty: nobody).
    void setAgent(const QString &did);
    QString agent() const { return m_detail.did; }
    // Its levers off (a standby's console).
    void setReadOnly(bool readOnly);

    const AgentDetail &detail() const { return m_detail; }
    QTreeWidget *leases() const { return m_leases; }
    QTreeWidget *waits() const { return m_waits; }
    QTreeWidget *requests() const { return m_requests; }
    QPushButton *forceRelease() const { return m_forceRelease; }
    QTableView *ledger() const { return m_ledger; }
    QString facts() const;
    const TrustSparkline *sparkline() const { return m_sparkline; }

signals:
    void releaseHolderRequested(const QString &did);
    // Force-release of the lease an overdue release request names (the release-lease lever).
    void releaseLeaseRequested(const QString &leaseId);
    void suspendRequested(const QString &did, bool suspended);

private:
    void refresh(const ConsoleState &state) override;
    void fill(); // the widgets from m_detail
    void fillRequests(std::int64_t now);
    // The selected release request when it is overdue (force-release applies), else null.
    const leasehold::ReleaseRequestInfo *selectedOverdue() const;
    void enableForce();

    AgentDetail m_detail;
    QLabel *m_title, *m_facts;
    TrustSparkline *m_sparkline;
    QTreeWidget *m_leases, *m_waits, *m_requests;
    LedgerFilterProxy *m_ledgerFilter;
    QTableView *m_ledger;
    QPushButton *m_release, *m_suspend, *m_forceRelease;
    bool m_readOnly = false;
};

// A line of an agent's trust over its recent changes; the last score is a dot.
class TrustSparkline : public QWidget
{
    Q_OBJECT

public:
    explicit TrustSparkline(QWidget *parent = nullptr);

    void setHistory(std::deque<std::pair<std::int64_t, double>> history, std::int64_t now);
    // The points drawn, in widget coordinates (for tests and the accessible description).
    QList<QPointF> points() const;
    QSize sizeHint() const override { return {240, 48}; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    std::deque<std::pair<std::int64_t, double>> m_history;
    std::int64_t m_now = 0;
};

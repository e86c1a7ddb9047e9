#include "agentdetailpage.h"

#include "consolestate.h"
#include "ledgerfilterproxy.h"
#include "ledgermodel.h"
#include "wording.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

using namespace leasehold;

namespace {

QTreeWidget *smallTree(const QString &name, const QStringList &headers, QWidget *parent)
{
    auto *tree = new QTreeWidget(parent);
    tree->setObjectName(name);
    tree->setRootIsDecorated(false);
    tree->setHeaderLabels(headers);
    tree->setUniformRowHeights(true);
    tree->header()->setStretchLastSection(true);
    return tree;
}

} // namespace

AgentDetailPage::AgentDetailPage(LedgerModel *ledger, QWidget *parent)
    : StatePage(parent)
    , m_title(new QLabel(this))
    , m_facts(new QLabel(this))
    , m_sparkline(new TrustSparkline(this))
    , m_leases(
          smallTree(QStringLiteral("agentLeases"), {tr("Holds"), tr("Token"), tr("Expires")}, this))
    , m_waits(smallTree(QStringLiteral("agentWaits"), {tr("Waits for"), tr("How"), tr("Held by")},
                        this))
    , m_requests(smallTree(
          QStringLiteral("agentRequests"),
          {tr("Release request"), tr("Asked"), tr("Urgency"), tr("Age"), tr("Deadline")}, this))
    , m_ledgerFilter(new LedgerFilterProxy(this))
    , m_ledger(new QTableView(this))
    , m_release(new QPushButton(tr("Release holder"), this))
    , m_suspend(new QPushButton(tr("Suspend"), this))
    , m_forceRelease(new QPushButton(tr("Force release (overdue)"), this))
{
    setObjectName(QStringLiteral("agentDetail"));
    setAccessibleName(tr("Agent detail"));
    m_title->setObjectName(QStringLiteral("agentTitle"));
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_facts->setObjectName(QStringLiteral("agentFacts"));
    m_facts->setWordWrap(true);
    m_leases->setAccessibleName(tr("Leases the agent holds"));
    m_waits->setAccessibleName(tr("What the agent waits for"));
    m_ledgerFilter->setSourceModel(ledger);
    m_ledger->setObjectName(QStringLiteral("agentLedger"));
    m_ledger->setAccessibleName(tr("The agent's recent ledger"));
    m_ledger->setModel(m_ledgerFilter);
    m_ledger->verticalHeader()->hide();
    m_ledger->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int c : {int(LedgerModel::Seq), int(LedgerModel::Agent), int(LedgerModel::Token),
                  int(LedgerModel::Reason)})
        m_ledger->hideColumn(c);
    m_ledger->horizontalHeader()->setStretchLastSection(true);
    m_release->setObjectName(QStringLiteral("agentRelease"));
    m_suspend->setObjectName(QStringLiteral("agentSuspend"));
    m_requests->setAccessibleName(tr("Release requests it made or that were made of it"));
    m_forceRelease->setObjectName(QStringLiteral("agentForceRelease"));
    m_forceRelease->setToolTip(
        tr("End the lease the selected overdue release request names, as Release lease does"));

    auto *column = new QVBoxLayout(this);
    column->addWidget(m_title);
    column->addWidget(m_facts);
    auto *trust = new QHBoxLayout;
    trust->addWidget(new QLabel(tr("Trust"), this));
    trust->addWidget(m_sparkline, 1);
    column->addLayout(trust);
    column->addWidget(m_leases, 1);
    column->addWidget(m_waits, 1);
    column->addWidget(m_requests, 1);
    column->addWidget(m_ledger, 2);
    auto *levers = new QHBoxLayout;
    levers->addWidget(m_release);
    levers->addWidget(m_suspend);
    levers->addWidget(m_forceRelease);
    levers->addStretch(1);
    column->addLayout(levers);
    connect(m_release, &QPushButton::clicked, this,
            [this] { emit releaseHolderRequested(m_detail.did); });
    connect(m_suspend, &QPushButton::clicked, this,
            [this] { emit suspendRequested(m_detail.did, !m_detail.suspended); });
    connect(m_requests, &QTreeWidget::itemSelectionChanged, this, [this] { enableForce(); });
    connect(m_forceRelease, &QPushButton::clicked, this, [this] {
        if (const ReleaseRequestInfo *r = selectedOverdue())
            emit releaseLeaseRequested(QString::fromStdString(r->leaseId));
    });
    setAgent({});
}

void AgentDetailPage::setReadOnly(bool readOnly)
{
    m_readOnly = readOnly;
    fill();
}

void AgentDetailPage::setAgent(const QString &did)
{
    m_detail = AgentDetail{};
    m_detail.did = did;
    m_ledgerFilter->setAgent(did);
    m_ledger->setVisible(!did.isEmpty()); // an empty filter would show everyone's ledger
    if (state())
        refreshNow();
    else
        fill();
}

QString AgentDetailPage::facts() const
{
    const AgentDetail &d = m_detail;
    if (d.did.isEmpty())
        return tr("Select an agent in any view to see it here.");
    if (!d.known)
        return tr("Not known to the service now.");
    QStringList parts;
    parts << tr("trust %1").arg(d.trust, 0, 'f', 2);
    if (d.suspended)
        parts << tr("SUSPENDED");
    parts << (d.via.isEmpty() ? tr("not live") : tr("live over %1").arg(d.via));
    if (d.liveSessions > 0)
        parts << countOf(d.liveSessions, "MCP session", "MCP sessions");
    if (d.lastSeen > 0 && state() && state()->frame())
        parts << tr("last seen %1 ago")
                     .arg(formatDuration(
                         std::max<std::int64_t>(0, state()->frame()->snapshot.at - d.lastSeen)));
    parts << countOf(d.keys, "key", "keys");
    parts << tr("%1 released, %2 expired").arg(d.releases).arg(d.expiries);
    return parts.join(QStringLiteral(" · "));
}

void AgentDetailPage::refresh(const ConsoleState &state)
{
    if (!m_detail.did.isEmpty())
        m_detail = AgentDetail::of(state, m_detail.did);
    fill();
}

void AgentDetailPage::fill()
{
    const bool someone = !m_detail.did.isEmpty() && m_detail.known;
    m_title->setText(m_detail.did.isEmpty() ? tr("No agent selected") : m_detail.did);
    m_facts->setText(facts());
    m_release->setEnabled(!m_readOnly && someone && !m_detail.leases.empty());
    m_suspend->setEnabled(!m_readOnly && someone);
    m_suspend->setText(m_detail.suspended ? tr("Unsuspend") : tr("Suspend"));
    const std::int64_t now = state() && state()->frame() ? state()->frame()->snapshot.at : 0;
    m_sparkline->setHistory(m_detail.trustHistory, now);

    m_leases->clear();
    for (const LeaseInfo &l : m_detail.leases) {
        auto *item = new QTreeWidgetItem(m_leases);
        item->setText(0, QString::fromStdString(l.resource));
        item->setText(1, QString::number(l.token));
        item->setText(
            2, tr("in %1").arg(formatDuration(std::max<std::int64_t>(0, l.expiresAt - now))));
    }
    m_waits->clear();
    for (const WaiterInfo &w : m_detail.waits) {
        auto *item = new QTreeWidgetItem(m_waits);
        item->setText(0, QString::fromStdString(w.resource));
        item->setText(1, w.parked ? tr("parked") : tr("wants"));
        item->setText(2, QString::fromStdString(w.holder));
    }
    fillRequests(now);
}

void AgentDetailPage::fillRequests(std::int64_t now)
{
    const QString selected = m_requests->currentItem()
                                 ? m_requests->currentItem()->data(0, Qt::UserRole).toString()
                                 : QString();
    m_requests->clear();
    const std::string self = m_detail.did.toStdString();
    for (const ReleaseRequestInfo &r : m_detail.requests) {
        auto *item = new QTreeWidgetItem(m_requests);
        const QString id = QString::fromStdString(r.requestId);
        item->setData(0, Qt::UserRole, id);
        item->setText(0, QString::fromStdString(r.resource));
        item->setText(1, r.holder == self
                             ? tr("of it, by %1").arg(QString::fromStdString(r.requester))
                             : tr("by it, of %1").arg(QString::fromStdString(r.holder)));
        item->setText(2, QString::fromLatin1(urgencyName(r.urgency)));
        item->setText(3, formatDuration(std::max<std::int64_t>(0, now - r.raisedAt)));
        item->setText(4, r.overdue          ? tr("OVERDUE")
                         : r.deadlineAt > 0 ? tr("in %1").arg(formatDuration(r.deadlineAt - now))
                                            : tr("none"));
        item->setToolTip(0, QString::fromStdString(r.reason));
        if (id == selected)
            m_requests->setCurrentItem(item);
    }
    m_requests->setVisible(!m_detail.requests.empty());
    enableForce();
}

const ReleaseRequestInfo *AgentDetailPage::selectedOverdue() const
{
    const QTreeWidgetItem *item = m_requests->currentItem();
    if (!item)
        return nullptr;
    const std::string id = item->data(0, Qt::UserRole).toString().toStdString();
    for (const ReleaseRequestInfo &r : m_detail.requests)
        if (r.requestId == id)
            return r.overdue ? &r : nullptr;
    return nullptr;
}

void AgentDetailPage::enableForce()
{
    m_forceRelease->setEnabled(!m_readOnly && selectedOverdue() != nullptr);
    m_forceRelease->setVisible(!m_detail.requests.empty());
}

TrustSparkline::TrustSparkline(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("trustSparkline"));
    setAccessibleName(tr("Trust over its recent changes"));
    setMinimumHeight(36);
}

void TrustSparkline::setHistory(std::deque<std::pair<std::int64_t, double>> history,
                                std::int64_t now)
{
    m_history = std::move(history);
    m_now = now;
    setAccessibleDescription(m_history.empty() ? tr("no score yet")
                                               : tr("%1 now; %2 at the first of %3 changes shown")
                                                     .arg(m_history.back().second, 0, 'f', 2)
                                                     .arg(m_history.front().second, 0, 'f', 2)
                                                     .arg(m_history.size()));
    setToolTip(accessibleDescription());
    update();
}

QList<QPointF> TrustSparkline::points() const
{
    QList<QPointF> out;
    if (m_history.empty())
        return out;
    const std::int64_t first = m_history.front().first;
    const std::int64_t last = std::max(m_now, m_history.back().first);
    double low = m_history.front().second, high = low;
    for (const auto &[at, score] : m_history) {
        low = std::min(low, score);
        high = std::max(high, score);
    }
    const double span = std::max(high - low, 0.1); // a flat line sits in the middle
    const double middle = (high + low) / 2;
    const QRectF area = QRectF(rect()).adjusted(4, 4, -4, -4);
    for (const auto &[at, score] : m_history) {
        const double x =
            last == first ? area.right()
                          : area.left() + area.width() * double(at - first) / double(last - first);
        const double y = area.center().y() - area.height() * (score - middle) / span;
        out << QPointF(x, y);
    }
    // The last score holds until now.
    if (last > m_history.back().first)
        out << QPointF(area.right(), out.back().y());
    return out;
}

void TrustSparkline::paintEvent(QPaintEvent *)
{
    const QList<QPointF> line = points();
    if (line.isEmpty())
        return;
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    QPainterPath path(line.front());
    for (const QPointF &pt : line)
        path.lineTo(pt);
    p.setPen(QPen(palette().color(QPalette::Highlight), 1.6));
    p.drawPath(path);
    p.setBrush(palette().color(QPalette::Highlight));
    p.drawEllipse(line.back(), 2.5, 2.5);
}

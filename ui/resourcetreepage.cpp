#include "resourcetreepage.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace {

const QColor kRed(205, 45, 40);

} // namespace

ResourceTreePage::ResourceTreePage(QWidget *parent)
    : StatePage(parent)
    , m_summary(new QLabel(this))
    , m_view(new QTreeWidget(this))
{
    setObjectName(QStringLiteral("resourceTreePage"));
    m_summary->setObjectName(QStringLiteral("resourceTreeSummary"));
    m_summary->setMargin(6);
    m_summary->setWordWrap(true);
    m_view->setObjectName(QStringLiteral("resourceTree"));
    m_view->setAccessibleName(tr("Resource tree"));
    m_view->setColumnCount(ColumnCount);
    m_view->setHeaderLabels({tr("Resource"), tr("Held"), tr("Parked"), tr("Wants"),
                             tr("Refused (1 min)"), tr("Holders")});
    m_view->setUniformRowHeights(true);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(Resource, Qt::AscendingOrder);
    m_view->header()->setSectionResizeMode(Resource, QHeaderView::Interactive);
    m_view->header()->resizeSection(Resource, 320);
    auto *column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(m_summary);
    column->addWidget(m_view, 1);
    m_summary->setText(tr("Nothing is held, waited for or refused."));
    // Opening a row makes its children's rows; closing it lets them go.
    connect(m_view, &QTreeWidget::itemExpanded, this, [this] { syncItems(); });
    connect(m_view, &QTreeWidget::itemCollapsed, this, [this] { syncItems(); });
    connect(m_view, &QTreeWidget::itemSelectionChanged, this, [this] {
        const QList<QTreeWidgetItem *> selected = m_view->selectedItems();
        emit resourceSelected(selected.isEmpty()
                                  ? QString()
                                  : selected.first()->data(Resource, Qt::UserRole).toString());
    });
}

QTreeWidgetItem *ResourceTreePage::item(const QString &path) const
{
    const auto it = m_items.find(path);
    return it == m_items.end() ? nullptr : it->second;
}

void ResourceTreePage::refresh(const ConsoleState &state)
{
    if (m_tree.update(state))
        syncItems();
}

void ResourceTreePage::syncItems()
{
    const QSignalBlocker quiet(m_view); // rows going away are not the operator deselecting
    m_view->setSortingEnabled(false);   // rows keep their place while they are filled
    // Rows exist only under open rows: a folder of 10 000 leases costs one row until opened.
    // Gone: a node that left, or one whose parent is gone or closed (parents come first).
    std::set<QString> gone;
    for (const auto &[path, item] : m_items) {
        const ResourceTree::Node *node = m_tree.node(path);
        const QTreeWidgetItem *parent = item->parent();
        if (!node || (parent && (gone.count(node->parent) || !parent->isExpanded())))
            gone.insert(path);
    }
    // Deepest first, so a parent is never deleted before its children.
    std::vector<QString> order(gone.begin(), gone.end());
    std::sort(order.begin(), order.end(),
              [](const QString &a, const QString &b) { return a.size() > b.size(); });
    for (const QString &path : order) {
        delete m_items[path];
        m_items.erase(path);
    }
    // Then the rest, parents before children (a parent's path sorts first); the nodes under a
    // closed row are passed over in one step, so a frame costs what is open, not what exists.
    const std::map<QString, ResourceTree::Node> &nodes = m_tree.nodes();
    int contended = 0;
    for (const auto &[path, node] : nodes)
        contended += node.parent.isEmpty() ? node.contention() : 0;
    for (auto it = nodes.begin(); it != nodes.end();) {
        const auto &[path, node] = *it;
        QTreeWidgetItem *parent = nullptr;
        if (!node.parent.isEmpty())
            parent = m_items.at(node.parent); // the parent's row was made (and is open)
        QTreeWidgetItem *&item = m_items[path];
        if (!item) {
            item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_view);
            item->setData(Resource, Qt::UserRole, path);
            // Schemes and their first folders open, unless crowded; deeper folders start closed.
            item->setExpanded(ResourceTree::pathsOf(path).size() <= 2 &&
                              m_tree.childCount(path) <= kOpenChildren);
        }
        const auto below = m_tree.subtreeEnd(it);
        item->setChildIndicatorPolicy(std::next(it) != below
                                          ? QTreeWidgetItem::ShowIndicator
                                          : QTreeWidgetItem::DontShowIndicatorWhenChildless);
        fill(item, node);
        it = item->isExpanded() ? std::next(it) : below;
    }
    m_view->setSortingEnabled(true);
    m_summary->setText(m_tree.nodes().empty()
                           ? tr("Nothing is held, waited for or refused.")
                           : tr("%1 resources and folders; the darker a row, the more its "
                                "subtree is waited for, wanted or refused (%2 in all).")
                                 .arg(m_tree.nodes().size())
                                 .arg(contended));
}

void ResourceTreePage::fill(QTreeWidgetItem *item, const ResourceTree::Node &node) const
{
    QString label = node.label;
    if (node.pattern)
        label += tr("  (pattern)");
    item->setText(Resource, label);
    item->setToolTip(Resource, node.path);
    item->setData(Held, Qt::DisplayRole, node.held);
    item->setData(Parked, Qt::DisplayRole, node.parked);
    item->setData(Wants, Qt::DisplayRole, node.wants);
    item->setData(Refused, Qt::DisplayRole, node.refusals);
    QString holders = node.holders().join(QStringLiteral(", "));
    if (!node.requests.isEmpty())
        holders += tr("  · %n release request(s)%1", nullptr, int(node.requests.size()))
                       .arg(node.requestOverdue ? tr(", overdue") : QString());
    item->setText(Holders, holders);
    item->setToolTip(Holders, node.requests.join(QLatin1Char('\n')));
    QFont font = item->font(Resource);
    font.setItalic(node.pattern);
    item->setFont(Resource, font);
    // Shaded by contention against the most contended node: untouched rows keep the palette.
    const double share = double(node.contention()) / double(m_tree.maxContention());
    QBrush shade;
    if (node.contention() > 0) {
        QColor c = kRed;
        c.setAlphaF(float(0.12 + 0.5 * share));
        shade = QBrush(c);
    }
    for (int column = 0; column < ColumnCount; ++column)
        item->setBackground(column, shade);
}

void ResourceTreePage::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        for (const auto &[path, item] : m_items) {
            if (const ResourceTree::Node *n = m_tree.node(path))
                fill(item, *n);
        }
    }
}

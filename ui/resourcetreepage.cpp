#include "resourcetreepage.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
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
    if (!m_tree.update(state))
        return;
    const QSignalBlocker quiet(m_view); // rows going away are not the operator deselecting
    m_view->setSortingEnabled(false);   // rows keep their place while they are filled
    // Gone first, deepest first, so a parent is never deleted before its children.
    std::vector<QString> gone;
    for (const auto &[path, item] : m_items) {
        if (!m_tree.node(path))
            gone.push_back(path);
    }
    std::sort(gone.begin(), gone.end(),
              [](const QString &a, const QString &b) { return a.size() > b.size(); });
    for (const QString &path : gone) {
        delete m_items[path];
        m_items.erase(path);
    }
    // Then the rest, parents before children (a parent's path sorts first).
    int contended = 0;
    for (const auto &[path, node] : m_tree.nodes()) {
        QTreeWidgetItem *&item = m_items[path];
        if (!item) {
            QTreeWidgetItem *parent = node.parent.isEmpty() ? nullptr : m_items[node.parent];
            item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_view);
            item->setData(Resource, Qt::UserRole, path);
            // Schemes and their first folders open; deeper folders start collapsed.
            item->setExpanded(ResourceTree::pathsOf(path).size() <= 2);
        }
        fill(item, node);
        contended += node.parent.isEmpty() ? node.contention() : 0;
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
    item->setText(Holders, node.holders.join(QStringLiteral(", ")));
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

#include "tablepage.h"

#include "snapshottablemodel.h"
#include "wording.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

TablePage::TablePage(const QString &name, QAbstractItemModel *model, QSortFilterProxyModel *proxy,
                     QWidget *parent, Filters filters)
    : QWidget(parent)
    , m_name(name)
    , m_model(model)
    , m_proxy(proxy ? proxy : new QSortFilterProxyModel(this))
    , m_view(new QTableView(this))
    , m_filter(new QLineEdit(this))
    , m_count(new QLabel(this))
    , m_bar(new QHBoxLayout)
{
    setObjectName(name.toLower() + QStringLiteral("Page"));
    m_proxy->setSortRole(SnapshotTableModel::RawRole);
    if (filters == TextFilter) {
        m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
        m_proxy->setFilterKeyColumn(-1);
        connect(m_filter, &QLineEdit::textChanged, m_proxy,
                &QSortFilterProxyModel::setFilterFixedString);
    } else {
        m_filter->hide();
    }
    m_proxy->setParent(this);
    m_proxy->setSourceModel(model);

    m_filter->setPlaceholderText(tr("Filter %1…").arg(name.toLower()));
    m_filter->setClearButtonEnabled(true);
    m_filter->setObjectName(QStringLiteral("filter"));

    m_view->setObjectName(QStringLiteral("table"));
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(-1, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setDefaultSectionSize(140);
    m_view->horizontalHeader()->setHighlightSections(false);

    m_bar->addWidget(m_filter, 1);
    m_bar->addWidget(m_count);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(m_bar);
    layout->addWidget(m_view, 1);

    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &TablePage::updateCount);
    // Columns fit the first rows shown (within bounds); after that the operator's widths stay.
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, [this] {
        if (m_sized)
            return;
        m_sized = true;
        m_view->resizeColumnsToContents();
        QHeaderView *header = m_view->horizontalHeader();
        for (int c = 0; c < header->count(); ++c)
            header->resizeSection(c, qBound(70, header->sectionSize(c) + 16, 360));
    });
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &TablePage::updateCount);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &TablePage::updateCount);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &TablePage::updateCount);
    updateCount();
}

void TablePage::updateCount()
{
    const int shown = m_proxy->rowCount();
    const int all = m_model->rowCount();
    m_count->setText(shown == all ? leasehold::countOf(all, "row", "rows")
                                  : tr("%1 of %2").arg(shown).arg(all));
}

QStringList TablePage::selectedValues(int column) const
{
    QStringList values;
    QModelIndexList rows = m_view->selectionModel()->selectedRows(column);
    if (rows.isEmpty() && m_view->currentIndex().isValid())
        rows << m_view->currentIndex().siblingAtColumn(column);
    for (const QModelIndex &i : rows) {
        const QString v = i.data(SnapshotTableModel::RawRole).toString();
        if (!v.isEmpty() && !values.contains(v))
            values << v;
    }
    return values;
}

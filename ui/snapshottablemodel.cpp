#include "snapshottablemodel.h"

#include "wording.h"

#include <QColor>
#include <QDateTime>

#include <cmath>

using leasehold::formatDuration;

SnapshotTableModel::SnapshotTableModel(std::vector<TableColumn> columns, QObject *parent)
    : QAbstractTableModel(parent)
    , m_columns(std::move(columns))
{}

void SnapshotTableModel::apply(std::vector<TableRow> rows)
{
    QHash<QString, int> incoming;
    incoming.reserve(qsizetype(rows.size()));
    for (int i = 0; i < int(rows.size()); ++i)
        incoming.insert(rows[std::size_t(i)].key, i);

    // Removals, bottom up in contiguous ranges, so indices above stay valid.
    const std::size_t before = m_rows.size();
    for (int last = int(m_rows.size()) - 1; last >= 0;) {
        if (incoming.contains(m_rows[std::size_t(last)].key)) {
            --last;
            continue;
        }
        int first = last;
        while (first > 0 && !incoming.contains(m_rows[std::size_t(first - 1)].key))
            --first;
        beginRemoveRows({}, first, last);
        m_rows.erase(m_rows.begin() + first, m_rows.begin() + last + 1);
        endRemoveRows();
        last = first - 1;
    }
    if (m_rows.size() != before)
        reindex(); // rows moved up; otherwise every row kept its place

    // Changes in place, one dataChanged per contiguous range.
    const int lastColumn = int(m_columns.size()) - 1;
    int rangeStart = -1;
    auto flush = [&](int end) {
        if (rangeStart >= 0)
            emit dataChanged(index(rangeStart, 0), index(end, lastColumn));
        rangeStart = -1;
    };
    for (int i = 0; i < int(m_rows.size()); ++i) {
        TableRow &shown = m_rows[std::size_t(i)];
        TableRow &fresh = rows[std::size_t(incoming.value(shown.key))];
        if (shown == fresh) {
            flush(i - 1);
            continue;
        }
        shown = std::move(fresh);
        fresh.key = shown.key; // still needed below to recognise it as known
        if (rangeStart < 0)
            rangeStart = i;
    }
    flush(int(m_rows.size()) - 1);

    // New rows at the end, in the order given.
    std::vector<TableRow> added;
    for (TableRow &row : rows) {
        if (!m_index.contains(row.key))
            added.push_back(std::move(row));
    }
    if (!added.empty()) {
        const int first = int(m_rows.size());
        beginInsertRows({}, first, first + int(added.size()) - 1);
        for (TableRow &row : added) {
            m_index.insert(row.key, int(m_rows.size()));
            m_rows.push_back(std::move(row));
        }
        endInsertRows();
    }
}

void SnapshotTableModel::reindex()
{
    m_index.clear();
    m_index.reserve(qsizetype(m_rows.size()));
    for (int i = 0; i < int(m_rows.size()); ++i)
        m_index.insert(m_rows[std::size_t(i)].key, i);
}

void SnapshotTableModel::setNow(std::int64_t nowMs)
{
    m_now = nowMs;
    if (m_rows.empty())
        return;
    // Only the relative-time columns change with the clock.
    for (int c = 0; c < int(m_columns.size()); ++c) {
        const ColumnKind kind = m_columns[std::size_t(c)].kind;
        if (kind == ColumnKind::Since || kind == ColumnKind::Until)
            emit dataChanged(index(0, c), index(int(m_rows.size()) - 1, c), {Qt::DisplayRole});
    }
}

const TableRow *SnapshotTableModel::rowByKey(const QString &key) const
{
    const auto it = m_index.constFind(key);
    return it == m_index.cend() ? nullptr : &m_rows[std::size_t(*it)];
}

int SnapshotTableModel::agentColumn() const
{
    for (int c = 0; c < int(m_columns.size()); ++c) {
        if (m_columns[std::size_t(c)].kind == ColumnKind::Agent)
            return c;
    }
    return -1;
}

int SnapshotTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SnapshotTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_columns.size());
}

QVariant SnapshotTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const TableRow &row = m_rows[std::size_t(index.row())];
    const TableColumn &column = m_columns[std::size_t(index.column())];
    const QVariant &value = row.values[std::size_t(index.column())];
    switch (role) {
    case Qt::DisplayRole:
        return display(column, value);
    case Qt::ToolTipRole:
        if (column.kind == ColumnKind::Since || column.kind == ColumnKind::Until)
            return value.toLongLong() > 0
                       ? QVariant(QDateTime::fromMSecsSinceEpoch(value.toLongLong())
                                      .toString(Qt::ISODateWithMs))
                       : QVariant();
        return display(column, value);
    case RawRole:
        return value;
    case KeyRole:
        return row.key;
    case MarkRole:
        return int(row.mark);
    case Qt::TextAlignmentRole:
        return column.kind == ColumnKind::Text || column.kind == ColumnKind::Agent ||
                       column.kind == ColumnKind::Flag
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::BackgroundRole:
        return row.mark == RowMark::None ? QVariant() : QVariant(markColor(row.mark));
    default:
        return {};
    }
}

QVariant SnapshotTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= int(m_columns.size()))
        return {};
    if (role == Qt::DisplayRole)
        return m_columns[std::size_t(section)].title;
    if (role == Qt::ToolTipRole)
        return m_columns[std::size_t(section)].toolTip;
    return {};
}

QString SnapshotTableModel::display(const TableColumn &column, const QVariant &value) const
{
    switch (column.kind) {
    case ColumnKind::Text:
    case ColumnKind::Agent:
    case ColumnKind::Number:
        return value.toString();
    case ColumnKind::Score:
        return QString::number(value.toDouble(), 'f', 1);
    case ColumnKind::Flag:
        return value.toBool() ? tr("yes") : QString();
    case ColumnKind::Duration:
        return formatDuration(value.toLongLong());
    case ColumnKind::Since:
        return value.toLongLong() > 0 ? tr("%1 ago").arg(formatDuration(
                                            std::max<std::int64_t>(0, m_now - value.toLongLong())))
                                      : QString();
    case ColumnKind::Until: {
        if (value.toLongLong() <= 0)
            return {};
        const std::int64_t left = value.toLongLong() - m_now;
        return left >= 0 ? tr("in %1").arg(formatDuration(left)) : tr("due");
    }
    }
    return value.toString();
}

QColor SnapshotTableModel::markColor(RowMark mark)
{
    // Translucent, so they read on light and dark palettes alike.
    return mark == RowMark::Incident ? QColor(220, 60, 60, 70) : QColor(230, 170, 30, 60);
}

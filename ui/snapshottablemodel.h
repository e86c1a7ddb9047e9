#pragma once

#include "tablerow.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QHash>

#include <cstdint>
#include <vector>

// A table over successive snapshots. Each apply() is diffed against what is shown by row key:
// rows that went away are removed (in contiguous ranges), rows whose values changed get one
// dataChanged per contiguous range, new rows are inserted at the end; rows never move, so
// selection and scroll position survive every update (sorting is the proxy's job). Time
// columns are shown relative to now(), and setNow() refreshes only them.
//
// Roles: DisplayRole is formatted text; RawRole the raw value (numbers sort as numbers);
// KeyRole the row key; Background/Foreground follow the row mark.
//
// Thread: the UI thread.
class SnapshotTableModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Role { RawRole = Qt::UserRole + 1, KeyRole, MarkRole };

    explicit SnapshotTableModel(std::vector<TableColumn> columns, QObject *parent = nullptr);

    // Shows `rows` (unique keys), applying the smallest set of changes.
    void apply(std::vector<TableRow> rows);
    // The engine time relative times are shown against.
    void setNow(std::int64_t nowMs);
    std::int64_t now() const { return m_now; }

    const TableRow *rowByKey(const QString &key) const;
    // The column naming the agent a row is about (ColumnKind::Agent), or -1.
    int agentColumn() const;
    const std::vector<TableRow> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The tint of a marked row (any table, the ledger's included).
    static QColor markColor(RowMark mark);
    // "12 s ago", "3 min", "1 h 4 min": for durations in milliseconds.

private:
    QString display(const TableColumn &column, const QVariant &value) const;
    void reindex();

    std::vector<TableColumn> m_columns;
    std::vector<TableRow> m_rows;
    QHash<QString, int> m_index; // key -> row
    std::int64_t m_now = 0;
};

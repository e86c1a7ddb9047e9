#pragma once

#include "ledgerevent.h"

#include <QAbstractTableModel>

#include <deque>

// The recent ledger, newest first: each frame's events are inserted at the top in one range and
// the oldest beyond `capacity` removed from the bottom in one range. Older events stay in the
// store (export, GET /ledger). Roles as SnapshotTableModel's (RawRole, KeyRole = seq).
//
// Thread: the UI thread.
class LedgerModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { Seq, Time, Kind, Agent, Resource, Token, Reason, Detail, ColumnCount };

    explicit LedgerModel(std::size_t capacity = 10'000, QObject *parent = nullptr);

    // Requires: `events` oldest first, each newer than every event shown.
    void append(const std::vector<leasehold::LedgerEvent> &events);
    void setNow(std::int64_t nowMs);
    std::size_t capacity() const { return m_capacity; }
    const leasehold::LedgerEvent &event(int row) const { return m_events[std::size_t(row)]; }

    // "granted", "admin.release_all", "workspace.mutation": the kind without its common prefix.
    static QString shortKind(leasehold::EventKind kind);
    static bool isIncident(const leasehold::LedgerEvent &event);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::deque<leasehold::LedgerEvent> m_events; // newest first
    std::size_t m_capacity;
    std::int64_t m_now = 0;
};

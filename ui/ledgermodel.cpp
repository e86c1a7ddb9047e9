#include "ledgermodel.h"

#include "consolestate.h"
#include "snapshottablemodel.h"
#include "wording.h"

#include <QColor>
#include <QDateTime>

using namespace leasehold;

LedgerModel::LedgerModel(std::size_t capacity, QObject *parent)
    : QAbstractTableModel(parent)
    , m_capacity(std::max<std::size_t>(1, capacity))
{}

void LedgerModel::append(const std::vector<LedgerEvent> &events)
{
    if (events.empty())
        return;
    // Only the newest `capacity` of this batch can be shown.
    const std::size_t take = std::min(events.size(), m_capacity);
    const std::size_t keep = std::min(m_events.size(), m_capacity - take);
    if (keep < m_events.size()) {
        beginRemoveRows({}, int(keep), int(m_events.size()) - 1);
        m_events.erase(m_events.begin() + std::ptrdiff_t(keep), m_events.end());
        endRemoveRows();
    }
    beginInsertRows({}, 0, int(take) - 1);
    for (auto it = events.end() - std::ptrdiff_t(take); it != events.end(); ++it)
        m_events.push_front(*it);
    endInsertRows();
}

void LedgerModel::setNow(std::int64_t nowMs)
{
    m_now = nowMs;
    if (!m_events.empty())
        emit dataChanged(index(0, Time), index(int(m_events.size()) - 1, Time), {Qt::DisplayRole});
}

QString LedgerModel::shortKind(EventKind kind)
{
    QString name = QString::fromLatin1(eventKindName(kind));
    name.remove(QStringLiteral("coordination.lease."));
    name.remove(QStringLiteral("coordination.")); // release_request.raised, ...
    return name;
}

bool LedgerModel::isIncident(const LedgerEvent &e)
{
    return incidentKind(e).has_value();
}

int LedgerModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_events.size());
}

int LedgerModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LedgerModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LedgerEvent &e = m_events[std::size_t(index.row())];
    if (role == SnapshotTableModel::KeyRole)
        return QVariant::fromValue(qulonglong(e.seq));
    if (role == Qt::BackgroundRole)
        return isIncident(e) ? QVariant(SnapshotTableModel::markColor(RowMark::Incident))
                             : QVariant();
    if (role == Qt::TextAlignmentRole)
        return index.column() == Seq || index.column() == Token || index.column() == Time
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    const bool raw = role == SnapshotTableModel::RawRole;
    if (!raw && role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (Column(index.column())) {
    case Seq:
        return QVariant::fromValue(qulonglong(e.seq));
    case Time:
        if (raw)
            return qint64(e.at);
        if (role == Qt::ToolTipRole)
            return QDateTime::fromMSecsSinceEpoch(e.at).toString(Qt::ISODateWithMs);
        return tr("%1 ago").arg(formatDuration(std::max<std::int64_t>(0, m_now - e.at)));
    case Kind:
        return raw ? QString::fromLatin1(eventKindName(e.kind)) : shortKind(e.kind);
    case Agent:
        return QString::fromStdString(e.actorDid);
    case Resource:
        return QString::fromStdString(e.resource);
    case Token:
        return e.token ? QVariant::fromValue(qulonglong(e.token)) : QVariant();
    case Reason:
        return QString::fromStdString(e.reason);
    case Detail:
        return eventSummary(e);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant LedgerModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char *const titles[] = {"Seq",      "Time",  "Kind",   "Agent",
                                         "Resource", "Token", "Reason", "Detail"};
    return section >= 0 && section < ColumnCount ? tr(titles[section]) : QVariant();
}

#include "filtercache.h"

#include <QByteArray>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QVariant>

namespace leasehold::ledgerparts {

bool FilterCache::refresh(const QSqlDatabase &db, std::uint64_t oldest)
{
    m_filters.erase(m_filters.begin(), m_filters.lower_bound(oldest));
    QSqlQuery q(db);
    q.setForwardOnly(true);
    q.prepare(QStringLiteral("SELECT part, probes, bits FROM ledger_filters WHERE part >= ?"));
    q.addBindValue(qlonglong(std::max(oldest, m_readThrough)));
    if (!q.exec())
        return false;
    while (q.next()) {
        const std::uint64_t part = q.value(0).toULongLong();
        const QByteArray bits = q.value(2).toByteArray();
        m_filters.insert_or_assign(
            part,
            ActorFilter::fromBytes(std::string_view(bits.constData(), std::size_t(bits.size())),
                                   q.value(1).toInt()));
        m_readThrough = std::max(m_readThrough, part + 1);
    }
    return true;
}

bool FilterCache::mayHold(std::uint64_t part, std::string_view actor) const
{
    const auto it = m_filters.find(part);
    return it == m_filters.end() || it->second.mayHold(actor);
}

} // namespace leasehold::ledgerparts

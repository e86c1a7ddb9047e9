#include "filtercache.h"

#include "ledgerparts.h"

#include <QByteArray>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QVariant>

namespace leasehold::ledgerparts {

bool FilterCache::refresh(const QSqlDatabase &db, std::uint64_t oldest)
{
    m_filters.erase(m_filters.begin(), m_filters.lower_bound(oldest));
    // The live file's filters (written by earlier releases) and the archive's.
    const bool archive = attached(db, kArchive);
    QSqlQuery q(db);
    q.setForwardOnly(true);
    q.prepare(archive ? QStringLiteral("SELECT part, probes, bits FROM main.ledger_filters WHERE "
                                       "part >= ? UNION ALL SELECT part, probes, bits FROM "
                                       "%1.ledger_filters WHERE part >= ? ORDER BY part")
                            .arg(QLatin1String(kArchive))
                      : QStringLiteral("SELECT part, probes, bits FROM ledger_filters WHERE "
                                       "part >= ?"));
    const qlonglong from = qlonglong(std::max(oldest, m_readThrough));
    q.addBindValue(from);
    if (archive)
        q.addBindValue(from);
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

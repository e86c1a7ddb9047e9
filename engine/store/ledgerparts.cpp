#include "ledgerparts.h"

#include "actorfilter.h"
#include "filtercache.h"
#include "ledgerfacts.h"

#include <QSet>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace leasehold::ledgerparts {

namespace {

constexpr const char *kColumns =
    "seq, at, kind, actor, resource, lease_id, token, ttl_ms, reason, facts";

// The read indexes a sealed partition gets, by suffix and columns.
constexpr std::pair<const char *, const char *> kIndexes[] = {
    {"actor", "actor, seq"}, {"kind", "kind, seq"}, {"resource", "resource, seq"}};

LedgerEvent eventFrom(const QSqlQuery &q)
{
    LedgerEvent e;
    e.seq = q.value(0).toULongLong();
    e.at = q.value(1).toLongLong();
    e.kind = eventKindFromName(q.value(2).toString().toStdString()).value_or(EventKind::Granted);
    e.actorDid = q.value(3).toString().toStdString();
    e.resource = q.value(4).toString().toStdString();
    e.leaseId = q.value(5).toString().toStdString();
    e.token = q.value(6).toULongLong();
    e.ttlMs = q.value(7).toLongLong();
    e.reason = q.value(8).toString().toStdString();
    const QByteArray facts = q.value(9).toByteArray();
    e.facts = decodeFacts(std::string_view(facts.constData(), std::size_t(facts.size())))
                  .value_or(EventFacts{});
    return e;
}

} // namespace

QString table(std::uint64_t part)
{
    return QStringLiteral("ledger_p%1").arg(part, 8, 10, QLatin1Char('0'));
}

std::uint64_t partOf(std::uint64_t seq, std::uint64_t rows)
{
    return seq == 0 ? 0 : (seq - 1) / rows;
}

std::vector<std::uint64_t> list(const QSqlDatabase &db)
{
    std::vector<std::uint64_t> parts;
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table' AND name "
                               "GLOB 'ledger_p[0-9]*'")))
        return parts;
    while (q.next()) {
        bool ok = false;
        const std::uint64_t part = q.value(0).toString().mid(8).toULongLong(&ok);
        if (ok)
            parts.push_back(part);
    }
    std::sort(parts.begin(), parts.end());
    return parts;
}

bool create(QSqlDatabase &db, std::uint64_t part)
{
    return QSqlQuery(db).exec(
        QStringLiteral("CREATE TABLE IF NOT EXISTS %1 (seq INTEGER PRIMARY KEY, at INTEGER NOT "
                       "NULL, kind TEXT NOT NULL, actor TEXT NOT NULL, resource TEXT NOT NULL, "
                       "lease_id TEXT NOT NULL, token INTEGER NOT NULL, ttl_ms INTEGER NOT NULL, "
                       "reason TEXT NOT NULL, facts BLOB NOT NULL)")
            .arg(table(part)));
}

namespace {

// The newest event among `parts` (as list() gives them).
std::pair<std::uint64_t, TimeMs> newestIn(const QSqlDatabase &db,
                                          const std::vector<std::uint64_t> &parts)
{
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        QSqlQuery q(db);
        if (q.exec(QStringLiteral("SELECT seq, at FROM %1 ORDER BY seq DESC LIMIT 1")
                       .arg(table(*it))) &&
            q.next())
            return {q.value(0).toULongLong(), q.value(1).toLongLong()};
    }
    return {0, 0};
}

// The newest partition with an agent filter (they are built in order), or nothing.
std::optional<std::uint64_t> filteredThrough(const QSqlDatabase &db)
{
    QSqlQuery q(db);
    if (q.exec(QStringLiteral("SELECT MAX(part) FROM ledger_filters")) && q.next() &&
        !q.value(0).isNull())
        return q.value(0).toULongLong();
    return std::nullopt;
}

} // namespace

std::pair<std::uint64_t, TimeMs> newest(const QSqlDatabase &db)
{
    return newestIn(db, list(db));
}

std::uint64_t firstNeedingUpkeep(const QSqlDatabase &db)
{
    // One read of the catalogue, and the summary's newest partition (it is built in order).
    QSqlQuery q(db);
    q.setForwardOnly(true);
    if (!q.exec(QStringLiteral("SELECT type, name FROM sqlite_master WHERE name GLOB "
                               "'ledger_p[0-9]*'")))
        return 0;
    QSet<QString> names;
    std::vector<std::uint64_t> parts;
    while (q.next()) {
        const QString name = q.value(1).toString();
        names.insert(name);
        if (q.value(0).toString() == QLatin1String("table"))
            parts.push_back(name.mid(8).toULongLong());
    }
    q.finish();
    std::sort(parts.begin(), parts.end());
    const std::optional<std::uint64_t> filtered = filteredThrough(db);
    for (const std::uint64_t part : parts) {
        for (const auto &[suffix, columns] : kIndexes) {
            if (!names.contains(table(part) + QLatin1Char('_') + QLatin1String(suffix)))
                return part;
        }
        if (!filtered || part > *filtered)
            return part;
    }
    return parts.empty() ? 0 : parts.back();
}

bool indexOne(QSqlDatabase &db, std::uint64_t &from, std::uint64_t current)
{
    // Partition by partition from `from`, asking the catalogue about that table alone: the
    // cost of a step must not grow with the number of partitions.
    QSqlQuery objects(db);
    objects.setForwardOnly(true);
    objects.prepare(QStringLiteral("SELECT type, name FROM sqlite_master WHERE tbl_name = ?"));
    for (; from < current; ++from) {
        objects.addBindValue(table(from));
        if (!objects.exec())
            return false;
        bool exists = false;
        QSet<QString> indexes;
        while (objects.next()) {
            exists |= objects.value(0).toString() == QLatin1String("table");
            indexes.insert(objects.value(1).toString());
        }
        objects.finish();
        if (!exists)
            continue; // dropped by retention, or never written
        for (const auto &[suffix, columns] : kIndexes) {
            const QString name = table(from) + QLatin1Char('_') + QLatin1String(suffix);
            if (!indexes.contains(name))
                return QSqlQuery(db).exec(QStringLiteral("CREATE INDEX IF NOT EXISTS %1 ON %2 (%3)")
                                              .arg(name, table(from), QLatin1String(columns)));
        }
        // Last, the partition's agents go into its filter: one row, read from the agent index
        // just built.
        QSqlQuery summarized(db);
        summarized.prepare(QStringLiteral("SELECT 1 FROM ledger_filters WHERE part = ?"));
        summarized.addBindValue(qlonglong(from));
        if (summarized.exec() && summarized.next())
            continue;
        summarized.finish();
        QSqlQuery agents(db);
        agents.setForwardOnly(true);
        if (!agents.exec(QStringLiteral("SELECT DISTINCT actor FROM %1").arg(table(from))))
            return false;
        std::vector<std::string> names;
        while (agents.next())
            names.push_back(agents.value(0).toString().toStdString());
        agents.finish();
        ActorFilter filter(names.size());
        for (const std::string &name : names)
            filter.add(name);
        QSqlQuery insert(db);
        insert.prepare(QStringLiteral("INSERT OR REPLACE INTO ledger_filters VALUES (?, ?, ?)"));
        insert.addBindValue(qlonglong(from));
        insert.addBindValue(ActorFilter::kProbes);
        insert.addBindValue(QByteArray::fromStdString(filter.bytes()));
        return insert.exec();
    }
    return false;
}

int retain(QSqlDatabase &db, const LedgerBounds &bounds)
{
    const std::vector<std::uint64_t> parts = list(db);
    const auto [newestSeq, newestAt] = newestIn(db, parts);
    if (newestSeq == 0)
        return 0;
    const std::uint64_t part = partOf(newestSeq, bounds.rows);
    int dropped = 0;
    for (const std::uint64_t p : parts) {
        if (p >= part)
            break;
        // Its last event (the partition is full: it is sealed) decides.
        QSqlQuery q(db);
        if (!q.exec(
                QStringLiteral("SELECT seq, at FROM %1 ORDER BY seq DESC LIMIT 1").arg(table(p))))
            continue;
        const bool empty = !q.next();
        const std::uint64_t lastSeq = empty ? 0 : q.value(0).toULongLong();
        const TimeMs lastAt = empty ? 0 : q.value(1).toLongLong();
        q.finish();
        const bool beyond = empty || newestSeq - lastSeq >= bounds.retainRows ||
                            newestAt - lastAt > bounds.retainMs;
        if (!beyond)
            break; // older partitions first: the rest are newer
        if (QSqlQuery(db).exec(QStringLiteral("DROP TABLE %1").arg(table(p)))) {
            QSqlQuery(db).exec(QStringLiteral("DELETE FROM ledger_filters WHERE part = %1").arg(p));
            ++dropped;
        }
    }
    return dropped;
}

QString condition(const LedgerFilter &filter)
{
    // One index serves each read: the agent's if asked for, else the resource's, else the
    // kind's. The other filters are written with a unary + so SQLite checks them on the rows
    // found instead of choosing their index: left to guess without statistics it took the kind
    // index (four kinds share a partition) for an agent and a kind, and one agent with no event
    // of that kind in 20 million took 2-5 s instead of milliseconds.
    const bool byActor = !filter.actor.empty();
    const bool byResource = !byActor && !filter.resource.empty();
    const bool byKind = !byActor && !byResource;
    // A column as the condition names it: bare where its index serves, else with a unary +.
    auto column = [](const char *name, bool indexed) {
        return (indexed ? QString() : QStringLiteral("+")) + QLatin1String(name);
    };
    // (For a resource, whose index is read as a range, the seq bound is kept off the rowid as
    // well, or SQLite walks the partition in seq order rather than sort the range's rows.)
    QString where = QStringLiteral("%1 > ? AND at >= ?").arg(column("seq", !byResource));
    if (byActor)
        where += QStringLiteral(" AND actor = ?");
    if (!filter.kind.empty())
        where += QStringLiteral(" AND %1 = ?").arg(column("kind", byKind));
    // The resource and what lies below it ('0' follows '/'): one range of the index, [r, r0),
    // narrowed to r itself and r/... (an OR of two ranges made SQLite scan the partition).
    if (!filter.resource.empty())
        where += QStringLiteral(" AND %1 >= ? AND %1 < ? AND (+resource = ? OR +resource > ?)")
                     .arg(column("resource", byResource));
    return where;
}

std::vector<LedgerEvent> query(const QSqlDatabase &db, std::uint64_t since, std::size_t limit,
                               const LedgerFilter &filter, const LedgerBounds &bounds,
                               FilterCache &filters)
{
    std::vector<LedgerEvent> out;
    std::vector<std::uint64_t> parts = list(db);
    const auto [newestSeq, newestAt] = newestIn(db, parts);
    if (newestSeq == 0 || limit == 0)
        return out;
    // The bounds, exactly: nothing older than retainRows events or retainMs before the newest.
    const std::uint64_t floor =
        std::max(since, newestSeq > bounds.retainRows ? newestSeq - bounds.retainRows : 0);
    const TimeMs oldestAt = std::max(newestAt - bounds.retainMs, filter.fromAt);
    const QString where = condition(filter);
    const QString actor = QString::fromStdString(filter.actor);
    const QString kind = QString::fromStdString(filter.kind);
    const QString resource = QString::fromStdString(filter.resource);
    if (!filter.actor.empty()) {
        // Each sealed partition's filter says whether the agent may be there; partitions
        // without one yet (the open one, and sealed ones still waiting for upkeep) are visited.
        filters.refresh(db, parts.empty() ? 0 : parts.front());
        std::erase_if(parts,
                      [&](std::uint64_t part) { return !filters.mayHold(part, filter.actor); });
    }
    bool reachedFrom = filter.fromAt <= newestAt - bounds.retainMs;
    for (const std::uint64_t part : parts) {
        if (part < partOf(floor + 1, bounds.rows))
            continue;
        // A partition whose newest event is older than `fromAt` is passed over with one read
        // of its last row (time grows with seq), not a scan for rows it cannot hold.
        if (!reachedFrom) {
            const auto [lastSeq, lastAt] = newestIn(db, {part});
            if (lastSeq != 0 && lastAt < filter.fromAt)
                continue;
            reachedFrom = true;
        }
        // Rows come in the partition's key order, which a damaged page can break (a key
        // rewritten out of order or out of the partition's range). Such a row is passed over,
        // never handed on: a reader pages by the last sequence it saw. The rows it took from a
        // LIMIT are made up with another read from the last good row.
        for (std::uint64_t cursor = out.empty() ? floor : out.back().seq; out.size() < limit;) {
            QSqlQuery q(db);
            q.setForwardOnly(true);
            if (!q.prepare(QStringLiteral("SELECT %1 FROM %2 WHERE %3 ORDER BY seq LIMIT ?")
                               .arg(QLatin1String(kColumns), table(part), where)))
                break; // dropped meanwhile by retention
            q.addBindValue(qlonglong(cursor));
            q.addBindValue(qlonglong(oldestAt));
            if (!filter.actor.empty())
                q.addBindValue(actor);
            if (!filter.kind.empty())
                q.addBindValue(kind);
            if (!filter.resource.empty()) {
                q.addBindValue(resource);
                q.addBindValue(resource + QLatin1Char('0'));
                q.addBindValue(resource);
                q.addBindValue(resource + QLatin1Char('/'));
            }
            const std::size_t wanted = limit - out.size();
            q.addBindValue(qlonglong(wanted));
            if (!q.exec())
                break;
            std::size_t read = 0;
            std::size_t taken = 0;
            for (; q.next(); ++read) {
                LedgerEvent e = eventFrom(q);
                if (e.seq <= cursor || partOf(e.seq, bounds.rows) != part)
                    continue;
                cursor = e.seq;
                out.push_back(std::move(e));
                ++taken;
            }
            if (read < wanted || taken == 0)
                break; // the partition is read to its end (or gives nothing more in order)
        }
        if (out.size() >= limit)
            break;
    }
    return out;
}

bool migrate(QSqlDatabase &db, std::uint64_t rows, std::string *error)
{
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT MIN(seq), MAX(seq) FROM ledger")) || !q.next()) {
        *error = "cannot read the ledger to move it into partitions: " +
                 q.lastError().text().toStdString();
        return false;
    }
    const std::uint64_t first = q.value(0).toULongLong();
    const std::uint64_t last = q.value(1).toULongLong();
    q.finish();
    if (last > 0) {
        for (std::uint64_t part = partOf(first, rows); part <= partOf(last, rows); ++part) {
            QSqlQuery move(db);
            if (!create(db, part) ||
                !move.exec(QStringLiteral("INSERT OR IGNORE INTO %1 SELECT %2 FROM ledger WHERE "
                                          "seq > %3 AND seq <= %4")
                               .arg(table(part), QLatin1String(kColumns))
                               .arg(part * rows)
                               .arg((part + 1) * rows))) {
                *error = "cannot move the ledger into partitions: " +
                         move.lastError().text().toStdString();
                return false;
            }
        }
    }
    if (!q.exec(QStringLiteral("DROP TABLE ledger"))) {
        *error = "cannot drop the old ledger table: " + q.lastError().text().toStdString();
        return false;
    }
    return true;
}

} // namespace leasehold::ledgerparts

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

std::vector<std::uint64_t> list(const QSqlDatabase &db, const char *schema)
{
    std::vector<std::uint64_t> parts;
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT name FROM %1.sqlite_master WHERE type = 'table' AND name "
                               "GLOB 'ledger_p[0-9]*'")
                    .arg(QLatin1String(schema))))
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

std::vector<Located> locate(const QSqlDatabase &db)
{
    // The live file's catalogue first: inside one read transaction that fixes its snapshot
    // before the archive's, so a partition dropped from it was already in the archive.
    const std::vector<std::uint64_t> live = list(db, "main");
    std::vector<std::uint64_t> archived;
    if (attached(db, kArchive))
        archived = list(db, kArchive);
    std::vector<Located> out;
    out.reserve(live.size() + archived.size());
    std::size_t a = 0;
    for (const std::uint64_t part : live) {
        for (; a < archived.size() && archived[a] < part; ++a)
            out.push_back({archived[a], true});
        if (a < archived.size() && archived[a] == part)
            continue; // in both until the writer drops it: the archive's copy is complete
        out.push_back({part, false});
    }
    for (; a < archived.size(); ++a)
        out.push_back({archived[a], true});
    return out;
}

QString Located::name() const
{
    return QLatin1String(archived ? kArchive : "main") + QLatin1Char('.') + table(part);
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

// The newest event among `tables` (oldest first).
std::pair<std::uint64_t, TimeMs> newestIn(const QSqlDatabase &db, const QStringList &tables)
{
    for (auto it = tables.rbegin(); it != tables.rend(); ++it) {
        QSqlQuery q(db);
        if (q.exec(QStringLiteral("SELECT seq, at FROM %1 ORDER BY seq DESC LIMIT 1").arg(*it)) &&
            q.next())
            return {q.value(0).toULongLong(), q.value(1).toLongLong()};
    }
    return {0, 0};
}

QStringList names(const std::vector<std::uint64_t> &parts, const char *schema)
{
    QStringList out;
    for (const std::uint64_t part : parts)
        out << QLatin1String(schema) + QLatin1Char('.') + table(part);
    return out;
}

} // namespace

std::pair<std::uint64_t, TimeMs> newest(const QSqlDatabase &db, const char *schema)
{
    return newestIn(db, names(list(db, schema), schema));
}

std::optional<std::vector<std::uint64_t>> unindexed(const QSqlDatabase &db, const char *schema)
{
    // One read of the catalogue: the tables, and each table's index names.
    QSqlQuery q(db);
    q.setForwardOnly(true);
    if (!q.exec(QStringLiteral("SELECT type, name FROM %1.sqlite_master WHERE name GLOB "
                               "'ledger_p[0-9]*'")
                    .arg(QLatin1String(schema))))
        return std::nullopt;
    QSet<QString> names;
    std::vector<std::uint64_t> parts;
    while (q.next()) {
        const QString name = q.value(1).toString();
        names.insert(name);
        if (q.value(0).toString() == QLatin1String("table"))
            parts.push_back(name.mid(8).toULongLong());
    }
    std::sort(parts.begin(), parts.end());
    std::erase_if(parts, [&](std::uint64_t part) {
        for (const auto &[suffix, columns] : kIndexes) {
            if (!names.contains(table(part) + QLatin1Char('_') + QLatin1String(suffix)))
                return false;
        }
        return true;
    });
    return parts;
}

bool summarize(QSqlDatabase &db, const QString &from, std::uint64_t part)
{
    QSqlQuery agents(db);
    agents.setForwardOnly(true);
    if (!agents.exec(QStringLiteral("SELECT DISTINCT actor FROM %1").arg(from)))
        return false;
    std::vector<std::string> found;
    while (agents.next())
        found.push_back(agents.value(0).toString().toStdString());
    agents.finish();
    ActorFilter filter(found.size());
    for (const std::string &name : found)
        filter.add(name);
    QSqlQuery insert(db);
    insert.prepare(QStringLiteral("INSERT OR REPLACE INTO main.ledger_filters VALUES (?, ?, ?)"));
    insert.addBindValue(qlonglong(part));
    insert.addBindValue(ActorFilter::kProbes);
    insert.addBindValue(QByteArray::fromStdString(filter.bytes()));
    return insert.exec();
}

bool archive(QSqlDatabase &db, const char *from, std::uint64_t part)
{
    const QString source = QLatin1String(from) + QLatin1Char('.') + table(part);
    const QString target = QStringLiteral("main.") + table(part);
    if (!create(db, part) || !QSqlQuery(db).exec(QStringLiteral("INSERT OR IGNORE INTO %1 SELECT "
                                                                "%2 FROM %3")
                                                     .arg(target, QLatin1String(kColumns), source)))
        return false;
    for (const auto &[suffix, columns] : kIndexes) {
        if (!QSqlQuery(db).exec(
                QStringLiteral("CREATE INDEX IF NOT EXISTS main.%1_%2 ON %1 (%3)")
                    .arg(table(part), QLatin1String(suffix), QLatin1String(columns))))
            return false;
    }
    return summarize(db, target, part); // read from the agent index just built
}

int retain(QSqlDatabase &db, const LedgerBounds &bounds, std::pair<std::uint64_t, TimeMs> newest)
{
    const std::vector<std::uint64_t> parts = list(db, "main");
    const auto [newestSeq, newestAt] = newest;
    if (newestSeq == 0)
        return 0;
    const std::uint64_t part = partOf(newestSeq, bounds.rows);
    int dropped = 0;
    for (const std::uint64_t p : parts) {
        if (p >= part)
            break;
        // Its last event (the partition is full: it is sealed) decides.
        QSqlQuery q(db);
        if (!q.exec(QStringLiteral("SELECT seq, at FROM main.%1 ORDER BY seq DESC LIMIT 1")
                        .arg(table(p))))
            continue;
        const bool empty = !q.next();
        const std::uint64_t lastSeq = empty ? 0 : q.value(0).toULongLong();
        const TimeMs lastAt = empty ? 0 : q.value(1).toLongLong();
        q.finish();
        const bool beyond = empty || newestSeq - lastSeq >= bounds.retainRows ||
                            newestAt - lastAt > bounds.retainMs;
        if (!beyond)
            break; // older partitions first: the rest are newer
        if (QSqlQuery(db).exec(QStringLiteral("DROP TABLE main.%1").arg(table(p)))) {
            QSqlQuery(db).exec(
                QStringLiteral("DELETE FROM main.ledger_filters WHERE part = %1").arg(p));
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
    // One read transaction: the partitions listed are the partitions read, in the live file
    // and in the archive, though the writer drops or archives one meanwhile.
    QSqlQuery(db).exec(QStringLiteral("BEGIN"));
    struct End
    {
        const QSqlDatabase &db;
        ~End()
        {
            // A reader left inside its transaction would pin that snapshot (and the WAL) for good.
            if (!QSqlQuery(db).exec(QStringLiteral("COMMIT")))
                QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
        }
    } end{db};
    std::vector<Located> parts = locate(db);
    QStringList tables;
    for (const Located &l : parts)
        tables << l.name();
    const auto [newestSeq, newestAt] = newestIn(db, tables);
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
        filters.refresh(db, parts.empty() ? 0 : parts.front().part);
        std::erase_if(parts,
                      [&](const Located &l) { return !filters.mayHold(l.part, filter.actor); });
    }
    bool reachedFrom = filter.fromAt <= newestAt - bounds.retainMs;
    for (const Located &located : parts) {
        const std::uint64_t part = located.part;
        if (part < partOf(floor + 1, bounds.rows))
            continue;
        // A partition whose newest event is older than `fromAt` is passed over with one read
        // of its last row (time grows with seq), not a scan for rows it cannot hold.
        if (!reachedFrom) {
            const auto [lastSeq, lastAt] = newestIn(db, {located.name()});
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
                               .arg(QLatin1String(kColumns), located.name(), where)))
                break; // unreadable: what came before stands
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

#pragma once

// The ledger as a run of partitions, built for append and retention.
//
// Table ledger_p<n> holds the events with seq in [n·rows + 1, (n + 1)·rows]. The newest
// partition has no index but its rowid (seq), so a commit appends to the last pages of one
// b-tree and touches nothing else. A partition the sequence has moved past is sealed: the
// archiver (ledgerarchive.h) copies it into the archive file with its read indexes (actor,
// kind, resource, each with seq) and then the writer drops it from the live file. Partitions
// indexed in the live file by earlier releases stay there until retention drops them.
// Retention drops whole partitions that lie entirely beyond the bounds, in each file; reads
// apply the bounds exactly, so a row past them is never shown even before its partition goes.
// Reads page across partitions of both files in seq order.
//
// A summary table, ledger_filters (part, probes, bits), holds each sealed partition's agents as a
// Bloom filter (actorfilter.h), so a query for one agent visits only the partitions it may
// appear in, however many there are: one row a partition, written once, dropped with it (the
// archive's table; the live file's holds those earlier releases wrote).
//
// Stateless helpers over a connection; the writer thread appends and drops, the archiver copies
// and indexes, the reader connections query with the archive attached as kArchive.

#include "clock.h"
#include "ledgerattach.h"
#include "ledgerevent.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

class QSqlDatabase;

namespace leasehold {

struct LedgerBounds
{
    std::uint64_t rows = 16'384; // events per partition
    std::uint64_t retainRows = 1'000'000;
    std::int64_t retainMs = std::int64_t(30) * 24 * 3600 * 1000;
};

namespace ledgerparts {

class FilterCache;

QString table(std::uint64_t part);
std::uint64_t partOf(std::uint64_t seq, std::uint64_t rows);
// The partitions in `schema` of the connection, oldest first.
std::vector<std::uint64_t> list(const QSqlDatabase &db, const char *schema = "main");
// A partition as a reader finds it: in the live file (main) or, once archived, the archive.
struct Located
{
    std::uint64_t part;
    bool archived;
    QString name() const; // schema-qualified table name
};
// Every partition a reader connection sees, oldest first; one in both files is the archive's.
// Read inside a transaction, it lists the live file first (see query()).
std::vector<Located> locate(const QSqlDatabase &db);
// Creates partition `part` in the connection's main schema when it is missing (inside the
// caller's transaction, if any).
bool create(QSqlDatabase &db, std::uint64_t part);
// The newest event's seq and time in `schema` (0, 0 when it has no event).
std::pair<std::uint64_t, TimeMs> newest(const QSqlDatabase &db, const char *schema = "main");
// The partitions of `schema` lacking one of their read indexes (agent, kind, resource), oldest
// first: in the live file, the sealed ones an archiver should move. Nothing when unreadable.
std::optional<std::vector<std::uint64_t>> unindexed(const QSqlDatabase &db, const char *schema);
// Copies sealed partition `part` from `from` (an attached live file) into the connection's main
// schema with its read indexes and agent filter, in the caller's transaction.
bool archive(QSqlDatabase &db, const char *from, std::uint64_t part);
// Writes the agent filter of `part`, read from table `from` (schema-qualified), into
// main.ledger_filters.
bool summarize(QSqlDatabase &db, const QString &from, std::uint64_t part);
// Drops the partitions of the connection's main schema whose every event is beyond the bounds,
// measured from `newest` (seq, time); returns how many.
int retain(QSqlDatabase &db, const LedgerBounds &bounds, std::pair<std::uint64_t, TimeMs> newest);
// The WHERE clause a partition is read with: seq > ?, at >= ?, then the filter's agent, kind
// and resource (four values: the name, the name with '0' appended, the name, the name with '/'
// appended) in that order.
// One index serves it: the agent's, else the resource's, else the kind's.
QString condition(const LedgerFilter &filter);
// Up to `limit` events after `since` that match `filter`, oldest first, within the bounds.
// `filters` is the connection's agent filters (filtercache.h), brought up to date here.
std::vector<LedgerEvent> query(const QSqlDatabase &db, std::uint64_t since, std::size_t limit,
                               const LedgerFilter &filter, const LedgerBounds &bounds,
                               FilterCache &filters);
// Moves the rows of a single `ledger` table (schemas 1 and 2) into partitions and drops it.
bool migrate(QSqlDatabase &db, std::uint64_t rows, std::string *error);

} // namespace ledgerparts

} // namespace leasehold

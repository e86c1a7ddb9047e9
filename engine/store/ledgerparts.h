#pragma once

// The ledger as a run of partitions, built for append and retention.
//
// Table ledger_p<n> holds the events with seq in [n·rows + 1, (n + 1)·rows]. The newest
// partition has no index but its rowid (seq), so a commit appends to the last pages of one
// b-tree and touches nothing else. A partition the sequence has moved past is sealed: its read
// indexes (actor, kind, resource, each with seq) are built one at a time off the commit path.
// Retention drops whole partitions that lie entirely beyond the bounds; reads apply the bounds
// exactly, so a row past them is never shown even before its partition goes. Reads page
// across partitions in seq order.
//
// A summary table, ledger_filters (part, probes, bits), holds each sealed partition's agents as a
// Bloom filter (actorfilter.h), so a query for one agent visits only the partitions it may
// appear in, however many there are: one row a partition, written once, dropped with it.
//
// Stateless helpers over a connection; the writer thread appends, maintains and drops, the
// reader connections query.

#include "clock.h"
#include "ledgerevent.h"

#include <QString>

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
// The partitions in the database, oldest first.
std::vector<std::uint64_t> list(const QSqlDatabase &db);
// Creates partition `part` when it is missing (inside the caller's transaction, if any).
bool create(QSqlDatabase &db, std::uint64_t part);
// The newest event's seq and time (0, 0 when the ledger is empty).
std::pair<std::uint64_t, TimeMs> newest(const QSqlDatabase &db);
// One step of upkeep for the oldest sealed partition from `from` up to `current` that needs it:
// one missing read index, or else its agent filter. False when none needs any.
// `from` moves past the partitions found complete, so the caller keeps it between steps and a
// step's cost does not grow with the number of partitions.
bool indexOne(QSqlDatabase &db, std::uint64_t &from, std::uint64_t current);
// Where indexOne should start when nothing is known: the oldest partition missing an index or
// its summary (one catalogue read, not one per partition).
std::uint64_t firstNeedingUpkeep(const QSqlDatabase &db);
// Drops the partitions whose every event is beyond the bounds; returns how many.
int retain(QSqlDatabase &db, const LedgerBounds &bounds);
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

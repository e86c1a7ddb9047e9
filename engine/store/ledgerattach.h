#pragma once

// The two files a reader sees as one ledger: the live database (main) and the archive of sealed
// partitions (ledgerarchive.h), attached beside it under kArchive. The store's connections, the
// partition catalogue (ledgerparts.h) and the filter cache (filtercache.h) all ask these.

#include <QString>

class QSqlDatabase;

namespace leasehold::ledgerparts {

// The schema name a reader connection attaches the archive under.
inline constexpr const char *kArchive = "arch";

// Attaches the ledger archive at `archivePath` as kArchive, for reads across both files.
bool attachArchive(QSqlDatabase &db, const QString &archivePath);
// Whether the connection has a database attached as `schema`.
bool attached(const QSqlDatabase &db, const char *schema);

} // namespace leasehold::ledgerparts

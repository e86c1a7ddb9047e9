#pragma once

// What the parts of SqliteStore share beside its class: the log category, and the helper
// every connection uses (sqlitestore_schema.cpp).

#include <QLoggingCategory>
#include <QString>

#include <string>

class QSqlQuery;

namespace leasehold {

Q_DECLARE_LOGGING_CATEGORY(lcStoreLoad)

namespace sqlitestore {
// The driver's and the database's words for what went wrong with `q`.
std::string sqlError(const QSqlQuery &q);
} // namespace sqlitestore

} // namespace leasehold

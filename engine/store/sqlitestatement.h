#pragma once

#include "leasestore.h"

#include <cstdint>
#include <string>
#include <string_view>

class QSqlDatabase;
struct sqlite3;
struct sqlite3_stmt;

namespace leasehold {

// A statement prepared once on the writer's connection and run many times through SQLite's own
// API, below QtSql: text is bound as the UTF-8 bytes it already is, without a copy
// (SQLITE_STATIC: it must outlive run()), and nothing passes through QVariant or a placeholder
// name lookup. On the writer's path that binding cost more than the inserts themselves.
//
// Thread: the connection's (the writer's).
class SqliteStatement
{
public:
    SqliteStatement() = default;
    // Prepares `sql` on `db`; valid() says whether that worked, error() why not.
    SqliteStatement(sqlite3 *db, std::string_view sql);
    ~SqliteStatement();
    SqliteStatement(SqliteStatement &&other) noexcept;
    SqliteStatement &operator=(SqliteStatement &&other) noexcept;
    SqliteStatement(const SqliteStatement &) = delete;
    SqliteStatement &operator=(const SqliteStatement &) = delete;

    bool valid() const { return m_stmt != nullptr; }

    // Parameters count from 1, as in SQL.
    void text(int i, std::string_view value);
    void blob(int i, std::string_view bytes);
    void integer(int i, std::int64_t value);
    void real(int i, double value);

    // Steps the statement to its end, then resets it and clears the bindings; false when SQLite
    // refused (see health()).
    bool run();
    // What the last failed run(), or a failed preparation, means for the disk.
    StoreHealth health() const;

private:
    sqlite3 *m_db = nullptr;
    sqlite3_stmt *m_stmt = nullptr;
    int m_failure = 0; // the last failed run()'s extended result code (0: none yet)
};

// The sqlite3 connection under a QSQLITE database (QSqlDriver::handle()); null if it is not one.
sqlite3 *sqliteHandle(const QSqlDatabase &db);
// The store's reading of a SQLite result code (primary or extended) and its message.
StoreHealth healthOfCode(int code, std::string detail);

} // namespace leasehold

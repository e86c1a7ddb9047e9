#include "sqlitestatement.h"

#include <QSqlDatabase>
#include <QSqlDriver>
#include <QVariant>

#include <sqlite3.h>

#include <utility>

namespace leasehold {

SqliteStatement::SqliteStatement(sqlite3 *db, std::string_view sql)
    : m_db(db)
{
    if (db && sqlite3_prepare_v3(db, sql.data(), int(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                 &m_stmt, nullptr) != SQLITE_OK) {
        m_failure = sqlite3_extended_errcode(db);
        sqlite3_finalize(m_stmt);
        m_stmt = nullptr;
    }
}

SqliteStatement::~SqliteStatement()
{
    sqlite3_finalize(m_stmt);
}

SqliteStatement::SqliteStatement(SqliteStatement &&other) noexcept
    : m_db(std::exchange(other.m_db, nullptr))
    , m_stmt(std::exchange(other.m_stmt, nullptr))
    , m_failure(std::exchange(other.m_failure, 0))
{}

SqliteStatement &SqliteStatement::operator=(SqliteStatement &&other) noexcept
{
    if (this != &other) {
        sqlite3_finalize(m_stmt);
        m_db = std::exchange(other.m_db, nullptr);
        m_stmt = std::exchange(other.m_stmt, nullptr);
        m_failure = std::exchange(other.m_failure, 0);
    }
    return *this;
}

void SqliteStatement::text(int i, std::string_view value)
{
    sqlite3_bind_text(m_stmt, i, value.data(), int(value.size()), SQLITE_STATIC);
}

void SqliteStatement::blob(int i, std::string_view bytes)
{
    sqlite3_bind_blob(m_stmt, i, bytes.data(), int(bytes.size()), SQLITE_STATIC);
}

void SqliteStatement::integer(int i, std::int64_t value)
{
    sqlite3_bind_int64(m_stmt, i, value);
}

void SqliteStatement::real(int i, double value)
{
    sqlite3_bind_double(m_stmt, i, value);
}

bool SqliteStatement::run()
{
    if (!m_stmt) {
        m_failure = m_db ? sqlite3_extended_errcode(m_db) : SQLITE_MISUSE;
        return false;
    }
    int rc = SQLITE_ROW;
    while (rc == SQLITE_ROW)
        rc = sqlite3_step(m_stmt);
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
    if (rc == SQLITE_DONE)
        return true;
    m_failure = rc;
    return false;
}

StoreHealth SqliteStatement::health() const
{
    const int code = m_failure != 0 ? m_failure
                     : m_db         ? sqlite3_extended_errcode(m_db)
                                    : SQLITE_MISUSE;
    return healthOfCode(code, m_db ? sqlite3_errmsg(m_db) : "no connection");
}

sqlite3 *sqliteHandle(const QSqlDatabase &db)
{
    const QVariant v = db.driver() ? db.driver()->handle() : QVariant();
    if (!v.isValid() || qstrcmp(v.typeName(), "sqlite3*") != 0)
        return nullptr;
    return *static_cast<sqlite3 *const *>(v.constData());
}

StoreHealth healthOfCode(int code, std::string detail)
{
    StoreHealth h;
    h.detail = std::move(detail);
    switch (code & 0xff) { // the primary result code
    case SQLITE_FULL:
        h.problem = StoreHealth::Problem::DiskFull;
        break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
        h.problem = StoreHealth::Problem::ReadOnly;
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        h.problem = StoreHealth::Problem::Locked;
        break;
    case SQLITE_CANTOPEN:
        h.problem = StoreHealth::Problem::CannotOpen;
        break;
    default: // SQLITE_IOERR, SQLITE_CORRUPT and anything unexpected
        h.problem = StoreHealth::Problem::IoError;
        break;
    }
    return h;
}

} // namespace leasehold

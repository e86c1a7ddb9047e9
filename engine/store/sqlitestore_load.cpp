// SqliteStore: loading the last run's state (leases, agents, keys, the token range) and
// starting the writer and pager threads on the database it opened.

#include "sqlitestore.h"
#include "sqlitestore_p.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace leasehold {

using ledgerparts::attachArchive;
using sqlitestore::sqlError;

namespace {

// Tokens start at 1 and grow by one per grant; one beyond this is damage, never a real token
// (and keeps `token + 1` from wrapping).
constexpr std::uint64_t kMaxToken = std::uint64_t(1) << 62;

// Whether a stored lease row can be what a grant wrote: a damaged one is dropped, never trusted.
bool plausible(const LeaseInfo &l)
{
    return !l.leaseId.empty() && !l.resource.empty() && !l.holder.empty() && l.token > 0 &&
           l.token < kMaxToken && l.expiresAt >= l.grantedAt && l.ttlMs >= 0;
}

} // namespace

std::optional<StoredState> SqliteStore::load(std::string *error)
{
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_readerName);
    db.setDatabaseName(m_options.path);
    if (!db.open()) {
        *error = "cannot open " + m_options.path.toStdString() + ": " +
                 db.lastError().text().toStdString();
        return std::nullopt;
    }
    if (!createOrCheckSchema(db, error))
        return std::nullopt;
    if (m_options.archivePath.isEmpty())
        m_options.archivePath = LedgerArchiver::pathFor(m_options.path);
    if (!LedgerArchiver::prepare(m_options.archivePath, error))
        return std::nullopt;

    StoredState state;
    QSqlQuery q(db);
    // A query that stops part-way (a damaged page) is a refusal to start, not a short read: no
    // acknowledged lease is silently left behind.
    auto readAll = [&](const QString &sql, const std::function<void()> &row) {
        if (!q.exec(sql)) {
            *error = "cannot read " + m_options.path.toStdString() + ": " + sqlError(q);
            return false;
        }
        while (q.next())
            row();
        if (q.lastError().isValid()) {
            *error = "cannot read " + m_options.path.toStdString() + ": " + sqlError(q);
            return false;
        }
        return true;
    };
    std::size_t damaged = 0;
    const bool read =
        readAll(QStringLiteral("SELECT lease_id, resource, holder, mode, token, granted_at, "
                               "expires_at, ttl_ms FROM leases ORDER BY token"),
                [&] {
                    LeaseInfo l;
                    l.leaseId = q.value(0).toString().toStdString();
                    l.resource = q.value(1).toString().toStdString();
                    l.holder = q.value(2).toString().toStdString();
                    const std::optional<Mode> mode = parseMode(q.value(3).toString().toStdString());
                    l.token = q.value(4).toULongLong();
                    l.grantedAt = q.value(5).toLongLong();
                    l.expiresAt = q.value(6).toLongLong();
                    l.ttlMs = q.value(7).toLongLong();
                    if (!mode || !plausible(l)) {
                        ++damaged;
                        return;
                    }
                    l.mode = *mode;
                    state.tokenEnd = std::max(state.tokenEnd, l.token + 1);
                    state.leases.push_back(std::move(l));
                }) &&
        readAll(QStringLiteral("SELECT did, trust, releases, expiries, suspended FROM agents"),
                [&] {
                    state.agents.push_back({q.value(0).toString().toStdString(),
                                            q.value(1).toDouble(), q.value(2).toULongLong(),
                                            q.value(3).toULongLong(), q.value(4).toBool()});
                }) &&
        readAll(
            QStringLiteral("SELECT digest, did, role, created_at FROM keys ORDER BY created_at"),
            [&] {
                state.keys.push_back(
                    {q.value(0).toString().toStdString(), q.value(1).toString().toStdString(),
                     q.value(2).toString().toStdString(), q.value(3).toLongLong()});
            }) &&
        readAll(QStringLiteral("SELECT value FROM meta WHERE key = 'token_end'"), [&] {
            state.tokenEnd = std::max<std::uint64_t>(state.tokenEnd, q.value(0).toULongLong());
        });
    if (!read)
        return std::nullopt;
    if (state.tokenEnd >= kMaxToken) {
        // Tokens must keep growing; from a damaged high-water mark they cannot.
        *error = m_options.path.toStdString() + " is damaged: its token high-water mark " +
                 std::to_string(state.tokenEnd) + " is impossible";
        return std::nullopt;
    }
    if (damaged > 0)
        qCWarning(lcStoreLoad) << damaged << "damaged lease rows in" << m_options.path
                               << "were dropped";
    if (!attachArchive(db, m_options.archivePath)) {
        *error = "cannot open the ledger archive " + m_options.archivePath.toStdString() + ": " +
                 db.lastError().text().toStdString();
        return std::nullopt;
    }
    state.lastSeq = std::max(ledgerparts::newest(db).first,
                             ledgerparts::newest(db, ledgerparts::kArchive).first);

    m_open = true;
    m_archiver = std::make_unique<LedgerArchiver>(
        LedgerArchiver::Options{m_options.path, m_options.archivePath, bounds()},
        [archived = m_archived](std::uint64_t part) {
            std::lock_guard lock(archived->mutex);
            if (std::find(archived->parts.begin(), archived->parts.end(), part) ==
                archived->parts.end())
                archived->parts.push_back(part);
        });
    m_archiver->start();
    m_writer = std::thread([this] { writerLoop(); });
    {
        std::lock_guard lock(m_pagerMutex);
        m_pager = std::thread([this] { pagerLoop(); }); // reads pages, checkpoints the WAL
    }
    return state;
}

} // namespace leasehold

#pragma once

// What the SQLite store's tests share: a fresh temporary directory per test, the database and
// archive paths in it, events to write, a way to damage a table's root page, and readers of
// what a file or a page holds.

#include "ledgerparts.h"
#include "sqlitestore.h"
#include "storetestkit.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <string>
#include <vector>

namespace leasehold::storetest {

struct StoreFixture
{
    // A fresh directory: every test's init().
    void freshDirectory()
    {
        dir = std::make_unique<QTemporaryDir>();
        QVERIFY(dir->isValid());
    }

    // Overwrites the b-tree header of `table`'s root page with 0xff bytes.
    [[nodiscard]] bool damage(const QString &table)
    {
        int page = 0;
        int pageSize = 0;
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "damage");
            db.setDatabaseName(path());
            QSqlQuery q(db);
            if (!db.open() || !q.exec("PRAGMA wal_checkpoint(TRUNCATE)") ||
                !q.exec("SELECT rootpage FROM sqlite_master WHERE name = '" + table + "'") ||
                !q.next())
                return false;
            page = q.value(0).toInt();
            if (!q.exec("PRAGMA page_size") || !q.next())
                return false;
            pageSize = q.value(0).toInt();
        }
        QSqlDatabase::removeDatabase("damage");
        QFile f(path());
        return page > 1 && f.open(QIODevice::ReadWrite) && f.seek(qint64(page - 1) * pageSize) &&
               f.write(QByteArray(12, '\xff')) == 12;
    }
    QString path() const { return dir->filePath(QStringLiteral("leasehold.db")); }
    QString archive() const { return dir->filePath(QStringLiteral("leasehold-ledger.db")); }
    static LedgerEvent storedEvent(std::uint64_t seq, const std::string &actor, TimeMs at = 1000)
    {
        LedgerEvent e;
        e.seq = seq;
        e.at = at;
        e.kind = EventKind::Released;
        e.actorDid = actor;
        e.resource = "fs:src/a.cpp";
        e.reason = "release";
        e.facts.by = "did:op:" + std::to_string(seq);
        return e;
    }

    // Events first..last whose resources carry `marker`, so their pages can be found in a file.
    static StoreOps markedEvents(std::uint64_t first, std::uint64_t last, const std::string &marker)
    {
        StoreOps ops;
        for (std::uint64_t seq = first; seq <= last; ++seq) {
            LedgerEvent e = storedEvent(seq, "did:agent:a");
            e.resource = "lock:" + marker + std::to_string(seq);
            ops.add(AppendEvent{e});
        }
        return ops;
    }

    std::unique_ptr<QTemporaryDir> dir;
};

// Whether `file`'s bytes hold `marker` (freed pages keep their old bytes unless rewritten).
inline bool fileHolds(const QString &file, const std::string &marker)
{
    QFile f(file);
    return f.open(QIODevice::ReadOnly) && f.readAll().contains(QByteArray::fromStdString(marker));
}

inline std::vector<std::uint64_t> seqs(const std::vector<LedgerEvent> &events)
{
    std::vector<std::uint64_t> out;
    for (const LedgerEvent &e : events)
        out.push_back(e.seq);
    return out;
}

inline std::vector<std::uint64_t> range(std::uint64_t first, std::uint64_t last,
                                        std::uint64_t step = 1)
{
    std::vector<std::uint64_t> out;
    for (std::uint64_t s = first; s <= last; s += step)
        out.push_back(s);
    return out;
}

} // namespace leasehold::storetest

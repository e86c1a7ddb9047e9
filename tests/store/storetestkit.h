// What the store tests share: committing through a SqliteStore and waiting for its durable
// report, waiting for work the store does in its own time (the archiver's moves, the writer's
// drops), and reading a database file on a connection of the test's own.
#pragma once

#include "sqlitestore.h"

#include <QElapsedTimer>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QStringList>
#include <QTest>

#include <functional>
#include <memory>

namespace leasehold::storetest {

// Submits `ops` and waits until the writer reports them durable; false (and a test failure)
// after 5 s. Use as QVERIFY(commit(...)). The report is kept in a shared cell, so a report that
// arrives after this returns never writes into a stack frame that is gone.
[[nodiscard]] inline bool commit(SqliteStore &store, StoreOps ops)
{
    auto durable = std::make_shared<std::uint64_t>(0);
    store.setDurableCallback([durable](std::uint64_t t) { *durable = t; });
    const std::uint64_t ticket = store.submit(ops); // leaves `ops` empty
    if (ops.empty() && QTest::qWaitFor([&] { return *durable >= ticket; }, 5000))
        return true;
    QTest::qFail("the store did not make the batch durable", __FILE__, __LINE__);
    return false;
}

// Commits empty batches until `done` holds; whether it did within 5 s. The archiver moves
// sealed partitions on its own thread; the writer drops the live copies when it finds itself
// idle after a commit, which each empty batch gives it.
[[nodiscard]] inline bool settle(SqliteStore &store, const std::function<bool()> &done)
{
    QElapsedTimer waited;
    waited.start();
    while (!done()) {
        if (waited.elapsed() > 5000 || !commit(store, {}))
            return false;
    }
    return true;
}

// The rows `sql` (its ? bound to `binds`) reads from `file`, on a connection of its own that is
// gone again on return; nothing, and a warning, when it cannot be read.
inline QList<QVariantList> rows(const QString &file, const QString &sql,
                                const QVariantList &binds = {})
{
    QList<QVariantList> out;
    {
        QSqlDatabase db =
            QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("look"));
        db.setDatabaseName(file);
        QSqlQuery q(db);
        bool ok = db.open() && q.prepare(sql);
        for (const QVariant &v : binds)
            q.addBindValue(v);
        ok = ok && q.exec();
        if (!ok)
            qWarning("cannot read %s: %s", qPrintable(sql), qPrintable(q.lastError().text()));
        while (ok && q.next()) {
            QVariantList row;
            for (int c = 0; c < q.record().count(); ++c)
                row << q.value(c);
            out << row;
        }
    }
    QSqlDatabase::removeDatabase(QStringLiteral("look"));
    return out;
}

// The ledger partitions (or their indexes, `type` "index") a database file holds, by name.
inline QStringList partitionTables(const QString &file, const char *type = "table")
{
    QStringList names;
    for (const QVariantList &row :
         rows(file,
              QStringLiteral("SELECT name FROM sqlite_master WHERE type = ? AND "
                             "name GLOB 'ledger_p*' ORDER BY name"),
              {QString::fromLatin1(type)}))
        names << row.front().toString();
    return names;
}

} // namespace leasehold::storetest

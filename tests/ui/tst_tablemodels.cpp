// The console's models over scripted snapshot sequences, each under QAbstractItemModelTester:
// inserts, removals, changes and reorderings are applied as ranged signals, never a reset, and
// rows keep their place so selection and scroll position survive.

#include "ledgerfilterproxy.h"
#include "ledgermodel.h"
#include "snapshottablemodel.h"
#include "wording.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace leasehold;

namespace {

std::vector<TableColumn> columns()
{
    return {{"Name"},
            {"Token", ColumnKind::Number},
            {"Expires", ColumnKind::Until},
            {"Granted", ColumnKind::Since}};
}

TableRow row(const QString &key, qulonglong token, qint64 expires = 0, qint64 granted = 0)
{
    return {key, {key, QVariant::fromValue(token), expires, granted}};
}

QStringList keys(const SnapshotTableModel &m)
{
    QStringList out;
    for (int r = 0; r < m.rowCount(); ++r)
        out << m.index(r, 0).data(SnapshotTableModel::KeyRole).toString();
    return out;
}

LedgerEvent ledgerEvent(std::uint64_t seq, EventKind kind, const std::string &actor,
                        const std::string &resource)
{
    LedgerEvent e;
    e.seq = seq;
    e.at = 1'000'000 + std::int64_t(seq);
    e.kind = kind;
    e.actorDid = actor;
    e.resource = resource;
    return e;
}

} // namespace

class TestTableModels : public QObject
{
    Q_OBJECT

private slots:
    void insertsRemovalsAndChangesAreRanged();
    void reorderedSnapshotMovesNothing();
    void selectionSurvivesUpdates();
    void numbersSortAsNumbers();
    void relativeTimesFollowTheClock();
    void ledgerIsNewestFirstAndBounded();
    void ledgerFiltersByAgentResourceAndKind();
};

void TestTableModels::insertsRemovalsAndChangesAreRanged()
{
    SnapshotTableModel model(columns());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);

    model.apply({row("a", 1), row("b", 2), row("c", 3), row("d", 4), row("e", 5)});
    QCOMPARE(keys(model), QStringList({"a", "b", "c", "d", "e"}));
    QCOMPARE(inserted.count(), 1); // one range for five rows

    // b and c go (one range), e goes (another), d changes, f arrives.
    model.apply({row("a", 1), row("d", 40), row("f", 6)});
    QCOMPARE(keys(model), QStringList({"a", "d", "f"}));
    QCOMPARE(removed.count(), 2);
    QCOMPARE(removed.at(0).at(1).toInt(), 4); // e first: bottom up
    QCOMPARE(removed.at(1).at(1).toInt(), 1);
    QCOMPARE(removed.at(1).at(2).toInt(), 2);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 1);
    QCOMPARE(model.index(1, 1).data(SnapshotTableModel::RawRole).toULongLong(), 40ULL);
    QCOMPARE(inserted.count(), 2);

    // The same snapshot again: nothing at all.
    changed.clear();
    model.apply({row("a", 1), row("d", 40), row("f", 6)});
    QCOMPARE(changed.count(), 0);

    // Two adjacent changes make one range; everything gone empties it.
    model.apply({row("a", 10), row("d", 41), row("f", 6)});
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(1).toModelIndex().row(), 1);
    model.apply({});
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(reset.count(), 0);
}

void TestTableModels::reorderedSnapshotMovesNothing()
{
    SnapshotTableModel model(columns());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.apply({row("a", 1), row("b", 2), row("c", 3)});
    QSignalSpy any(&model, &QAbstractItemModel::layoutChanged);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy moved(&model, &QAbstractItemModel::rowsMoved);
    model.apply({row("c", 3), row("a", 1), row("b", 2)});
    QCOMPARE(keys(model), QStringList({"a", "b", "c"}));
    QCOMPARE(any.count() + changed.count() + moved.count(), 0);
    // Reordered and changed at once: only the change is signalled.
    model.apply({row("b", 20), row("c", 3), row("a", 1)});
    QCOMPARE(keys(model), QStringList({"a", "b", "c"}));
    QCOMPARE(changed.count(), 1);
}

void TestTableModels::selectionSurvivesUpdates()
{
    SnapshotTableModel model(columns());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.apply({row("a", 1), row("b", 2), row("c", 3)});
    const QPersistentModelIndex selected = model.index(2, 0); // "c"
    model.apply({row("b", 2), row("c", 30), row("x", 9)});
    QVERIFY(selected.isValid());
    QCOMPARE(selected.data(SnapshotTableModel::KeyRole).toString(), QStringLiteral("c"));
    QCOMPARE(selected.row(), 1);
    model.apply({row("b", 2), row("x", 9)});
    QVERIFY(!selected.isValid()); // its row went away, so does the selection
}

void TestTableModels::numbersSortAsNumbers()
{
    SnapshotTableModel model(columns());
    model.apply({row("a", 100), row("b", 9), row("c", 10)});
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(SnapshotTableModel::RawRole);
    proxy.sort(1);
    QStringList order;
    for (int r = 0; r < proxy.rowCount(); ++r)
        order << proxy.index(r, 1).data().toString();
    QCOMPARE(order, QStringList({"9", "10", "100"})); // as text it would be 10, 100, 9
}

void TestTableModels::relativeTimesFollowTheClock()
{
    SnapshotTableModel model(columns());
    model.apply({row("a", 1, 1'004'000, 988'000)});
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setNow(1'000'000);
    QCOMPARE(model.index(0, 2).data().toString(), QStringLiteral("in 4 s"));
    QCOMPARE(model.index(0, 3).data().toString(), QStringLiteral("12 s ago"));
    // Only the two time columns are refreshed.
    QCOMPARE(changed.count(), 2);
    model.setNow(1'005'000);
    QCOMPARE(model.index(0, 2).data().toString(), QStringLiteral("due"));
    QCOMPARE(model.index(0, 3).data().toString(), QStringLiteral("17 s ago"));
    QCOMPARE(formatDuration(61'000), QStringLiteral("1 min 1 s"));
    QCOMPARE(formatDuration(3'720'000), QStringLiteral("1 h 2 min"));
}

void TestTableModels::ledgerIsNewestFirstAndBounded()
{
    LedgerModel model(5);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.append({ledgerEvent(1, EventKind::Granted, "a", "fs:x"),
                  ledgerEvent(2, EventKind::Released, "a", "fs:x")});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.event(0).seq, 2u);
    model.append({ledgerEvent(3, EventKind::Granted, "b", "fs:y"),
                  ledgerEvent(4, EventKind::Granted, "c", "fs:z"),
                  ledgerEvent(5, EventKind::Expired, "c", "fs:z"),
                  ledgerEvent(6, EventKind::Granted, "d", "fs:w")});
    QCOMPARE(model.rowCount(), 5);
    QCOMPARE(model.event(0).seq, 6u);
    QCOMPARE(model.event(4).seq, 2u); // 1 fell off the bottom
    QCOMPARE(removed.count(), 1);
    QCOMPARE(inserted.count(), 2);
    // A burst larger than the capacity keeps its newest.
    std::vector<LedgerEvent> burst;
    for (std::uint64_t s = 7; s <= 20; ++s)
        burst.push_back(ledgerEvent(s, EventKind::Granted, "e", "fs:v"));
    model.append(burst);
    QCOMPARE(model.rowCount(), 5);
    QCOMPARE(model.event(0).seq, 20u);
    QCOMPARE(model.event(4).seq, 16u);
    QVERIFY(LedgerModel::isIncident(ledgerEvent(1, EventKind::Expired, "a", "fs:x")));
    QCOMPARE(model.index(0, LedgerModel::Kind).data().toString(), QStringLiteral("granted"));
}

void TestTableModels::ledgerFiltersByAgentResourceAndKind()
{
    LedgerModel model(100);
    model.append({ledgerEvent(1, EventKind::Granted, "did:agent:a", "fs:src/a.cpp"),
                  ledgerEvent(2, EventKind::Refused, "did:agent:b", "fs:src/a.cpp"),
                  ledgerEvent(3, EventKind::Granted, "did:agent:b", "lock:deploy/production"),
                  ledgerEvent(4, EventKind::Expired, "did:agent:a", "fs:docs/x.md")});
    LedgerFilterProxy proxy;
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    QCOMPARE(proxy.rowCount(), 4);
    proxy.setAgent(QStringLiteral("agent:b"));
    QCOMPARE(proxy.rowCount(), 2);
    proxy.setKind(QStringLiteral("granted"));
    QCOMPARE(proxy.rowCount(), 1);
    proxy.setAgent({});
    proxy.setResource(QStringLiteral("fs:src"));
    QCOMPARE(proxy.rowCount(), 1);
    proxy.setKind({});
    QCOMPARE(proxy.rowCount(), 2);
}

QTEST_MAIN(TestTableModels)
#include "tst_tablemodels.moc"

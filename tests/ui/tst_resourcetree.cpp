// The resource tree as a function of frames: a real engine with a manual clock makes the
// snapshots and ledger events; each node's counts are checked against the snapshot, and the
// page's rows against the tree, updated in place.

#include "consolestate.h"
#include "framefixture.h"
#include "resourcetree.h"
#include "resourcetreepage.h"

#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

using namespace leasehold;
using namespace leasehold::test;

class TestResourceTree : public QObject, private FrameFixture
{
    Q_OBJECT

private slots:
    void init() { resetFrames(); }
    void cleanup() { finish(); }

    void pathsRunFromTheSchemeDown();
    void countsMatchTheSnapshot();
    void patternsAreShownAsSuch();
    void refusalsAreForgottenAfterAMinute();
    void rowsAreUpdatedInPlace();

private:
    // a holds two files and the deploy lock; b waits for one file, c was refused the other.
    void contend()
    {
        m_engine->acquire(
            req("did:agent:a", {"src/a.cpp", "src/lib/b.cpp", "lock:deploy/production"}));
        m_engine->acquire(req("did:agent:b", {"src/a.cpp"}, Mode::Write, 60'000)); // parked
        m_engine->acquire(req("did:agent:c", {"src/lib/b.cpp"}));                  // refused
    }
};

void TestResourceTree::pathsRunFromTheSchemeDown()
{
    QCOMPARE(ResourceTree::pathsOf("lock:deploy/production"),
             QStringList({"lock:", "lock:deploy", "lock:deploy/production"}));
    QCOMPARE(ResourceTree::pathsOf("fs:src/a.cpp"), QStringList({"fs:", "fs:src", "fs:src/a.cpp"}));
    QCOMPARE(ResourceTree::pathsOf("lock:a\\/b"), QStringList({"lock:", "lock:a\\/b"}));
    QCOMPARE(ResourceTree::pathsOf("fs:"), QStringList({"fs:"}));
}

void TestResourceTree::countsMatchTheSnapshot()
{
    contend();
    ConsoleState state;
    state.absorb(frame());
    ResourceTree tree;
    tree.update(state);
    const Snapshot &s = state.frame()->snapshot;

    auto counts = [&tree](const QString &path) {
        const ResourceTree::Node *n = tree.node(path);
        return n ? QList<int>{n->held, n->parked, n->wants, n->refusals} : QList<int>{};
    };
    // held, parked, wants, refused in the last minute
    QCOMPARE(counts("fs:src/a.cpp"), QList<int>({1, 1, 0, 0}));
    QCOMPARE(counts("fs:src/lib/b.cpp"), QList<int>({1, 0, 1, 1}));
    QCOMPARE(counts("fs:src/lib"), QList<int>({1, 0, 1, 1}));
    QCOMPARE(counts("fs:src"), QList<int>({2, 1, 1, 1}));
    QCOMPARE(counts("fs:"), QList<int>({2, 1, 1, 1}));
    QCOMPARE(counts("lock:deploy/production"), QList<int>({1, 0, 0, 0}));
    QCOMPARE(counts("lock:"), QList<int>({1, 0, 0, 0}));
    // The schemes add up to the snapshot.
    int held = 0, waits = 0;
    for (const auto &[path, n] : tree.nodes()) {
        if (n.parent.isEmpty()) {
            held += n.held;
            waits += n.parked + n.wants;
        }
    }
    QCOMPARE(held, int(s.leases.size()));
    QCOMPARE(waits, int(s.waiters.size()));
    QCOMPARE(tree.node("fs:src/a.cpp")->holders, QStringList({"did:agent:a"}));
    QCOMPARE(tree.node("fs:src/a.cpp")->label, QStringLiteral("a.cpp"));
    QCOMPARE(tree.node("fs:src/lib")->parent, QStringLiteral("fs:src"));
    QCOMPARE(tree.maxContention(), 3); // fs: and fs:src: one parked, one want, one refusal
    m_engine->release("did:agent:a", {});
    m_engine->release("did:agent:b", {});
}

void TestResourceTree::patternsAreShownAsSuch()
{
    m_engine->acquire(req("did:agent:a", {"src/**/*.ts"}));
    ConsoleState state;
    state.absorb(frame());
    ResourceTree tree;
    tree.update(state);
    QVERIFY(!tree.node("fs:src")->pattern);
    QVERIFY(tree.node("fs:src/**")->pattern);
    QCOMPARE(tree.node("fs:src/**/*.ts")->label, QStringLiteral("*.ts"));
    QVERIFY(tree.node("fs:src/**/*.ts")->pattern);
    QCOMPARE(tree.node("fs:src")->held, 1);
    m_engine->release("did:agent:a", {});
}

void TestResourceTree::refusalsAreForgottenAfterAMinute()
{
    m_engine->acquire(req("did:agent:a", {"lock:db"}, Mode::Write, 0, 600'000));
    m_engine->acquire(req("did:agent:b", {"lock:db"})); // refused
    ConsoleState state;
    state.absorb(frame());
    ResourceTree tree;
    tree.update(state);
    QCOMPARE(tree.node("lock:db")->refusals, 1);
    m_clock.advance(ConsoleState::kRefusalMemoryMs + 1);
    m_engine->expireDue();
    state.absorb(frame());
    tree.update(state);
    QCOMPARE(tree.node("lock:db")->refusals, 0);
    QCOMPARE(tree.node("lock:db")->held, 1);
    m_engine->release("did:agent:a", {});
}

void TestResourceTree::rowsAreUpdatedInPlace()
{
    contend();
    ConsoleState state;
    state.absorb(frame());
    ResourceTreePage page;
    page.resize(900, 500);
    page.show();
    page.showState(state);
    QCOMPARE(page.view()->accessibleName(), QStringLiteral("Resource tree"));
    QTreeWidgetItem *lib = page.item("fs:src/lib");
    QVERIFY(lib);
    QCOMPARE(lib->text(ResourceTreePage::Resource), QStringLiteral("lib"));
    QCOMPARE(lib->data(ResourceTreePage::Refused, Qt::DisplayRole).toInt(), 1);
    QCOMPARE(lib->parent(), page.item("fs:src"));
    QVERIFY(lib->background(0).color().alpha() > 0);                  // contended: shaded
    QCOMPARE(page.item("lock:")->background(0).style(), Qt::NoBrush); // quiet: the palette's

    QSignalSpy selected(&page, &ResourceTreePage::resourceSelected);
    lib->setExpanded(true);
    page.view()->setCurrentItem(lib);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.last().at(0).toString(), QStringLiteral("fs:src/lib"));

    // Another frame: a releases the deploy lock. The same rows, still expanded and selected;
    // the lock's rows are gone.
    m_engine->release("did:agent:a", {name("lock:deploy/production")});
    state.absorb(frame());
    page.showState(state);
    QCOMPARE(page.item("fs:src/lib"), lib);
    QVERIFY(lib->isExpanded());
    QVERIFY(lib->isSelected());
    QVERIFY(!page.item("lock:deploy/production"));
    QVERIFY(!page.item("lock:"));
    QCOMPARE(page.view()->topLevelItemCount(), 1);
    QCOMPARE(selected.count(), 1); // rows going away are not a new selection
    m_engine->release("did:agent:a", {});
    m_engine->release("did:agent:b", {});
}

QTEST_MAIN(TestResourceTree)
#include "tst_resourcetree.moc"

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
#include <random>

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
    void countingFrameByFrameMatchesCountingAfresh();
    void aCrowdedFolderCostsOneRowUntilOpened();

private:
    // Takes the engine's frame into `state` and shows `page` drawing it.
    void showPage(ResourceTreePage &page, ConsoleState &state)
    {
        state.absorb(frame());
        page.resize(900, 500);
        page.show();
        page.showState(state);
    }
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
    QCOMPARE(tree.node("fs:src/a.cpp")->holders(), QStringList({"did:agent:a"}));
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
    ResourceTreePage page;
    showPage(page, state);
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

void TestResourceTree::countingFrameByFrameMatchesCountingAfresh()
{
    // Leases come and go, waits park and end, refusals age out: the tree that counts what
    // changed frame by frame holds exactly what a tree counting the frame from nothing does.
    std::mt19937 random(7);
    const std::vector<std::string> names = {"src/a.cpp", "src/lib/b.cpp",          "src/lib/c.cpp",
                                            "docs/x.md", "lock:deploy/production", "lock:db"};
    const std::vector<std::string> agents = {"did:agent:a", "did:agent:b", "did:agent:c"};
    ConsoleState state;
    ResourceTree tree;
    for (int step = 0; step < 400; ++step) {
        const std::string &agent = agents[random() % agents.size()];
        const std::string &resource = names[random() % names.size()];
        switch (random() % 4) {
        case 0:
        case 1: // acquire: granted, parked, or refused
            m_engine->acquire(req(agent, {resource}, random() % 2 ? Mode::Read : Mode::Write,
                                  random() % 3 == 0 ? 5'000 : 0, 20'000));
            break;
        case 2:
            m_engine->release(agent, {name(resource)});
            break;
        case 3:
            m_clock.advance(std::int64_t(random() % 9'000));
            m_engine->expireDue();
            break;
        }
        if (step % 3 != 0)
            continue; // several changes to a frame
        state.absorb(frame());
        tree.update(state);
        ResourceTree afresh;
        afresh.update(state);
        QCOMPARE(tree.nodes().size(), afresh.nodes().size());
        for (const auto &[path, node] : afresh.nodes()) {
            const ResourceTree::Node *kept = tree.node(path);
            QVERIFY2(kept, qPrintable(path));
            QVERIFY2(*kept == node, qPrintable(QStringLiteral("%1: held %2/%3 parked %4/%5 wants "
                                                              "%6/%7 refused %8/%9")
                                                   .arg(path)
                                                   .arg(kept->held)
                                                   .arg(node.held)
                                                   .arg(kept->parked)
                                                   .arg(node.parked)
                                                   .arg(kept->wants)
                                                   .arg(node.wants)
                                                   .arg(kept->refusals)
                                                   .arg(node.refusals)));
        }
        QCOMPARE(tree.maxContention(), afresh.maxContention());
    }
    QVERIFY(state.refusalsRecorded() > 10); // the walk did refuse, and refusals aged out
    for (const std::string &agent : agents)
        m_engine->release(agent, {});
}

void TestResourceTree::aCrowdedFolderCostsOneRowUntilOpened()
{
    // More leases in one folder than open by themselves: one closed row, until it is opened.
    for (int i = 0; i < ResourceTreePage::kOpenChildren + 1; ++i)
        m_engine->acquire(req("did:agent:a", {"lock:load/" + std::to_string(i)}));
    m_engine->acquire(req("did:agent:a", {"src/a.cpp"}));
    ConsoleState state;
    ResourceTreePage page;
    showPage(page, state);
    QTreeWidgetItem *load = page.item("lock:load");
    QVERIFY(load);
    QVERIFY(!load->isExpanded());
    QCOMPARE(load->childCount(), 0);
    QCOMPARE(load->childIndicatorPolicy(), QTreeWidgetItem::ShowIndicator);
    QCOMPARE(load->data(ResourceTreePage::Held, Qt::DisplayRole).toInt(),
             ResourceTreePage::kOpenChildren + 1);
    QVERIFY(!page.item("lock:load/0"));
    QVERIFY(page.item("fs:src/a.cpp")); // a quiet folder is open as before
    load->setExpanded(true);
    QCOMPARE(load->childCount(), ResourceTreePage::kOpenChildren + 1);
    QVERIFY(page.item("lock:load/0"));
    load->setExpanded(false);
    QVERIFY(!page.item("lock:load/0"));
    m_engine->release("did:agent:a", {});
}

QTEST_MAIN(TestResourceTree)
#include "tst_resourcetree.moc"

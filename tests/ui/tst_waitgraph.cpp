// The wait-for graph as a function of frames: a real engine with a manual clock makes the
// snapshots and ledger events, and the graph's nodes, arrows and marks are checked against what
// the engine did; then the page draws exactly that graph.

#include "consolestate.h"
#include "framefixture.h"
#include "waitgraphmodel.h"
#include "waitgraphpage.h"

#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QTest>

#include <set>

using namespace leasehold;
using namespace leasehold::test;

namespace {

// One arrow as text: "from -> to (resource) parked|wants|refused [live|refused-cycle]".
QString describe(const WaitGraphModel::Edge &e)
{
    QString text = QStringLiteral("%1 -> %2 (%3) %4")
                       .arg(e.from, e.to, e.resource,
                            e.refused  ? QStringLiteral("refused")
                            : e.parked ? QStringLiteral("parked")
                                       : QStringLiteral("wants"));
    if (e.mark == WaitGraphModel::Mark::LiveCycle)
        text += QStringLiteral(" live");
    else if (e.mark == WaitGraphModel::Mark::RefusedCycle)
        text += QStringLiteral(" refused-cycle");
    return text;
}

std::set<QString> arrows(const WaitGraphModel &g)
{
    std::set<QString> out;
    for (const WaitGraphModel::Edge &e : g.edges())
        out.insert(describe(e));
    return out;
}

// The DIDs of the agent boxes the page has drawn, sorted.
QStringList boxesOf(const WaitGraphPage &page)
{
    QStringList boxes;
    for (QGraphicsItem *item : page.view()->scene()->items()) {
        if (item->flags() & QGraphicsItem::ItemIsSelectable)
            boxes << item->data(0).toString();
    }
    boxes.sort();
    return boxes;
}

} // namespace

class TestWaitGraph : public QObject, private FrameFixture
{
    Q_OBJECT

private slots:
    void init() { resetFrames(); }
    void cleanup() { finish(); }

    void waitsAndWantsPointAtTheHolder();
    void aRefusedCycleIsDrawnWithExactlyItsEdges();
    void aLiveCycleOfWantsIsMarked();
    void nodesKeepTheirPlaces();
    void holdersOnTheLeftWaitersToTheRight();
    void aCycleSharesAColumn();
    void aCrowdIsOneNodeUntilOpened();
    void thePageDrawsTheGraph();
    void findOpensTheCrowdAndSelects();
    void zoomStaysWhereTheOperatorPutIt();

private:
    // left holds parser.cpp and wants lexer.cpp; right holds lexer.cpp and is refused
    // parser.cpp as a deadlock. Both hold for ten minutes.
    void refuseADeadlock()
    {
        m_engine->acquire(req("did:agent:left", {"src/parser.cpp"}, Mode::Write, 0, 600'000));
        m_engine->acquire(req("did:agent:right", {"src/lexer.cpp"}, Mode::Write, 0, 600'000));
        m_engine->acquire(req("did:agent:left", {"src/lexer.cpp"})); // refused: a want
        const AcquireResult r =
            m_engine->acquire(req("did:agent:right", {"src/parser.cpp"}, Mode::Write, 5000));
        QCOMPARE(refusalOf(r).reason, RefusalReason::Deadlock);
    }
};

void TestWaitGraph::waitsAndWantsPointAtTheHolder()
{
    m_engine->acquire(req("did:agent:a", {"src/main.rs", "lock:deploy/production"}));
    m_engine->acquire(req("did:agent:b", {"src/main.rs"}, Mode::Write, 10'000)); // parked
    m_engine->acquire(req("did:agent:c", {"src/main.rs"}));                      // a want
    ConsoleState state;
    state.absorb(frame());
    WaitGraphModel g;
    g.update(state);
    QCOMPARE(arrows(g), (std::set<QString>{"did:agent:b -> did:agent:a (fs:src/main.rs) parked",
                                           "did:agent:c -> did:agent:a (fs:src/main.rs) wants"}));
    QCOMPARE(g.nodes().size(), 3u);
    QCOMPARE(g.node("did:agent:a")->holds,
             QStringList({"fs:src/main.rs", "lock:deploy/production"}));
    QCOMPARE(g.node("did:agent:a")->waits, 0);
    QCOMPARE(g.node("did:agent:b")->waits, 1);
    QVERIFY(g.refusedPath().isEmpty());
    QVERIFY(g.livePaths().isEmpty());

    // a lets go: b is granted, c now wants it from b.
    m_engine->release("did:agent:a", {});
    state.absorb(frame());
    g.update(state);
    QCOMPARE(arrows(g), (std::set<QString>{"did:agent:c -> did:agent:b (fs:src/main.rs) wants"}));
    QVERIFY(!g.node("did:agent:a")); // no longer waited for: not in the graph
    m_engine->release("did:agent:b", {});
}

void TestWaitGraph::aRefusedCycleIsDrawnWithExactlyItsEdges()
{
    refuseADeadlock();
    ConsoleState state;
    state.absorb(frame());
    WaitGraphModel g;
    g.update(state);
    QCOMPARE(arrows(g),
             (std::set<QString>{
                 "did:agent:left -> did:agent:right (fs:src/lexer.cpp) wants refused-cycle",
                 "did:agent:right -> did:agent:left (fs:src/parser.cpp) refused refused-cycle"}));
    QCOMPARE(g.refusedPath(), state.deadlocks().back().cycle);
    QCOMPARE(g.node("did:agent:left")->mark, WaitGraphModel::Mark::RefusedCycle);
    QCOMPARE(g.node("did:agent:right")->mark, WaitGraphModel::Mark::RefusedCycle);

    // A minute on, the refusal is history: left wanting lexer.cpp again is drawn plainly.
    m_clock.advance(WaitGraphModel::kRefusedMemoryMs + 1);
    m_engine->expireDue();
    m_engine->acquire(req("did:agent:left", {"src/lexer.cpp"}));
    state.absorb(frame());
    g.update(state);
    QVERIFY(g.refusedPath().isEmpty());
    QCOMPARE(arrows(g),
             (std::set<QString>{"did:agent:left -> did:agent:right (fs:src/lexer.cpp) wants"}));
    QCOMPARE(g.node("did:agent:left")->mark, WaitGraphModel::Mark::None);
}

void TestWaitGraph::aLiveCycleOfWantsIsMarked()
{
    // A cycle can form through a grant rather than a request: a wants y while c holds it; b
    // wants x, held by a; c lets go of y and b takes it. Now each wants what the other holds.
    m_engine->acquire(req("did:agent:a", {"lock:x"}));
    m_engine->acquire(req("did:agent:c", {"lock:y"}));
    m_engine->acquire(req("did:agent:a", {"lock:y"}));
    m_engine->acquire(req("did:agent:b", {"lock:x"}));
    m_engine->release("did:agent:c", {});
    QVERIFY(isGrant(m_engine->acquire(req("did:agent:b", {"lock:y"}))));
    ConsoleState state;
    state.absorb(frame());
    QCOMPARE(state.frame()->snapshot.deadlocks.size(), 1u);
    WaitGraphModel g;
    g.update(state);
    QCOMPARE(arrows(g), (std::set<QString>{"did:agent:a -> did:agent:b (lock:y) wants live",
                                           "did:agent:b -> did:agent:a (lock:x) wants live"}));
    QCOMPARE(g.livePaths().size(), 1);
    QVERIFY(g.livePaths().front().contains(QStringLiteral("lock:x")));
    QCOMPARE(g.node("did:agent:a")->mark, WaitGraphModel::Mark::LiveCycle);
    m_engine->release("did:agent:a", {});
    m_engine->release("did:agent:b", {});
}

void TestWaitGraph::nodesKeepTheirPlaces()
{
    m_engine->acquire(req("did:agent:a", {"lock:one"}));
    m_engine->acquire(req("did:agent:b", {"lock:one"}, Mode::Write, 60'000));
    ConsoleState state;
    state.absorb(frame());
    WaitGraphModel g;
    g.update(state);
    const QPointF a = g.node("did:agent:a")->pos;
    const QPointF b = g.node("did:agent:b")->pos;
    QVERIFY(a != b);

    m_engine->acquire(req("did:agent:c", {"lock:two"}));
    m_engine->acquire(req("did:agent:d", {"lock:two"}, Mode::Write, 60'000));
    state.absorb(frame());
    g.update(state);
    QCOMPARE(g.node("did:agent:a")->pos, a); // newcomers do not move anyone
    QCOMPARE(g.node("did:agent:b")->pos, b);
    const QPointF c = g.node("did:agent:c")->pos;
    const QPointF d = g.node("did:agent:d")->pos;
    std::set<std::pair<double, double>> places;
    for (const QPointF &p : {a, b, c, d})
        places.insert({p.x(), p.y()});
    QCOMPARE(places.size(), 4u);

    // a and b leave the graph (b is granted); e queues behind d, in d's column, and c and d
    // stay where they were.
    m_engine->release("did:agent:a", {});
    m_engine->acquire(req("did:agent:e", {"lock:two"}, Mode::Write, 60'000));
    state.absorb(frame());
    g.update(state);
    QVERIFY(!g.node("did:agent:a"));
    QVERIFY(!g.node("did:agent:b"));
    QCOMPARE(g.node("did:agent:c")->pos, c);
    QCOMPARE(g.node("did:agent:d")->pos, d);
    QCOMPARE(g.node("did:agent:e")->pos.x(), d.x());
    QVERIFY(g.node("did:agent:e")->pos != d);
    m_engine->release("did:agent:b", {});
    m_engine->release("did:agent:c", {});
    m_engine->release("did:agent:d", {});
    m_engine->release("did:agent:e", {});
}

void TestWaitGraph::holdersOnTheLeftWaitersToTheRight()
{
    // a holds x; b holds y and wants x; c wants y: three columns, every arrow pointing left.
    m_engine->acquire(req("did:agent:a", {"lock:x"}));
    m_engine->acquire(req("did:agent:b", {"lock:y"}));
    m_engine->acquire(req("did:agent:b", {"lock:x"}));
    m_engine->acquire(req("did:agent:c", {"lock:y"}));
    ConsoleState state;
    state.absorb(frame());
    WaitGraphModel g;
    g.update(state);
    const double a = g.node("did:agent:a")->pos.x();
    const double b = g.node("did:agent:b")->pos.x();
    const double c = g.node("did:agent:c")->pos.x();
    QVERIFY(a < b && b < c);
    for (const WaitGraphModel::Edge &e : g.edges())
        QVERIFY(g.node(e.from)->pos.x() > g.node(e.to)->pos.x());
    // A waiter shares its holder's row where it is free: short, level arrows.
    QCOMPARE(g.node("did:agent:b")->pos.y(), g.node("did:agent:a")->pos.y());
    m_engine->release("did:agent:a", {});
    m_engine->release("did:agent:b", {});
}

void TestWaitGraph::aCycleSharesAColumn()
{
    refuseADeadlock();
    m_engine->acquire(req("did:agent:third", {"src/parser.cpp"})); // wants left's file
    ConsoleState state;
    state.absorb(frame());
    WaitGraphModel g;
    g.update(state);
    const WaitGraphModel::Node *left = g.node("did:agent:left");
    const WaitGraphModel::Node *right = g.node("did:agent:right");
    QCOMPARE(left->pos.x(), right->pos.x()); // one under the other, drawn as a loop
    QVERIFY(left->pos.y() != right->pos.y());
    QVERIFY(left->inCycle && right->inCycle);
    QVERIFY(!g.node("did:agent:third")->inCycle);
    QVERIFY(g.node("did:agent:third")->pos.x() > left->pos.x()); // behind the ring
}

void TestWaitGraph::aCrowdIsOneNodeUntilOpened()
{
    m_engine->acquire(req("did:agent:holder", {"lock:deploy"}));
    for (int i = 0; i < 30; ++i)
        m_engine->acquire(
            req("did:agent:w" + std::to_string(i), {"lock:deploy"}, Mode::Write, 60'000));
    m_engine->acquire(req("did:agent:solo", {"lock:other"})); // not a crowd of its own
    ConsoleState state;
    state.absorb(frame());
    WaitGraphModel g;
    g.update(state);
    const QString crowd = WaitGraphModel::crowdKey("lock:deploy", "did:agent:holder");
    QCOMPARE(g.nodes().size(), 2u); // the holder and its crowd (solo waits for nobody held)
    const WaitGraphModel::Node *n = g.node(crowd);
    QVERIFY(n);
    QCOMPARE(n->members.size(), 30);
    QCOMPARE(g.nodeOf("did:agent:w7"), n);
    QCOMPARE(g.edges().size(), 1u);
    QCOMPARE(g.edges().front().count, 30);
    QVERIFY(g.edges().front().parked);

    g.expand(crowd);
    g.update(state);
    QCOMPARE(g.nodes().size(), 31u);
    QVERIFY(!g.node(crowd));
    QCOMPARE(g.nodeOf("did:agent:w7")->did, QStringLiteral("did:agent:w7"));
    g.expand(crowd, false);
    g.update(state);
    QCOMPARE(g.nodes().size(), 2u);
    m_engine->release("did:agent:holder", {});
}

void TestWaitGraph::thePageDrawsTheGraph()
{
    refuseADeadlock();
    ConsoleState state;
    state.absorb(frame());
    WaitGraphPage page;
    page.resize(900, 600);
    page.show();
    page.activateWindow();
    page.showState(state);
    QCOMPARE(page.view()->accessibleName(), QStringLiteral("Wait-for graph"));
    QVERIFY(page.view()->focusPolicy() & Qt::TabFocus);
    // One selectable box per agent, named by its DID.
    QCOMPARE(boxesOf(page), QStringList({"did:agent:left", "did:agent:right"}));
    QVERIFY2(page.summary().contains(state.deadlocks().back().cycle), qPrintable(page.summary()));
    QCOMPARE(page.view()->accessibleDescription(), page.summary());

    // Selecting a box names its agent.
    QString selected;
    connect(&page, &WaitGraphPage::agentSelected, this,
            [&](const QString &did) { selected = did; });
    for (QGraphicsItem *item : page.view()->scene()->items()) {
        if (item->data(0).toString() == QLatin1String("did:agent:right"))
            item->setSelected(true);
    }
    QCOMPARE(selected, QStringLiteral("did:agent:right"));

    // The keyboard: the view takes the focus, its selected box has it, and the arrow keys walk
    // from box to box (left and right are a cycle, one under the other: left comes first).
    QVERIFY(QTest::qWaitForWindowActive(&page));
    page.view()->setFocus(Qt::TabFocusReason);
    QVERIFY(page.view()->scene()->focusItem());
    QCOMPARE(page.view()->scene()->focusItem()->data(0).toString(),
             QStringLiteral("did:agent:right"));
    QTest::keyClick(page.view(), Qt::Key_Up);
    QCOMPARE(selected, QStringLiteral("did:agent:left"));
    QTest::keyClick(page.view(), Qt::Key_Up); // nothing further that way: it stays
    QCOMPARE(selected, QStringLiteral("did:agent:left"));
    QTest::keyClick(page.view(), Qt::Key_Down);
    QCOMPARE(selected, QStringLiteral("did:agent:right"));

    // The next frame changes the graph: a third agent wants left's file, and its box is drawn.
    m_engine->acquire(req("did:agent:third", {"src/parser.cpp"}));
    state.absorb(frame());
    page.showState(state);
    QCOMPARE(boxesOf(page), QStringList({"did:agent:left", "did:agent:right", "did:agent:third"}));
}

void TestWaitGraph::findOpensTheCrowdAndSelects()
{
    m_engine->acquire(req("did:agent:holder", {"lock:deploy"}));
    for (int i = 0; i < 12; ++i)
        m_engine->acquire(
            req("did:agent:w" + std::to_string(i), {"lock:deploy"}, Mode::Write, 60'000));
    ConsoleState state;
    state.absorb(frame());
    WaitGraphPage page;
    page.resize(900, 600);
    page.show();
    page.showState(state);
    QCOMPARE(boxesOf(page).size(), 2); // the holder and one box for the twelve
    QString selected;
    connect(&page, &WaitGraphPage::agentSelected, this,
            [&](const QString &did) { selected = did; });
    QVERIFY(page.find(QStringLiteral("W11"))); // any case
    QCOMPARE(selected, QStringLiteral("did:agent:w11"));
    QCOMPARE(boxesOf(page).size(), 13); // its crowd opened
    QVERIFY(!page.find(QStringLiteral("nobody-by-that-name")));
    // Selecting (clicking) a crowd's box opens it too.
    const QString crowd = WaitGraphModel::crowdKey("lock:deploy", "did:agent:holder");
    page.openCrowd(crowd, false);
    QCOMPARE(boxesOf(page).size(), 2);
    for (QGraphicsItem *item : page.view()->scene()->items())
        if (item->data(0).toString() == crowd)
            item->setSelected(true);
    QCOMPARE(boxesOf(page).size(), 13);
    m_engine->release("did:agent:holder", {});
}

void TestWaitGraph::zoomStaysWhereTheOperatorPutIt()
{
    refuseADeadlock();
    ConsoleState state;
    state.absorb(frame());
    WaitGraphPage page;
    page.resize(900, 600);
    page.show();
    page.showState(state);
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const double fitted = page.zoom();
    page.view()->setFocus();
    QTest::keyClick(page.view(), Qt::Key_Plus, Qt::ControlModifier);
    QVERIFY(page.zoom() > fitted);
    const double chosen = page.zoom();
    m_engine->acquire(req("did:agent:third", {"src/parser.cpp"}));
    state.absorb(frame());
    page.showState(state); // a new frame is drawn at the operator's scale
    QCOMPARE(page.zoom(), chosen);
    QTest::keyClick(page.view(), Qt::Key_0, Qt::ControlModifier); // fit again
    QVERIFY(page.zoom() <= 1.0);
    QVERIFY(page.zoom() != chosen);
}

QTEST_MAIN(TestWaitGraph)
#include "tst_waitgraph.moc"

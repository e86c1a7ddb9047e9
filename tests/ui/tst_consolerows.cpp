// The console's views as functions of frames: a real engine with a manual clock makes the
// snapshots and ledger events, ConsoleState takes them in, and each view's rows and the
// incidents are checked against what the engine did.

#include "consolerows.h"
#include "consolestate.h"
#include "framefixture.h"
#include "ledgerformat.h"
#include "ledgerjson.h"
#include "wording.h"

#include <QTest>

using namespace leasehold;
using namespace leasehold::test;
using namespace consolerows;

class TestConsoleRows : public QObject, private FrameFixture
{
    Q_OBJECT

private slots:
    void init() { resetFrames(); }
    void cleanup() { finish(); }

    void holdersShowEveryLease();
    void deadlockRefusalIsRememberedWithItsCycle();
    void cycleOfRichNamesIsShownAndExportedAsDecided();
    void expiryIsAnIncidentAndMarksTrust();
    void anOverdueReleaseRequestIsAnIncident();
    void queueShowsParkedWaitsAndWants();
    void pinsAndAgentsFollowTheEngine();
    void ratesAreMeasuredOverASecond();
    void theStoreFallingIllAndRecoveringIsSaidOnce();
    void eachCountIsItsTablesRows();
};

void TestConsoleRows::eachCountIsItsTablesRows()
{
    // A nav count is shown instead of building a hidden table: it must be the rows the table
    // would have, frame after frame - leases, parked waits and wants, a refused and a live
    // cycle, pins, agents.
    using namespace consolerows;
    ConsoleState state;
    auto check = [&] {
        state.absorb(frame());
        QCOMPARE(holderCount(state), holderRows(state).size());
        QCOMPARE(queueCount(state), queueRows(state).size());
        QCOMPARE(deadlockCount(state), deadlockRows(state).size());
        QCOMPARE(trustCount(state), trustRows(state).size());
        QCOMPARE(pinCount(state), pinRows(state).size());
        QCOMPARE(agentCount(state), agentRows(state).size());
    };
    QCOMPARE(holderCount(state), holderRows(state).size()); // before any frame
    check();
    const Grant g = grantOf(m_engine->acquire(req("did:agent:a", {"src/a.cpp"})));
    m_engine->acquire(req("did:agent:b", {"src/b.cpp"}));
    m_engine->acquire(req("did:agent:c", {"src/a.cpp"}, Mode::Write, 10'000)); // parked
    m_engine->acquire(req("did:agent:a", {"src/b.cpp"}));                      // a want
    m_engine->acquire(req("did:agent:b", {"src/a.cpp"}, Mode::Write, 5'000));  // deadlock
    QVERIFY(std::holds_alternative<PinInfo>(m_engine->pin("did:agent:a", g.leases[0].leaseId)));
    check();
    // Every table has rows, so an equality above compares something.
    QVERIFY(holderCount(state) >= 2 && queueCount(state) >= 2 && deadlockCount(state) >= 1 &&
            trustCount(state) >= 3 && pinCount(state) == 1 && agentCount(state) >= 3);
    m_engine->release("did:agent:a", {});
    m_engine->release("did:agent:b", {});
    m_engine->release("did:agent:c", {});
    check();
}

void TestConsoleRows::theStoreFallingIllAndRecoveringIsSaidOnce()
{
    ConsoleState state;
    QVERIFY(state.absorb(frame()).empty());
    ServiceFacts ill;
    ill.store = true;
    ill.storeHealth = "disk_full";
    ill.storeProblem = "the disk holding the state database is full";
    const std::vector<Incident> fell = state.absorb(frame(ill));
    QCOMPARE(fell.size(), 1u);
    QCOMPARE(fell[0].kind, Incident::Kind::Store);
    QVERIFY2(fell[0].text.contains(QStringLiteral("disk holding the state database is full")),
             qPrintable(fell[0].text));
    QVERIFY(state.absorb(frame(ill)).empty()); // still ill: not said again
    const std::vector<Incident> back = state.absorb(frame());
    QCOMPARE(back.size(), 1u);
    QCOMPARE(back[0].kind, Incident::Kind::Store);
    QVERIFY(back[0].text.contains(QStringLiteral("again")));
}

void TestConsoleRows::holdersShowEveryLease()
{
    const Grant a = grantOf(m_engine->acquire(req("did:agent:a", {"src/a.cpp"})));
    m_engine->acquire(req("did:agent:b", {"lock:deploy/production"}, Mode::Write, 0, 60'000));
    ConsoleState state;
    state.absorb(frame());
    const std::vector<TableRow> rows = holderRows(state);
    QCOMPARE(rows.size(), 2u);
    const TableRow &first =
        rows[0].key == QString::fromStdString(a.leases[0].leaseId) ? rows[0] : rows[1];
    QCOMPARE(first.values[HolderAgent].toString(), QStringLiteral("did:agent:a"));
    QCOMPARE(first.values[HolderResource].toString(), QStringLiteral("fs:src/a.cpp"));
    QCOMPARE(first.values[HolderToken].toULongLong(), a.leases[0].token);
    QCOMPARE(first.values[HolderLeaseId].toString(), first.key);
    QCOMPARE(first.values.size(), holderColumns().size());
}

void TestConsoleRows::deadlockRefusalIsRememberedWithItsCycle()
{
    m_engine->acquire(req("did:agent:left", {"src/parser.cpp"}));
    m_engine->acquire(req("did:agent:right", {"src/lexer.cpp"}));
    m_engine->acquire(req("did:agent:left", {"src/lexer.cpp"})); // refused: a want
    const AcquireResult r =
        m_engine->acquire(req("did:agent:right", {"src/parser.cpp"}, Mode::Write, 5000));
    QCOMPARE(refusalOf(r).reason, RefusalReason::Deadlock);

    ConsoleState state;
    const std::vector<Incident> incidents = state.absorb(frame());
    QCOMPARE(incidents.size(), 1u);
    QCOMPARE(incidents[0].kind, Incident::Kind::Deadlock);
    QVERIFY(incidents[0].text.contains(QLatin1String("did:agent:left")));
    QCOMPARE(state.deadlocks().size(), 1u);
    const DeadlockRecord &d = state.deadlocks().front();
    QCOMPARE(d.agent, QStringLiteral("did:agent:right"));
    QCOMPARE(d.resource, QStringLiteral("fs:src/parser.cpp"));
    QCOMPARE(d.holder, QStringLiteral("did:agent:left"));
    QCOMPARE(d.waitingOn, QStringLiteral("fs:src/lexer.cpp"));
    QCOMPARE(d.cycle, QStringLiteral("did:agent:right \u2192 fs:src/parser.cpp \u2192 "
                                     "did:agent:left \u2192 fs:src/lexer.cpp \u2192 "
                                     "did:agent:right"));
    const std::vector<TableRow> rows = deadlockRows(state);
    QCOMPARE(rows.size(), 1u);
    QCOMPARE(rows[0].mark, RowMark::Incident);
    // A later frame without new events keeps the record but raises nothing new.
    QCOMPARE(state.absorb(frame()).size(), 0u);
    QCOMPARE(deadlockRows(state).size(), 1u);
}

namespace {

// The fields of one CSV line (RFC 4180 quoting; the line holds no line breaks).
QStringList csvFields(const QString &line)
{
    QStringList out;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted && c == u'"' && i + 1 < line.size() && line[i + 1] == u'"')
            field += c, ++i;
        else if (c == u'"')
            quoted = !quoted;
        else if (c == u',' && !quoted)
            out << field, field.clear();
        else
            field += c;
    }
    return out << field;
}

} // namespace

void TestConsoleRows::cycleOfRichNamesIsShownAndExportedAsDecided()
{
    // Names with every character the DID rule allows (quotes, backslashes, '>' and all).
    std::string rich = "did:agent:";
    for (char c = '!'; c <= '~'; ++c)
        rich += (c == '=' || c == ',') ? std::string() : std::string(1, c);
    const std::string a = rich + "1", b = rich + "2", c = rich + "3";
    m_engine->acquire(req(a, {"lock:r1"}));
    m_engine->acquire(req(b, {"lock:r2"}));
    m_engine->acquire(req(c, {"lock:r3"}));
    m_engine->acquire(req(a, {"lock:r2"})); // wants: a -> b -> c
    m_engine->acquire(req(b, {"lock:r3"}));
    const Refusal r = refusalOf(m_engine->acquire(req(c, {"lock:r1"})));
    QCOMPARE(r.reason, RefusalReason::Deadlock);
    QCOMPARE(r.cycle.size(), 3u);

    ConsoleState state;
    const std::vector<Incident> incidents = state.absorb(frame());
    QCOMPARE(incidents.size(), 1u);
    const DeadlockRecord &d = state.deadlocks().front();
    QCOMPARE(d.agent, QString::fromStdString(c));
    QCOMPARE(d.holder, QString::fromStdString(a));
    QCOMPARE(d.cycle, cyclePath(r.cycle));
    QCOMPARE(d.cycle,
             QString::fromStdString(c + " \u2192 lock:r1 \u2192 " + a + " \u2192 lock:r2 \u2192 " +
                                    b + " \u2192 lock:r3 \u2192 " + c));
    QVERIFY(incidents[0].text.contains(QString::fromStdString(a)));

    // The export says the same: JSON Lines field by field, CSV as agent=resource steps.
    std::vector<LedgerEvent> refused;
    for (const LedgerEvent &e : m_listener.events)
        if (e.kind == EventKind::Refused && e.reason == "deadlock")
            refused.push_back(e);
    QCOMPARE(refused.size(), 1u);
    const nlohmann::json line = nlohmann::json::parse(ledgerJsonLines(refused).toStdString());
    QCOMPARE(line["cycle"].size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        QCOMPARE(line["cycle"][i]["agent"].get<std::string>(), r.cycle[i].agent);
        QCOMPARE(line["cycle"][i]["resource"].get<std::string>(), r.cycle[i].resource);
    }
    QCOMPARE(ledgerEventFromJson(line)->facts, refused[0].facts);
    // A line from elsewhere with fields of the wrong type reads them as absent, never throws.
    nlohmann::json odd = line;
    odd["paused"] = "yes";
    odd["whileDown"] = 1;
    odd["at"] = "soon";
    odd["holder"] = nlohmann::json::object();
    const std::optional<LedgerEvent> read = ledgerEventFromJson(odd);
    QVERIFY(read.has_value());
    QVERIFY(!read->facts.paused && !read->facts.whileDown);
    QCOMPARE(read->at, TimeMs(0));
    QCOMPARE(read->facts.holder, std::string());
    const QStringList csv = QString::fromUtf8(ledgerCsv(refused)).split(QStringLiteral("\r\n"));
    const QStringList header = csvFields(csv[0]);
    const QStringList row = csvFields(csv[1]);
    QCOMPARE(row.size(), header.size());
    QCOMPARE(row[header.indexOf(QStringLiteral("actorDid"))], QString::fromStdString(c));
    QCOMPARE(row[header.indexOf(QStringLiteral("holder"))], QString::fromStdString(a));
    const QStringList steps = row[header.indexOf(QStringLiteral("cycle"))].split(u' ');
    QCOMPARE(steps.size(), 3);
    for (int i = 0; i < 3; ++i)
        QCOMPARE(steps[i], QString::fromStdString(r.cycle[std::size_t(i)].agent + "=" +
                                                  r.cycle[std::size_t(i)].resource));
}

void TestConsoleRows::expiryIsAnIncidentAndMarksTrust()
{
    m_engine->acquire(req("did:agent:flaky", {"build/cache"}, Mode::Write, 0, 6000));
    ConsoleState state;
    state.absorb(frame());
    QCOMPARE(trustRows(state).at(0).mark, RowMark::None);
    m_clock.advance(6000);
    m_engine->expireDue();
    const std::vector<Incident> incidents = state.absorb(frame());
    QCOMPARE(incidents.size(), 1u);
    QCOMPARE(incidents[0].kind, Incident::Kind::Expiry);
    QCOMPARE(incidents[0].resource, QStringLiteral("fs:build/cache"));
    const std::vector<TableRow> trust = trustRows(state);
    QCOMPARE(trust.size(), 1u);
    QCOMPARE(trust[0].mark, RowMark::Incident);
    QVERIFY(trust[0].values[2].toDouble() < 0); // the trend shows the fall
    QCOMPARE(trust[0].values[4].toULongLong(), 1ULL);
    // A minute later the mark is gone, the expiry is still counted.
    m_clock.advance(61'000);
    state.absorb(frame());
    QCOMPARE(trustRows(state).at(0).mark, RowMark::None);
}

void TestConsoleRows::anOverdueReleaseRequestIsAnIncident()
{
    m_engine->acquire(req("did:agent:a", {"lock:deploy"}, Mode::Write, 0, 600'000));
    ReleaseRequestAsk ask;
    ask.requester = "did:op:alice";
    ask.byOperator = true;
    ask.resource = name("lock:deploy");
    ask.reason = "the hotfix needs it";
    ask.urgency = Urgency::High;
    ask.deadlineMs = 30'000;
    QVERIFY(std::holds_alternative<ReleaseRequestInfo>(m_engine->raiseReleaseRequest(ask)));
    ConsoleState state;
    QVERIFY(state.absorb(frame()).empty()); // asked, not yet overdue
    m_clock.advance(30'000);
    m_engine->expireDue();
    const std::vector<Incident> incidents = state.absorb(frame());
    QCOMPARE(incidents.size(), 1u);
    QCOMPARE(incidents[0].kind, Incident::Kind::Overdue);
    QCOMPARE(incidents[0].agent, QStringLiteral("did:agent:a"));
    QVERIFY2(incidents[0].text.contains("by did:op:alice (high urgency)"),
             qPrintable(incidents[0].text));
}

void TestConsoleRows::queueShowsParkedWaitsAndWants()
{
    m_engine->acquire(req("did:agent:a", {"src/main.rs"}));
    m_engine->acquire(req("did:agent:b", {"src/main.rs"}, Mode::Write, 10'000)); // parked
    m_engine->acquire(req("did:agent:c", {"src/main.rs"}));                      // a want
    ConsoleState state;
    state.absorb(frame());
    std::vector<TableRow> rows = queueRows(state);
    QCOMPARE(rows.size(), 2u);
    std::map<QString, QString> kindByAgent;
    for (const TableRow &r : rows) {
        kindByAgent[r.values[0].toString()] = r.values[3].toString();
        QCOMPARE(r.values[4].toString(), QStringLiteral("did:agent:a")); // waiting for
    }
    QCOMPARE(kindByAgent[QStringLiteral("did:agent:b")], QStringLiteral("parked"));
    QCOMPARE(kindByAgent[QStringLiteral("did:agent:c")], QStringLiteral("wants"));
    m_engine->release("did:agent:a", {});
    state.absorb(frame());
    rows = queueRows(state);
    QCOMPARE(rows.size(), 1u); // b was granted; c still wants it (now held by b)
    QCOMPARE(rows[0].values[4].toString(), QStringLiteral("did:agent:b"));
    m_engine->release("did:agent:b", {});
}

void TestConsoleRows::pinsAndAgentsFollowTheEngine()
{
    const Grant g = grantOf(m_engine->acquire(req("did:agent:a", {"src/a.cpp"})));
    const PinResult pin = m_engine->pin("did:agent:a", g.leases[0].leaseId);
    ServiceFacts facts;
    facts.keysByAgent = {{"did:agent:a", 2}};
    ConsoleState state;
    state.absorb(frame(facts));
    const std::vector<TableRow> pins = pinRows(state);
    QCOMPARE(pins.size(), 1u);
    QCOMPARE(pins[0].key, QString::fromStdString(std::get<PinInfo>(pin).pinId));
    const std::vector<TableRow> agents = agentRows(state);
    QCOMPARE(agents.size(), 1u);
    QCOMPARE(agents[0].values[AgentLeases].toInt(), 1);
    QCOMPARE(agents[0].values[AgentKeys].toInt(), 2);
    m_engine->suspend("did:op:alice", "did:agent:a", true);
    state.absorb(frame(facts));
    QCOMPARE(agentRows(state).at(0).values[AgentSuspended].toBool(), true);
    QCOMPARE(agentRows(state).at(0).mark, RowMark::Attention);
}

void TestConsoleRows::ratesAreMeasuredOverASecond()
{
    ConsoleState state;
    state.absorb(frame());
    for (int i = 0; i < 30; ++i) {
        m_engine->acquire(req("did:agent:a", {"src/f" + std::to_string(i)}));
        m_engine->acquire(req("did:agent:b", {"src/f" + std::to_string(i)})); // refused
    }
    m_clock.advance(500);
    state.absorb(frame());
    QCOMPARE(state.grantRate(), 0.0); // not a second yet
    m_clock.advance(1000);
    state.absorb(frame());
    QCOMPARE(state.grantRate(), 20.0); // 30 grants over 1.5 s
    QCOMPARE(state.refusalRate(), 20.0);
    m_engine->release("did:agent:a", {});
}

QTEST_MAIN(TestConsoleRows)
#include "tst_consolerows.moc"

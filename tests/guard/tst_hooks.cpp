// The hook core (app/guard/hooks/hookrun.h) against a real service on 127.0.0.1 port 0 with a
// manual clock: a held file makes the call wait on the service's FIFO queue and go ahead when
// the holder lets go; a wait that runs out denies it naming the holder; two agents waiting in
// hooks on each other's files are a deadlock; a hook that goes away takes nothing; every
// dialect answers in its own format; the filesystem gate's refusals reach the model.

#include "dialects.h"
#include "hookrun.h"
#include "refusallog.h"
#include "servicetest.h"

#include <QDateTime>
#include <QTcpServer>
#include <QTemporaryDir>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstHooks : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void heldFileWaitsThenTheEditGoesAhead();
    void waitThatRunsOutDeniesNamingTheHolder();
    void hooksWaitingOnEachOtherAreRefusedAsDeadlock();
    void hookThatGoesAwayTakesNothing();
    void everyDialectDeniesInItsOwnFormat_data();
    void everyDialectDeniesInItsOwnFormat();
    void patchHeadersAreTakenAllOrNothing();
    void shellWritesAreCheckedLikeEdits();
    void postToolRenewsAndStopReleases();
    void gateRefusalsDuringACommandReachTheModel();
    void unreachableOrSilentServiceWarnsOrDenies();
    void unreadableEventsAreAnsweredNotCrashed();

private:
    HookRun::Settings settings(const QByteArray &key, quint16 port = 0) const
    {
        HookRun::Settings st;
        st.service.base = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port ? port : s->port));
        st.service.key = key;
        st.service.via = "hook";
        st.root = dir.path();
        st.waitMs = 5'000;
        st.stateFolder = dir.filePath(QStringLiteral("state"));
        return st;
    }
    // A Claude Code event on `file` (below the root) by `tool`.
    QByteArray claude(const char *event, const char *tool, const QString &file,
                      const char *session = "s1") const
    {
        json e = {{"session_id", session},
                  {"cwd", dir.path().toStdString()},
                  {"hook_event_name", event},
                  {"tool_name", tool},
                  {"tool_use_id", "toolu_1"},
                  {"tool_input", {{"file_path", dir.filePath(file).toStdString()}}}};
        return QByteArray::fromStdString(e.dump());
    }
    std::unique_ptr<HookRun> start(const HookDialect &d, const QByteArray &event,
                                   HookRun::Settings st)
    {
        auto run = std::make_unique<HookRun>(d, event, std::move(st));
        run->start();
        return run;
    }
    HookAnswer now(const HookDialect &d, const QByteArray &event, HookRun::Settings st)
    {
        auto run = start(d, event, std::move(st));
        if (!QTest::qWaitFor([&] { return run->isFinished(); }, 10'000))
            qFatal("the hook did not answer");
        return run->answer();
    }
    void hold(const QByteArray &key, const char *resource)
    {
        QCOMPARE(s->post("/lease", {{"resource", resource}, {"ttlMs", 600'000}}, key).status, 200);
    }
    std::vector<LeaseInfo> leases() const { return s->host->engine().snapshot().leases; }
    static json out(const HookAnswer &a)
    {
        return json::parse(a.out.begin(), a.out.end(), nullptr, false);
    }

    std::unique_ptr<ServiceFixture> s;
    QTemporaryDir dir;
};

void TstHooks::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("src")));
}

void TstHooks::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstHooks::heldFileWaitsThenTheEditGoesAhead()
{
    hold(kKeyB, "fs:src/a.ts");
    // The agent already holds the file of an earlier edit: it may still wait for this one.
    hold(kKeyA, "fs:src/mine.ts");
    auto run =
        start(claudeCodeDialect(), claude("PreToolUse", "Edit", "src/a.ts"), settings(kKeyA));
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    const HttpResult queue = s->get(QString(RestApi::kBase) + "/wait", kKeyB);
    JCOMPARE(queue.body["waiters"][0]["actorDid"], "did:agent:a");
    JCOMPARE(queue.body["waiters"][0]["kind"], "parked");
    QVERIFY(!run->isFinished());
    s->clock.advance(1'200);
    QCOMPARE(s->post("/release", json::object(), kKeyB).status, 200);
    QTRY_VERIFY(run->isFinished());
    // Granted: nothing is printed, so the agent's own permission flow goes on.
    QCOMPARE(run->answer().exitCode, 0);
    QCOMPARE(run->answer().out, QByteArray());
    QCOMPARE(s->host->engine().agentView("did:agent:a").held.size(), 2u);
}

void TstHooks::waitThatRunsOutDeniesNamingTheHolder()
{
    hold(kKeyB, "fs:src/a.ts");
    auto run =
        start(claudeCodeDialect(), claude("PreToolUse", "Write", "src/a.ts"), settings(kKeyA));
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    s->clock.advance(5'000);
    s->host->tick();
    QTRY_VERIFY(run->isFinished());
    const json o = out(run->answer());
    JCOMPARE(o["hookSpecificOutput"]["permissionDecision"], "deny");
    const std::string reason = o["hookSpecificOutput"]["permissionDecisionReason"];
    QVERIFY2(reason.find("your Write of ") == 11, reason.c_str());
    QVERIFY2(reason.find("fs:src/a.ts is held by did:agent:b (for 5 s, expires in 9 min 55 s). "
                         "It waited 5 s for it.") != std::string::npos,
             reason.c_str());
    QCOMPARE(leases().size(), 1u);
}

void TstHooks::hooksWaitingOnEachOtherAreRefusedAsDeadlock()
{
    hold(kKeyA, "fs:src/a.ts");
    hold(kKeyB, "fs:src/b.ts");
    auto first =
        start(claudeCodeDialect(), claude("PreToolUse", "Edit", "src/b.ts", "sa"), settings(kKeyA));
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    const HookAnswer second =
        now(claudeCodeDialect(), claude("PreToolUse", "Edit", "src/a.ts", "sb"), settings(kKeyB));
    const std::string reason = out(second)["hookSpecificOutput"]["permissionDecisionReason"];
    QVERIFY2(reason.find("waiting for fs:src/a.ts would close a cycle: it is held by "
                         "did:agent:a, who waits for fs:src/b.ts, which you hold.") !=
                 std::string::npos,
             reason.c_str());
    QVERIFY(!first->isFinished());
    // The refused agent's turn ends: its leases go, and the first hook's edit goes ahead.
    QCOMPARE(
        now(claudeCodeDialect(), R"({"session_id":"sb","hook_event_name":"Stop"})", settings(kKeyB))
            .out,
        QByteArray());
    QTRY_VERIFY(first->isFinished());
    QCOMPARE(first->answer().out, QByteArray());
}

void TstHooks::hookThatGoesAwayTakesNothing()
{
    hold(kKeyB, "fs:src/a.ts");
    auto run =
        start(claudeCodeDialect(), claude("PreToolUse", "Edit", "src/a.ts"), settings(kKeyA));
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    run.reset(); // the agent was interrupted and killed its hook: the connection closes
    QTRY_COMPARE(s->host->engine().parkedCount(), 0u);
    QCOMPARE(s->post("/release", json::object(), kKeyB).status, 200);
    QCOMPARE(leases().size(), 0u);
}

void TstHooks::everyDialectDeniesInItsOwnFormat_data()
{
    QTest::addColumn<QString>("dialect");
    QTest::addColumn<QString>("event");    // $ROOT: the workspace
    QTest::addColumn<QString>("option");   // --event
    QTest::addColumn<QString>("reasonAt"); // JSON pointer of the denial's reason
    // Payloads as the agents send them (the research notes' samples).
    QTest::newRow("claude-code Edit")
        << "claude-code"
        << R"({"session_id":"f2da0be1","cwd":"$ROOT","permission_mode":"acceptEdits","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"$ROOT/src/app.txt","old_string":"world","new_string":"EDITED","replace_all":false},"tool_use_id":"call_2_0"})"
        << ""
        << "/hookSpecificOutput/permissionDecisionReason";
    QTest::newRow("codex apply_patch")
        << "codex"
        << R"({"session_id":"01a24e95","turn_id":"t","cwd":"$ROOT","hook_event_name":"PreToolUse","model":"gpt-5.5","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: src/app.txt\n@@\n hello\n-world\n+EDITED\n*** End Patch\n"},"tool_use_id":"call_1_0"})"
        << ""
        << "/hookSpecificOutput/permissionDecisionReason";
    QTest::newRow("gemini replace")
        << "gemini"
        << R"({"session_id":"85b38428","cwd":"$ROOT","hook_event_name":"BeforeTool","timestamp":"2026-12-07T04:01:53.296Z","tool_name":"replace","tool_input":{"file_path":"$ROOT/src/app.txt","old_string":"world","new_string":"EDITED","instruction":"change"}})"
        << ""
        << "/reason";
    QTest::newRow("copilot edit")
        << "copilot"
        << R"({"sessionId":"d0678b6a","timestamp":1796616276400,"cwd":"$ROOT","toolName":"edit","toolArgs":{"path":"$ROOT/src/app.txt","old_str":"world","new_str":"EDITED"}})"
        << "preToolUse"
        << "/permissionDecisionReason";
    QTest::newRow("copilot Claude-shaped")
        << "copilot"
        << R"({"hook_event_name":"PreToolUse","session_id":"460e1a8d","cwd":"$ROOT","tool_name":"Edit","tool_input":{"path":"$ROOT/src/app.txt","old_str":"world","new_str":"EDITED"}})"
        << ""
        << "/hookSpecificOutput/permissionDecisionReason";
    QTest::newRow("qwen edit")
        << "qwen"
        << R"({"session_id":"e89166e3","cwd":"$ROOT","hook_event_name":"PreToolUse","permission_mode":"yolo","tool_name":"edit","tool_input":{"file_path":"$ROOT/src/app.txt","old_string":"world","new_string":"EDITED"},"tool_use_id":"toolu_1","tool_call_id":"call_2_0"})"
        << ""
        << "/hookSpecificOutput/permissionDecisionReason";
    QTest::newRow("opencode edit")
        << "opencode"
        << R"({"hook_event_name":"tool.execute.before","session_id":"ses_db11","call_id":"call_3_0","tool":"edit","args":{"filePath":"$ROOT/src/app.txt","oldString":"world","newString":"EDITED"},"cwd":"$ROOT"})"
        << ""
        << "/reason";
}

void TstHooks::everyDialectDeniesInItsOwnFormat()
{
    QFETCH(QString, dialect);
    QFETCH(QString, event);
    QFETCH(QString, option);
    QFETCH(QString, reasonAt);
    hold(kKeyB, "fs:src/app.txt");
    HookRun::Settings st = settings(kKeyA);
    st.waitMs = 0;
    st.eventName = option;
    const HookDialect *d = HookDialect::find(dialect);
    QVERIFY(d);
    const HookAnswer a = now(*d, event.replace(QStringLiteral("$ROOT"), dir.path()).toUtf8(), st);
    QCOMPARE(a.exitCode, 0);
    const json o = out(a);
    QVERIFY2(o.is_object(), a.out.constData());
    const json reason = o.value(json::json_pointer(reasonAt.toStdString()), json());
    QVERIFY2(reason.is_string() &&
                 reason.get<std::string>().find("fs:src/app.txt is held by did:agent:b") !=
                     std::string::npos,
             a.out.constData());
    // Agent a asked once and took nothing.
    QCOMPARE(leases().size(), 1u);
}

void TstHooks::patchHeadersAreTakenAllOrNothing()
{
    // One patch adds, updates and moves: every file it names is leased together, or none.
    const QByteArray patch = QByteArray::fromStdString(json{
        {"session_id", "c1"},
        {"cwd", dir.path().toStdString()},
        {"hook_event_name", "PreToolUse"},
        {"tool_name", "apply_patch"},
        {"tool_use_id", "call_1"},
        {"tool_input",
         {{"command", "*** Begin Patch\n*** Add File: src/new.txt\n+new file\n*** Update "
                      "File: src/app.txt\n*** Move to: src/moved.txt\n@@\n hello\n-world\n"
                      "+MOVED\n*** End Patch\n"}}}}.dump());
    hold(kKeyB, "fs:src/moved.txt");
    HookRun::Settings st = settings(kKeyA);
    st.waitMs = 0;
    const json denied = out(now(codexDialect(), patch, st));
    QVERIFY2(denied.dump().find("src/moved.txt is held by did:agent:b") != std::string::npos,
             denied.dump().c_str());
    QCOMPARE(leases().size(), 1u); // nothing of the patch was taken
    QCOMPARE(s->post("/release", json::object(), kKeyB).status, 200);
    QCOMPARE(now(codexDialect(), patch, st).out, QByteArray());
    std::set<std::string> names;
    for (const LeaseInfo &l : leases())
        names.insert(l.resource);
    QCOMPARE(names,
             (std::set<std::string>{"fs:src/new.txt", "fs:src/app.txt", "fs:src/moved.txt"}));
}

void TstHooks::shellWritesAreCheckedLikeEdits()
{
    hold(kKeyB, "fs:src/app.txt");
    HookRun::Settings st = settings(kKeyA);
    st.waitMs = 0;
    auto bash = [&](const char *command) {
        return QByteArray::fromStdString(json{
            {"session_id", "s1"},
            {"cwd", dir.path().toStdString()},
            {"hook_event_name", "PreToolUse"},
            {"tool_name", "Bash"},
            {"tool_input",
             {{"command", command}}}}.dump());
    };
    const json sed = out(now(claudeCodeDialect(), bash("sed -i s/world/SHELLED/ src/app.txt"), st));
    const std::string reason = sed["hookSpecificOutput"]["permissionDecisionReason"];
    QVERIFY2(reason.find("your command `sed -i s/world/SHELLED/ src/app.txt` was not run: "
                         "fs:src/app.txt is held by did:agent:b") != std::string::npos,
             reason.c_str());
    // The same file through a cd and a redirection; a read is no write.
    QVERIFY(!now(claudeCodeDialect(), bash("cd src && echo x >> app.txt"), st).out.isEmpty());
    QCOMPARE(now(claudeCodeDialect(), bash("cat src/app.txt | wc -l"), st).out, QByteArray());
    // A write the parser cannot name is the filesystem gate's: it goes ahead here.
    QCOMPARE(now(claudeCodeDialect(), bash("sed -i s/a/b/ $(ls src/*.txt)"), st).out, QByteArray());
    // A free file written by a shell command is leased like an edit's.
    QCOMPARE(now(claudeCodeDialect(), bash("tee -a src/log.txt < /dev/null"), st).out,
             QByteArray());
    QCOMPARE(s->host->engine().agentView("did:agent:a").held.at(0).resource,
             std::string("fs:src/log.txt"));
}

void TstHooks::postToolRenewsAndStopReleases()
{
    QCOMPARE(now(qwenDialect(), claude("PreToolUse", "edit", "src/a.ts"), settings(kKeyA)).out,
             QByteArray());
    const TimeMs firstExpiry = leases().at(0).expiresAt;
    s->clock.advance(60'000);
    QCOMPARE(now(qwenDialect(), claude("PostToolUse", "edit", "src/a.ts"), settings(kKeyA)).out,
             QByteArray());
    QCOMPARE(leases().size(), 1u);
    QCOMPARE(leases()[0].expiresAt, firstExpiry + 60'000);
    // Qwen's -p runs never fire SessionEnd: its Stop releases everything the agent holds.
    QCOMPARE(now(qwenDialect(), R"({"session_id":"s1","hook_event_name":"Stop"})", settings(kKeyA))
                 .exitCode,
             0);
    QCOMPARE(leases().size(), 0u);
    // Codex's SessionEnd, Gemini's AfterAgent, Copilot's sessionEnd, opencode's idle session.
    for (const auto &[d, e, option] :
         std::vector<std::tuple<const HookDialect *, const char *, QString>>{
             {&codexDialect(), R"({"session_id":"x","hook_event_name":"SessionEnd"})", {}},
             {&geminiDialect(), R"({"session_id":"x","hook_event_name":"AfterAgent"})", {}},
             {&copilotDialect(), R"({"sessionId":"x","reason":"complete"})", "sessionEnd"},
             {&opencodeDialect(), R"({"hook_event_name":"session.idle","session_id":"x"})", {}}}) {
        hold(kKeyA, "fs:src/a.ts");
        HookRun::Settings st = settings(kKeyA);
        st.eventName = option;
        const HookAnswer a = now(*d, e, st);
        QCOMPARE(a.exitCode, 0);
        QVERIFY2(leases().empty(), qPrintable(d->name()));
    }
}

void TstHooks::gateRefusalsDuringACommandReachTheModel()
{
    // `leasehold run` logged a refusal while the command ran (and one long before it).
    const QString run = dir.filePath(QStringLiteral("run"));
    QVERIFY(QDir().mkpath(run));
    HookRun::Settings st = settings(kKeyA);
    st.runFolder = run;
    const QByteArray pre = QByteArray::fromStdString(json{
        {"session_id", "s1"},
        {"cwd", dir.path().toStdString()},
        {"hook_event_name", "PreToolUse"},
        {"tool_name", "Bash"},
        {"tool_use_id", "toolu_9"},
        {"tool_input", {{"command", "npm run format"}}}}.dump());
    const qint64 now0 = QDateTime::currentMSecsSinceEpoch();
    {
        fsgate::RefusalLog log(QDir(run).filePath(QStringLiteral("refusals.jsonl")).toStdString());
        fsgate::Refusal old;
        old.at = now0 - 3'600'000;
        old.op = "write";
        old.path = "src/old.ts";
        log.append(old);
    }
    QCOMPARE(now(claudeCodeDialect(), pre, st).out, QByteArray());
    {
        fsgate::RefusalLog log(QDir(run).filePath(QStringLiteral("refusals.jsonl")).toStdString());
        fsgate::Refusal r;
        r.at = QDateTime::currentMSecsSinceEpoch();
        r.op = "write";
        r.path = "src/app.ts";
        r.resource = "fs:src/app.ts";
        r.reason = "lease_held";
        r.holder = "did:agent:b";
        r.heldResource = "fs:src";
        r.expiresAt = r.at + 240'000;
        r.pid = 4242;
        r.command = "prettier";
        log.append(r);
    }
    QByteArray post = pre;
    post.replace("PreToolUse", "PostToolUse");
    const json o = out(now(claudeCodeDialect(), post, st));
    JCOMPARE(o["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    const std::string context = o["hookSpecificOutput"]["additionalContext"];
    QVERIFY2(context.find("the filesystem gate refused 1 change") != std::string::npos,
             context.c_str());
    QVERIFY2(context.find("- write src/app.ts by prettier (pid 4242): held by did:agent:b through "
                          "fs:src (expires in") != std::string::npos,
             context.c_str());
    QVERIFY(context.find("old.ts") == std::string::npos);
    // Copilot's post-tool context is its own field.
    const HookAnswer copilot = now(
        copilotDialect(),
        R"({"sessionId":"c","toolName":"bash","toolArgs":{"command":"make"},"toolResult":{}})", st);
    QVERIFY2(out(copilot)["additionalContext"].get<std::string>().find("prettier") !=
                 std::string::npos,
             copilot.out.constData());
}

void TstHooks::unreachableOrSilentServiceWarnsOrDenies()
{
    QTcpServer closed;
    QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
    const quint16 port = closed.serverPort();
    closed.close();
    const QByteArray edit = claude("PreToolUse", "Edit", "src/a.ts");
    const HookAnswer warned = now(claudeCodeDialect(), edit, settings(kKeyA, port));
    QCOMPARE(warned.exitCode, 0);
    QVERIFY2(out(warned)["systemMessage"].get<std::string>().find("goes ahead unguarded") !=
                 std::string::npos,
             warned.out.constData());
    HookRun::Settings strict = settings(kKeyA, port);
    strict.strict = true;
    JCOMPARE(
        out(now(claudeCodeDialect(), edit, strict))["hookSpecificOutput"]["permissionDecision"],
        "deny");
    // A service that takes the request and never answers: the hook's own deadline answers.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
    HookRun::Settings quick = settings(kKeyA, silent.serverPort());
    quick.waitMs = 0;
    quick.slackMs = 300;
    const HookAnswer late = now(claudeCodeDialect(), edit, quick);
    QVERIFY2(late.out.contains("no answer within 300 ms"), late.out.constData());
    // Copilot denies a hook that fails: its warning never exits non-zero nor prints a decision.
    const HookAnswer copilot =
        now(copilotDialect(),
            R"({"sessionId":"c","toolName":"create","toolArgs":{"path":"src/n.txt"}})",
            settings(kKeyA, port));
    QCOMPARE(copilot.exitCode, 0);
    QCOMPARE(copilot.out, QByteArray());
    QVERIFY(copilot.err.contains("goes ahead unguarded"));
}

void TstHooks::unreadableEventsAreAnsweredNotCrashed()
{
    for (const HookDialect *d : {&claudeCodeDialect(), &codexDialect(), &geminiDialect(),
                                 &copilotDialect(), &qwenDialect(), &opencodeDialect()}) {
        for (const char *input : {"nonsense", "", "[]", "{\"hook_event_name\":7}"}) {
            HookRun::Settings st = settings(kKeyA);
            const HookAnswer warned = now(*d, input, st);
            QCOMPARE(warned.exitCode, 0);
            QVERIFY2(!warned.out.contains("deny"), warned.out.constData());
            st.strict = true;
            const HookAnswer denied = now(*d, input, st);
            QCOMPARE(denied.exitCode, 0);
            QVERIFY2(denied.out.contains("deny"), qPrintable(d->name() + denied.out));
        }
    }
    QCOMPARE(leases().size(), 0u);
}

QTEST_MAIN(TstHooks)
#include "tst_hooks.moc"

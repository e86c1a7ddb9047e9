// `leasehold hook claude-code`: events shaped as Claude Code's hooks reference gives them, for
// two sessions against one service: how files are named (the root, symlinks, patterns), who the
// agent is (its key, or its session on an --open instance). The wait, the other agents'
// dialects and install-hooks are tst_hooks, tst_hookdialects and tst_hookinstall.

#include "dialects.h"
#include "hookrun.h"
#include "servicetest.h"

#include <QTemporaryDir>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstClaudeCodeHook : public QObject
{
    Q_OBJECT

private slots:
    void init()
    {
        s = std::make_unique<ServiceFixture>(true);
        key.clear();
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkpath("src"));
        QFile f(dir.filePath("src/a.ts"));
        QVERIFY(f.open(QIODevice::WriteOnly));
    }
    void cleanup()
    {
        s.reset();
        QFile::remove(dir.filePath("alias"));
    }

    void secondSessionIsDeniedNamingTheFirst();
    void postToolUseRenewsAndStopReleases();
    void keysNameTheAgent();
    void onlyEditsInsideTheRootAreGuarded();
    void symlinksNameTheSameFile();
    void patternLeasesAreHonoured();
    void anUnreachableServiceWarnsOrDenies();

private:
    HookAnswer hookEvent(const char *session, const char *name, const QString &path,
                         const char *tool = "Edit", bool strict = false, quint16 port = 0)
    {
        json e = {{"session_id", session},
                  {"transcript_path", "/tmp/t.jsonl"},
                  {"cwd", dir.path().toStdString()},
                  {"hook_event_name", name},
                  {"tool_name", tool},
                  {"tool_input", {{"file_path", path.toStdString()}, {"old_string", "x"}}}};
        HookRun::Settings settings;
        settings.service.base =
            QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port ? port : s->port));
        settings.service.key = key;
        settings.service.via = "hook";
        settings.strict = strict;
        settings.waitMs = 0; // tst_hooks covers the wait
        return HookRun::runNow(claudeCodeDialect(), QByteArray::fromStdString(e.dump()), settings);
    }
    std::vector<LeaseInfo> leases() { return s->host->engine().snapshot().leases; }

    std::unique_ptr<ServiceFixture> s;
    QTemporaryDir dir;
    QByteArray key;
};

void TstClaudeCodeHook::secondSessionIsDeniedNamingTheFirst()
{
    const HookAnswer first = hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts"));
    QCOMPARE(first.exitCode, 0);
    QCOMPARE(first.out, QByteArray()); // allowed: no decision, the usual permission flow goes on
    QCOMPARE(leases().size(), 1u);
    QCOMPARE(leases()[0].holder, std::string("did:agent:claude-code-s1"));
    QCOMPARE(leases()[0].resource, std::string("fs:src/a.ts"));

    s->clock.advance(3'000);
    const HookAnswer second = hookEvent("s2", "PreToolUse", dir.filePath("src/a.ts"), "Write");
    QCOMPARE(second.exitCode, 0);
    const json out = json::parse(second.out.toStdString());
    QCOMPARE(out.size(), 1u);
    const json &specific = out["hookSpecificOutput"];
    QCOMPARE(specific.size(), 3u);
    JCOMPARE(specific["hookEventName"], "PreToolUse");
    JCOMPARE(specific["permissionDecision"], "deny");
    const std::string reason = specific["permissionDecisionReason"];
    QVERIFY2(reason.find("Leasehold: your Write of " + dir.filePath("src/a.ts").toStdString() +
                         " was not made: fs:src/a.ts is held by did:agent:claude-code-s1 (for 3 "
                         "s, expires in 9 min 57 s).") == 0,
             reason.c_str());
    QVERIFY2(reason.find("Work on something else and come back to this later") != std::string::npos,
             reason.c_str());
    // Another file is free for the second session.
    QFile other(dir.filePath("src/b.ts"));
    QCOMPARE(hookEvent("s2", "PreToolUse", other.fileName()).out, QByteArray());
    QCOMPARE(leases().size(), 2u);
    // The agents show how they are connected.
    const std::vector<AgentInfo> agents = s->host->engine().snapshot().agents;
    QCOMPARE(agents.size(), 2u);
    for (const AgentInfo &a : agents)
        QCOMPARE(int(a.via), int(Via::Hook));
}

void TstClaudeCodeHook::postToolUseRenewsAndStopReleases()
{
    QCOMPARE(hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts")).out, QByteArray());
    const TimeMs firstExpiry = leases().at(0).expiresAt;
    s->clock.advance(60'000);
    QCOMPARE(hookEvent("s1", "PostToolUse", dir.filePath("src/a.ts")).out, QByteArray());
    QCOMPARE(leases().size(), 1u);
    QCOMPARE(leases()[0].expiresAt, firstExpiry + 60'000);
    QVERIFY(!hookEvent("s2", "PreToolUse", dir.filePath("src/a.ts")).out.isEmpty());
    // The turn ends: everything s1 held is released (no expiry against its trust).
    const HookAnswer stop = hookEvent("s1", "Stop", {});
    QCOMPARE(stop.exitCode, 0);
    QCOMPARE(stop.out, QByteArray());
    QCOMPARE(leases().size(), 0u);
    QCOMPARE(hookEvent("s2", "PreToolUse", dir.filePath("src/a.ts")).out, QByteArray());
    QCOMPARE(hookEvent("s2", "SessionEnd", {}).exitCode, 0);
    QCOMPARE(leases().size(), 0u);
}

void TstClaudeCodeHook::keysNameTheAgent()
{
    s = std::make_unique<ServiceFixture>(false);
    key = kKeyA;
    QCOMPARE(hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts")).out, QByteArray());
    QCOMPARE(leases().at(0).holder, std::string("did:agent:a"));
    key = kKeyB;
    const QByteArray denied = hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts")).out;
    QVERIFY2(denied.contains("held by did:agent:a"), denied.constData());
}

void TstClaudeCodeHook::onlyEditsInsideTheRootAreGuarded()
{
    QCOMPARE(hookEvent("s1", "PreToolUse", "/etc/hosts").out, QByteArray());
    QCOMPARE(hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts"), "Read").out, QByteArray());
    QCOMPARE(hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts"), "Bash").out, QByteArray());
    QCOMPARE(leases().size(), 0u);
    // Relative paths are taken from the project; NotebookEdit names its file differently.
    json e = {{"session_id", "s1"},
              {"cwd", dir.path().toStdString()},
              {"hook_event_name", "PreToolUse"},
              {"tool_name", "NotebookEdit"},
              {"tool_input", {{"notebook_path", "nb/x.ipynb"}}}};
    HookRun::Settings settings;
    settings.service = {QUrl(QStringLiteral("http://127.0.0.1:%1").arg(s->port)), {}, {}, "hook"};
    QCOMPARE(
        HookRun::runNow(claudeCodeDialect(), QByteArray::fromStdString(e.dump()), settings).out,
        QByteArray());
    QCOMPARE(leases().at(0).resource, std::string("fs:nb/x.ipynb"));
    // Not an event: a warning, and the call goes ahead (exit 0 always), or with --strict a
    // denial.
    settings.service.agent = QStringLiteral("did:agent:x");
    const HookAnswer warned = HookRun::runNow(claudeCodeDialect(), "nonsense", settings);
    QCOMPARE(warned.exitCode, 0);
    QVERIFY(warned.out.contains("systemMessage"));
    settings.strict = true;
    QVERIFY(HookRun::runNow(claudeCodeDialect(), "nonsense", settings).out.contains("\"deny\""));
}

void TstClaudeCodeHook::symlinksNameTheSameFile()
{
    QVERIFY(QFile::link(dir.filePath("src"), dir.filePath("alias")));
    QCOMPARE(hookEvent("s1", "PreToolUse", dir.filePath("alias/a.ts")).out, QByteArray());
    QCOMPARE(leases().at(0).resource, std::string("fs:src/a.ts"));
    const QByteArray denied = hookEvent("s2", "PreToolUse", dir.filePath("src/a.ts")).out;
    QVERIFY2(denied.contains("claude-code-s1"), denied.constData());
    // A file that does not exist yet, below a linked folder, is named through the folder.
    QCOMPARE(hookEvent("s1", "PreToolUse", dir.filePath("alias/new/b.ts")).out, QByteArray());
    QCOMPARE(leases().at(1).resource, std::string("fs:src/new/b.ts"));
}

void TstClaudeCodeHook::patternLeasesAreHonoured()
{
    // Another agent holds every .ts below src through one pattern lease.
    AcquireRequest req;
    req.actor = "did:agent:refactor";
    req.resources = {std::get<ResourceName>(s->host->parser().parse("src/**/*.ts"))};
    req.ttlMs = 60'000;
    QVERIFY(std::holds_alternative<Grant>(
        s->host->run([&](LeaseEngine &e) { return e.acquire(req); })));
    const QByteArray denied = hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts")).out;
    QVERIFY2(denied.contains("held by did:agent:refactor through fs:src/**/*.ts"),
             denied.constData());
    // A file whose name holds a '*' is named as that one file, and the pattern matches it.
    const QByteArray star = hookEvent("s1", "PreToolUse", dir.filePath("src/x*.ts")).out;
    QVERIFY2(star.contains("fs:src/x\\\\*.ts is held by did:agent:refactor"), star.constData());
    QCOMPARE(hookEvent("s1", "PreToolUse", dir.filePath("docs/x*.md")).out, QByteArray());
    QCOMPARE(leases().size(), 2u);
    QCOMPARE(leases()[1].resource, std::string("fs:docs/x\\*.md"));
}

void TstClaudeCodeHook::anUnreachableServiceWarnsOrDenies()
{
    QTcpServer closed;
    QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
    const quint16 port = closed.serverPort();
    closed.close();
    const HookAnswer warned =
        hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts"), "Edit", false, port);
    QCOMPARE(warned.exitCode, 0);
    const json w = json::parse(warned.out.toStdString());
    QVERIFY2(w["systemMessage"].get<std::string>().find("goes ahead unguarded") !=
                 std::string::npos,
             warned.out.constData());
    const HookAnswer denied =
        hookEvent("s1", "PreToolUse", dir.filePath("src/a.ts"), "Edit", true, port);
    JCOMPARE(json::parse(denied.out.toStdString())["hookSpecificOutput"]["permissionDecision"],
             "deny");
}

QTEST_MAIN(TstClaudeCodeHook)
#include "tst_claudecodehook.moc"

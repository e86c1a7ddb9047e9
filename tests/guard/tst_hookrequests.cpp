// The hook core and release requests: when the service's answer to the hook's call carries
// release requests against the agent's leases, the model reads them as context on the call
// (Claude Code: hookSpecificOutput.additionalContext), before and after a tool; the call itself
// goes ahead. Against a real service on 127.0.0.1 port 0 with a manual clock.

#include "dialects.h"
#include "hookrun.h"
#include "servicetest.h"

#include <QTemporaryDir>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstHookRequests : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void theHoldersHookAddsTheRequestToTheModelsContext();
    void withoutRequestsNothingIsSaid();

private:
    HookRun::Settings settings(const QByteArray &key) const
    {
        HookRun::Settings st;
        st.service.base = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(s->port));
        st.service.key = key;
        st.service.via = "hook";
        st.root = dir.path();
        st.waitMs = 1'000;
        st.stateFolder = dir.filePath(QStringLiteral("state"));
        return st;
    }
    QByteArray claude(const char *event, const QString &file) const
    {
        const json e = {{"session_id", "s1"},
                        {"cwd", dir.path().toStdString()},
                        {"hook_event_name", event},
                        {"tool_name", "Edit"},
                        {"tool_use_id", "toolu_1"},
                        {"tool_input", {{"file_path", dir.filePath(file).toStdString()}}}};
        return QByteArray::fromStdString(e.dump());
    }
    HookAnswer now(const QByteArray &event, HookRun::Settings st)
    {
        HookRun run(claudeCodeDialect(), event, std::move(st));
        run.start();
        if (!QTest::qWaitFor([&] { return run.isFinished(); }, 10'000))
            qFatal("the hook did not answer");
        return run.answer();
    }
    static json out(const HookAnswer &a)
    {
        return json::parse(a.out.begin(), a.out.end(), nullptr, false);
    }

    std::unique_ptr<ServiceFixture> s;
    QTemporaryDir dir;
};

void TstHookRequests::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("src")));
}

void TstHookRequests::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstHookRequests::theHoldersHookAddsTheRequestToTheModelsContext()
{
    // a's hook takes src/a.ts before its edit; b is refused it and asks a to let go.
    QCOMPARE(now(claude("PreToolUse", "src/a.ts"), settings(kKeyA)).out, QByteArray());
    QCOMPARE(s->post("/lease", {{"resource", "src/a.ts"}}, kKeyB).status, 409);
    const HttpResult asked = s->post("/release-request",
                                     {{"resource", "src/a.ts"},
                                      {"reason", "hotfix needs it"},
                                      {"urgency", "high"},
                                      {"deadlineSeconds", 300}},
                                     kKeyB);
    QCOMPARE(asked.status, 200);

    // After the edit: the renewal's answer carries it, and the model reads it.
    const json post = out(now(claude("PostToolUse", "src/a.ts"), settings(kKeyA)));
    JCOMPARE(post["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    const std::string context = post["hookSpecificOutput"]["additionalContext"];
    QVERIFY2(context.find("did:agent:b asks you to let go of fs:src/a.ts") != std::string::npos,
             context.c_str());
    QVERIFY2(context.find("high urgency") != std::string::npos, context.c_str());
    QVERIFY2(context.find("deadline in 5 min") != std::string::npos, context.c_str());
    QVERIFY2(context.find("\"hotfix needs it\"") != std::string::npos, context.c_str());

    // Before the next edit: the call goes ahead (no decision), with the request as context.
    const json pre = out(now(claude("PreToolUse", "src/a.ts"), settings(kKeyA)));
    QVERIFY(!pre["hookSpecificOutput"].contains("permissionDecision"));
    QVERIFY(pre["hookSpecificOutput"]["additionalContext"].get<std::string>().find("did:agent:b") !=
            std::string::npos);
    // Nothing moved: a still holds it.
    QCOMPARE(s->post("/lease", {{"resource", "src/a.ts"}}, kKeyB).status, 409);
}

void TstHookRequests::withoutRequestsNothingIsSaid()
{
    QCOMPARE(now(claude("PreToolUse", "src/a.ts"), settings(kKeyA)).out, QByteArray());
    QCOMPARE(now(claude("PostToolUse", "src/a.ts"), settings(kKeyA)).out, QByteArray());
}

QTEST_MAIN(TstHookRequests)
#include "tst_hookrequests.moc"

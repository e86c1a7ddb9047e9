// What each agent's hook dialect reads from its events (app/guard/hooks): the files a call
// changes - edit tools' path fields, apply_patch headers, notebook paths - and a shell tool's
// command, from the payloads the agents really send; the plain shell writes the hooks check
// (shellwrites.h); and the answers' formats. No service: parsing only.

#include "applypatch.h"
#include "dialects.h"
#include "shellwrites.h"

#include <QTest>

using nlohmann::json;

Q_DECLARE_METATYPE(HookEvent::Kind)

class TstHookDialects : public QObject
{
    Q_OBJECT

private slots:
    void eventsNameTheFilesACallChanges_data();
    void eventsNameTheFilesACallChanges();
    void fieldsOfTheWrongTypeNameNothing();
    void patchHeadersNameEveryFile_data();
    void patchHeadersNameEveryFile();
    void shellCommandsNameTheirPlainWrites_data();
    void shellCommandsNameTheirPlainWrites();
    void copiedIntoAFolderNamesTheFileInside();
    void answersAreEachAgentsOwnFormat();
    void everyNameFindsItsDialect();
};

void TstHookDialects::eventsNameTheFilesACallChanges_data()
{
    QTest::addColumn<QString>("dialect");
    QTest::addColumn<QString>("event");
    QTest::addColumn<QString>("option");
    QTest::addColumn<HookEvent::Kind>("kind");
    QTest::addColumn<QStringList>("files");
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("callId");
    using K = HookEvent::Kind;
    // Claude Code
    QTest::newRow("claude Edit")
        << "claude-code"
        << R"({"session_id":"f2","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/p/src/app.txt","old_string":"w","new_string":"E"},"tool_use_id":"call_2_0"})"
        << "" << K::PreTool << QStringList{"/p/src/app.txt"} << ""
        << "call_2_0";
    QTest::newRow("claude NotebookEdit")
        << "claude-code"
        << R"({"session_id":"f2","hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"nb/x.ipynb"}})"
        << "" << K::PreTool << QStringList{"nb/x.ipynb"} << ""
        << "";
    QTest::newRow("claude Bash post")
        << "claude-code"
        << R"({"session_id":"f2","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"sed -i s/a/b/ src/app.txt","description":"d"},"tool_response":{"stdout":""},"tool_use_id":"t","duration_ms":10})"
        << "" << K::PostTool << QStringList() << "sed -i s/a/b/ src/app.txt"
        << "t";
    QTest::newRow("claude Read is not guarded")
        << "claude-code"
        << R"({"session_id":"f2","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a"}})"
        << "" << K::Other << QStringList() << ""
        << "";
    QTest::newRow("claude Stop")
        << "claude-code"
        << R"({"session_id":"f2","hook_event_name":"Stop","stop_hook_active":false})"
        << "" << K::Stop << QStringList() << ""
        << "";
    QTest::newRow("claude SessionEnd")
        << "claude-code"
        << R"({"session_id":"f2","hook_event_name":"SessionEnd","reason":"other"})"
        << "" << K::SessionEnd << QStringList() << ""
        << "";
    QTest::newRow("claude SessionStart")
        << "claude-code"
        << R"({"session_id":"f2","hook_event_name":"SessionStart","source":"startup"})"
        << "" << K::Other << QStringList() << ""
        << "";
    // Codex
    QTest::newRow("codex apply_patch")
        << "codex"
        << R"({"session_id":"01","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: src/new.txt\n+new file\n*** Update File: src/app.txt\n*** Move to: src/moved.txt\n@@\n hello\n-world\n+MOVED\n*** End Patch\n"},"tool_use_id":"call_1_0"})"
        << "" << K::PreTool << QStringList{"src/new.txt", "src/app.txt", "src/moved.txt"} << ""
        << "call_1_0";
    QTest::newRow("codex Bash")
        << "codex"
        << R"({"session_id":"01","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"sed -i s/world/SHELLED/ src/app.txt"},"tool_use_id":"c"})"
        << "" << K::PreTool << QStringList() << "sed -i s/world/SHELLED/ src/app.txt"
        << "c";
    QTest::newRow("codex shell as argv")
        << "codex"
        << R"({"session_id":"01","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":["bash","-lc","rm x"]}})"
        << "" << K::PreTool << QStringList() << "rm x"
        << "";
    QTest::newRow("codex Stop") << "codex"
                                << R"({"session_id":"01","hook_event_name":"Stop"})"
                                << "" << K::Stop << QStringList() << ""
                                << "";
    // Gemini CLI
    QTest::newRow("gemini write_file")
        << "gemini"
        << R"({"session_id":"85","cwd":"/p","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"/p/src/app.txt","content":"x"}})"
        << "" << K::PreTool << QStringList{"/p/src/app.txt"} << ""
        << "";
    QTest::newRow("gemini run_shell_command after")
        << "gemini"
        << R"({"session_id":"85","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"touch a"},"tool_response":{"llmContent":""}})"
        << "" << K::PostTool << QStringList() << "touch a"
        << "";
    QTest::newRow("gemini AfterAgent") << "gemini"
                                       << R"({"session_id":"85","hook_event_name":"AfterAgent"})"
                                       << "" << K::Stop << QStringList() << ""
                                       << "";
    QTest::newRow("gemini PreToolUse is not its event")
        << "gemini"
        << R"({"session_id":"85","hook_event_name":"PreToolUse","tool_name":"write_file","tool_input":{"file_path":"a"}})"
        << "" << K::Other << QStringList() << ""
        << "";
    // Copilot CLI
    QTest::newRow("copilot create")
        << "copilot"
        << R"({"sessionId":"d0","timestamp":1796616276400,"cwd":"/p","toolName":"create","toolArgs":{"path":"/p/src/new.txt","file_text":"x"}})"
        << "preToolUse" << K::PreTool << QStringList{"/p/src/new.txt"} << ""
        << "";
    QTest::newRow("copilot args as JSON text")
        << "copilot"
        << R"({"sessionId":"d0","toolName":"edit","toolArgs":"{\"path\":\"a.txt\"}"})"
        << "preToolUse" << K::PreTool << QStringList{"a.txt"} << ""
        << "";
    QTest::newRow("copilot bash failure")
        << "copilot"
        << R"({"sessionId":"d0","toolName":"bash","toolArgs":{"command":"rm a"},"toolResult":{"resultType":"failure"}})"
        << "postToolUseFailure" << K::PostTool << QStringList() << "rm a"
        << "";
    QTest::newRow("copilot agentStop") << "copilot"
                                       << R"({"sessionId":"d0","stopReason":"end_turn"})"
                                       << "agentStop" << K::Stop << QStringList() << ""
                                       << "";
    QTest::newRow("copilot event from the payload") << "copilot"
                                                    << R"({"sessionId":"d0","reason":"complete"})"
                                                    << "" << K::SessionEnd << QStringList() << ""
                                                    << "";
    QTest::newRow("copilot Claude-shaped")
        << "copilot"
        << R"({"hook_event_name":"PreToolUse","session_id":"46","tool_name":"Write","tool_input":{"path":"/p/n.txt","file_text":"x"}})"
        << "" << K::PreTool << QStringList{"/p/n.txt"} << ""
        << "";
    // Qwen Code
    QTest::newRow("qwen write_file")
        << "qwen"
        << R"({"session_id":"e8","hook_event_name":"PreToolUse","tool_name":"write_file","tool_input":{"file_path":"/p/a"},"tool_use_id":"toolu_1","tool_call_id":"call_2_0"})"
        << "" << K::PreTool << QStringList{"/p/a"} << ""
        << "toolu_1";
    QTest::newRow("qwen run_shell_command")
        << "qwen"
        << R"({"session_id":"e8","hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"mv a b","is_background":false}})"
        << "" << K::PreTool << QStringList() << "mv a b"
        << "";
    // opencode (the plugin's own event)
    QTest::newRow("opencode apply_patch")
        << "opencode"
        << R"({"hook_event_name":"tool.execute.before","session_id":"ses","call_id":"call_3_0","tool":"apply_patch","args":{"patchText":"*** Begin Patch\n*** Delete File: src/old.txt\n*** End Patch"}})"
        << "" << K::PreTool << QStringList{"src/old.txt"} << ""
        << "call_3_0";
    QTest::newRow("opencode bash after")
        << "opencode"
        << R"({"hook_event_name":"tool.execute.after","session_id":"ses","tool":"bash","args":{"command":"rm -rf build"}})"
        << "" << K::PostTool << QStringList() << "rm -rf build"
        << "";
    QTest::newRow("opencode idle") << "opencode"
                                   << R"({"hook_event_name":"session.idle","session_id":"ses"})"
                                   << "" << K::Stop << QStringList() << ""
                                   << "";
}

void TstHookDialects::eventsNameTheFilesACallChanges()
{
    QFETCH(QString, dialect);
    QFETCH(QString, event);
    QFETCH(QString, option);
    QFETCH(HookEvent::Kind, kind);
    QFETCH(QStringList, files);
    QFETCH(QString, command);
    QFETCH(QString, callId);
    const HookDialect *d = HookDialect::find(dialect);
    QVERIFY(d);
    const std::optional<HookEvent> e = d->parse(json::parse(event.toStdString()), option);
    QVERIFY(e);
    QCOMPARE(int(e->kind), int(kind));
    QCOMPARE(e->files, files);
    QCOMPARE(e->command, command);
    QCOMPARE(e->callId, callId);
    QVERIFY(!e->session.isEmpty());
}

void TstHookDialects::fieldsOfTheWrongTypeNameNothing()
{
    // The event is another program's output: any field may hold anything.
    for (const json &tool : {json{{"file_path", "a"}}, json(7), json(), json::array({"Edit"})}) {
        const json e = {{"session_id", "s"},
                        {"hook_event_name", "PreToolUse"},
                        {"tool_name", tool},
                        {"tool_input", {{"file_path", "a"}}}};
        QCOMPARE(int(claudeCodeDialect().parse(e, {})->kind), int(HookEvent::Kind::Other));
    }
    for (const json &input : {json("src/a.ts"), json{{"file_path", 3}}, json::array(), json()}) {
        const json e = {{"session_id", "s"},
                        {"hook_event_name", "PreToolUse"},
                        {"tool_name", "Edit"},
                        {"tool_input", input}};
        QCOMPARE(int(claudeCodeDialect().parse(e, {})->kind), int(HookEvent::Kind::Other));
    }
    QVERIFY(!claudeCodeDialect().parse(json::array(), {}));
    QVERIFY(!claudeCodeDialect().parse(json{{"hook_event_name", 5}}, {}));
    QVERIFY(!copilotDialect().parse(json::object(), {}));
    QVERIFY(!opencodeDialect().parse(json("x"), {}));
}

void TstHookDialects::patchHeadersNameEveryFile_data()
{
    QTest::addColumn<QString>("patch");
    QTest::addColumn<QStringList>("files");
    QTest::newRow("update") << "*** Begin Patch\n*** Update File: src/app.txt\n@@\n hello\n-world\n"
                               "+EDITED\n*** End Patch\n"
                            << QStringList{"src/app.txt"};
    QTest::newRow("add, update and move") << "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update "
                                             "File: b.txt\n*** Move to: c/d.txt\n"
                                             "@@\n-1\n+2\n*** Delete File: e.txt\n*** End Patch"
                                          << QStringList{"a.txt", "b.txt", "c/d.txt", "e.txt"};
    QTest::newRow("CRLF, spaces and repeats")
        << "*** Begin Patch\r\n*** Update File:  src/x y.txt \r\n*** Update File: src/x y.txt\r\n"
        << QStringList{"src/x y.txt"};
    QTest::newRow("hunk lines are not headers")
        << "*** Begin Patch\n*** Update File: a\n@@\n+*** Add File: fake\n-*** Delete File: no\n"
        << QStringList{"a"};
    QTest::newRow("empty header") << "*** Add File:   \n" << QStringList();
    QTest::newRow("not a patch") << "rm -rf /" << QStringList();
}

void TstHookDialects::patchHeadersNameEveryFile()
{
    QFETCH(QString, patch);
    QFETCH(QStringList, files);
    QCOMPARE(applypatch::files(patch), files);
}

void TstHookDialects::shellCommandsNameTheirPlainWrites_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QStringList>("files");
    using L = QStringList;
    QTest::newRow("redirect") << "echo hi > out.txt" << L{"out.txt"};
    QTest::newRow("append, stderr, both")
        << "make >> log 2> err &> all &>> more" << L{"log", "err", "all", "more"};
    QTest::newRow("descriptor copies are no files") << "cmd 2>&1 >&2 1>&- > /dev/null" << L();
    QTest::newRow(">& word is a file") << "cmd >&out.log" << L{"out.log"};
    QTest::newRow("tee") << "ls | tee -a listing.txt copy.txt" << L{"listing.txt", "copy.txt"};
    QTest::newRow("sed -i") << "sed -i s/world/SHELLED/ src/app.txt" << L{"src/app.txt"};
    QTest::newRow("sed -i.bak -e")
        << "sed -i.bak -e 's/a/b/' -e 's/c/d/' a.txt b.txt" << L{"a.txt", "b.txt"};
    QTest::newRow("sed --in-place=") << "sed --in-place=.orig 's/x/y/g' f" << L{"f"};
    QTest::newRow("sed -Ei cluster") << "sed -Ei 's/(a)/b/' f" << L{"f"};
    QTest::newRow("sed without -i reads") << "sed 's/a/b/' f > g" << L{"g"};
    QTest::newRow("cp") << "cp -r src/a dest/b" << L{"dest/b"};
    QTest::newRow("cp several into a folder") << "cp a b dir" << L{"dir/a", "dir/b"};
    QTest::newRow("cp -t") << "cp -t out a/x.txt y.txt" << L{"out/x.txt", "out/y.txt"};
    QTest::newRow("cp into dir/") << "cp src/x.txt backup/" << L{"backup/x.txt"};
    QTest::newRow("mv moves both ends") << "mv old.txt new.txt" << L{"old.txt", "new.txt"};
    QTest::newRow("rm") << "rm -rf build -- -weird" << L{"build", "-weird"};
    QTest::newRow("touch") << "touch -d yesterday a b" << L{"a", "b"};
    QTest::newRow("git checkout --")
        << "git checkout -- src/a.ts src/b.ts" << L{"src/a.ts", "src/b.ts"};
    QTest::newRow("git checkout BRANCH names no file") << "git checkout main" << L();
    QTest::newRow("git restore") << "git restore --source HEAD~1 a.txt" << L{"a.txt"};
    QTest::newRow("git restore --staged only") << "git restore --staged a.txt" << L();
    QTest::newRow("git -C") << "git -C sub checkout -- x" << L{"sub/x"};
    QTest::newRow("cd moves relative paths")
        << "cd src && sed -i s/a/b/ app.txt; cd .. ; touch z" << L{"src/app.txt", "z"};
    QTest::newRow("subshell cd stays inside")
        << "(cd src && touch a) && touch b" << L{"src/a", "b"};
    QTest::newRow("cd somewhere unknown") << "cd $DIR && touch a && touch /abs/b" << L{"/abs/b"};
    QTest::newRow("quotes") << R"(echo x > "my file.txt"; rm 'it''s' a\ b)"
                            << L{"my file.txt", "its", "a b"};
    QTest::newRow("variables, globs and substitutions are the gate's")
        << "echo > $OUT; rm *.o; sed -i s/a/b/ `ls`; touch {a,b}.txt; cp x \"$D\"" << L();
    QTest::newRow("command substitution")
        << "sed -i s/a/b/ $(git ls-files) && echo $(date) > c" << L{"c"};
    QTest::newRow("wrappers and assignments")
        << "LC_ALL=C sudo -u me env A=1 nice -n 5 touch f" << L{"f"};
    QTest::newRow("bash -c is read inside")
        << "bash -lc \"sed -i 's/a/b/' x.txt && echo ok > y\"" << L{"x.txt", "y"};
    QTest::newRow("here-document body is not a command")
        << "cat > out.txt <<'EOF'\nrm -rf everything\n> not/a/redirect\nEOF\ntouch after"
        << L{"out.txt", "after"};
    QTest::newRow("comments") << "touch a # rm b" << L{"a"};
    QTest::newRow("keywords") << "if true; then touch a; fi; while x; do rm b; done" << L{"a", "b"};
    QTest::newRow("process substitution") << "diff <(ls) >(tee log)" << L();
    QTest::newRow("home") << "touch ~/notes.txt" << L{QDir::homePath() + "/notes.txt"};
    QTest::newRow("reads only") << "cat a | grep b | wc -l" << L();
    QTest::newRow("unclosed quote") << "echo 'oops > x" << L();
    QTest::newRow("empty") << "" << L();
}

void TstHookDialects::shellCommandsNameTheirPlainWrites()
{
    QFETCH(QString, command);
    QFETCH(QStringList, files);
    QCOMPARE(shellwrites::files(command, [](const QString &p) { return p == "dir"; }), files);
}

void TstHookDialects::copiedIntoAFolderNamesTheFileInside()
{
    // A destination that is an existing folder (as the hook sees it on disk) gets each
    // source's name: the lease is on the file written, not on the whole folder.
    const auto isFolder = [](const QString &p) { return p == QLatin1String("sub/dest"); };
    QCOMPARE(shellwrites::files(QStringLiteral("cd sub && mv ../a.txt dest"), isFolder),
             (QStringList{QStringLiteral("sub/../a.txt"), QStringLiteral("sub/dest/a.txt")}));
    QCOMPARE(shellwrites::files(QStringLiteral("cp -T a dest"), isFolder),
             QStringList{QStringLiteral("dest")});
}

void TstHookDialects::answersAreEachAgentsOwnFormat()
{
    HookEvent pre;
    pre.kind = HookEvent::Kind::PreTool;
    pre.eventName = QStringLiteral("PreToolUse");
    auto j = [](const HookAnswer &a) { return json::parse(a.out.toStdString()); };
    QVERIFY(j(claudeCodeDialect().deny(pre, "no")) ==
            json({{"hookSpecificOutput",
                   {{"hookEventName", "PreToolUse"},
                    {"permissionDecision", "deny"},
                    {"permissionDecisionReason", "no"}}}}));
    QVERIFY(j(claudeCodeDialect().warn(pre, "careful")) == json({{"systemMessage", "careful"}}));
    HookEvent post = pre;
    post.eventName = QStringLiteral("PostToolUseFailure");
    QVERIFY(j(qwenDialect().addContext(post, "ctx")) ==
            json({{"hookSpecificOutput",
                   {{"hookEventName", "PostToolUseFailure"}, {"additionalContext", "ctx"}}}}));
    QVERIFY(j(geminiDialect().deny(pre, "no")) == json({{"decision", "deny"}, {"reason", "no"}}));
    HookEvent copilot = pre;
    copilot.eventName = QStringLiteral("preToolUse");
    QVERIFY(j(copilotDialect().deny(copilot, "no")) ==
            json({{"permissionDecision", "deny"}, {"permissionDecisionReason", "no"}}));
    QVERIFY(j(copilotDialect().addContext(copilot, "ctx")) == json({{"additionalContext", "ctx"}}));
    // Copilot denies a failing hook, so its warning exits 0 and decides nothing.
    const HookAnswer warned = copilotDialect().warn(copilot, "careful");
    QCOMPARE(warned.exitCode, 0);
    QCOMPARE(warned.out, QByteArray());
    QVERIFY(j(opencodeDialect().deny(pre, "no")) == json({{"decision", "deny"}, {"reason", "no"}}));
    QVERIFY(j(opencodeDialect().allow(pre)) == json::object());
    QCOMPARE(claudeCodeDialect().allow(pre).out, QByteArray());
}

void TstHookDialects::everyNameFindsItsDialect()
{
    for (const QString &name : HookDialect::names())
        QCOMPARE(HookDialect::find(name)->name(), name);
    QVERIFY(!HookDialect::find(QStringLiteral("cline")));
    QCOMPARE(HookDialect::names().size(), 6);
}

QTEST_APPLESS_MAIN(TstHookDialects)
#include "tst_hookdialects.moc"

// `leasehold ctl install-hooks NAME` (app/guard/hooks/hookinstall.h) for each agent, in a
// scratch project and home: the file each agent reads, written once and then left alone byte
// for byte; the user's own entries and settings kept in their order; the timeout above the wait
// in the agent's unit; no key in any file; what the user must still do printed.

#include "claudesettings.h"
#include "hookinstall.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using nlohmann::json;
using nlohmann::ordered_json;

class TstHookInstall : public QObject
{
    Q_OBJECT

private slots:
    void init();

    void secondRunChangesNothing_data();
    void secondRunChangesNothing();
    void usersOwnEntriesStayInTheirOrder();
    void timeoutsAreAboveTheWaitInTheAgentsUnit();
    void anotherWaitUpdatesTheEntriesInPlace();
    void userConfigurationGoesToTheHome();
    void opencodePluginIsOnlyReplacedWhenOurs();
    void unreadableFilesAreLeftAlone();
    void leaseholdHooksAreRecognised_data();
    void leaseholdHooksAreRecognised();

private:
    hookinstall::Request request(const QString &agent) const
    {
        hookinstall::Request r;
        r.agent = agent;
        r.projectDir = project.path();
        r.program = QStringLiteral("/opt/lease hold/leasehold"); // a path that needs quoting
        r.flags = {QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:7878")};
        r.waitSeconds = 20;
        r.home = home.path();
        return r;
    }
    static QByteArray read(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    static void write(const QString &path, const QByteArray &bytes)
    {
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }

    QTemporaryDir project;
    QTemporaryDir home;
};

void TstHookInstall::init()
{
    // The user's configuration is found through these when set; the test's is below `home`.
    qunsetenv("XDG_CONFIG_HOME");
    qunsetenv("CODEX_HOME");
    QVERIFY(project.isValid() && home.isValid());
    QDir(project.path()).removeRecursively();
    QDir(home.path()).removeRecursively();
    QDir().mkpath(project.path());
    QDir().mkpath(home.path());
}

void TstHookInstall::secondRunChangesNothing_data()
{
    QTest::addColumn<QString>("agent");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("todo"); // printed: what the user must still do
    QTest::newRow("claude-code") << "claude-code"
                                 << ".claude/settings.json"
                                 << "LEASEHOLD_KEY";
    QTest::newRow("codex") << "codex"
                           << ".codex/hooks.json"
                           << "trust the Leasehold hooks";
    QTest::newRow("gemini") << "gemini"
                            << ".gemini/settings.json"
                            << "trusted folder";
    QTest::newRow("copilot") << "copilot"
                             << ".github/hooks/leasehold.json"
                             << "--trust-folder";
    QTest::newRow("qwen") << "qwen"
                          << ".qwen/settings.json"
                          << "LEASEHOLD_KEY";
    QTest::newRow("opencode") << "opencode"
                              << ".opencode/plugins/leasehold.js"
                              << "next starts";
}

void TstHookInstall::secondRunChangesNothing()
{
    QFETCH(QString, agent);
    QFETCH(QString, file);
    QFETCH(QString, todo);
    const hookinstall::Result first = hookinstall::install(request(agent));
    QCOMPARE(first.exitCode, 0);
    QVERIFY2(first.out.contains(todo), qPrintable(first.out));
    const QString path = QDir(project.path()).filePath(file);
    const QByteArray once = read(path);
    QVERIFY2(once.contains("leasehold' hook " + agent.toUtf8()) ||
                 once.contains("\"hook\",\"" + agent.toUtf8()),
             once.constData());
    QVERIFY(!once.contains("LEASEHOLD_KEY")); // the key never goes into a file
    const QDateTime modified = QFileInfo(path).lastModified();
    const hookinstall::Result second = hookinstall::install(request(agent));
    QCOMPARE(second.exitCode, 0);
    QVERIFY2(second.out.contains(QStringLiteral("up to date")), qPrintable(second.out));
    QCOMPARE(read(path), once);
    QCOMPARE(QFileInfo(path).lastModified(), modified); // not even rewritten
}

void TstHookInstall::usersOwnEntriesStayInTheirOrder()
{
    const QString path = QDir(project.path()).filePath(QStringLiteral(".claude/settings.json"));
    write(path, R"({
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "notify"}]}]
  },
  "permissions": {"allow": ["Read"]}
})");
    QCOMPARE(hookinstall::install(request(QStringLiteral("claude-code"))).exitCode, 0);
    const ordered_json s = ordered_json::parse(read(path).toStdString());
    std::vector<std::string> keys;
    for (const auto &[k, v] : s.items())
        keys.push_back(k);
    QCOMPARE(keys, (std::vector<std::string>{"model", "hooks", "permissions"}));
    const ordered_json &pre = s["hooks"]["PreToolUse"];
    QCOMPARE(pre.size(), 2u);
    QCOMPARE(pre[0]["hooks"][0]["command"].get<std::string>(), std::string("./check.sh"));
    QCOMPARE(pre[1]["matcher"].get<std::string>(),
             std::string("Edit|Write|MultiEdit|NotebookEdit|Bash"));
    QCOMPARE(pre[1]["hooks"][0]["command"].get<std::string>(),
             std::string("'/opt/lease hold/leasehold' hook claude-code --wait 20 --url "
                         "http://127.0.0.1:7878"));
    QCOMPARE(s["hooks"]["Notification"].size(), 1u);
    for (const char *event : {"PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"})
        QVERIFY2(s["hooks"].contains(event), event);
}

void TstHookInstall::timeoutsAreAboveTheWaitInTheAgentsUnit()
{
    for (const char *agent : {"claude-code", "codex", "gemini", "copilot", "qwen", "opencode"})
        QCOMPARE(hookinstall::install(request(QLatin1String(agent))).exitCode, 0);
    auto jsonAt = [&](const char *file) {
        return json::parse(read(QDir(project.path()).filePath(QLatin1String(file))).toStdString());
    };
    const int seconds = 20 + hookinstall::kTimeoutMarginSeconds;
    QVERIFY(jsonAt(".claude/settings.json")["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] ==
            seconds);
    QVERIFY(jsonAt(".qwen/settings.json")["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] ==
            seconds);
    QVERIFY(jsonAt(".codex/hooks.json")["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] ==
            seconds);
    const json gemini = jsonAt(".gemini/settings.json")["hooks"]["BeforeTool"][0]["hooks"][0];
    QVERIFY(gemini["timeout"] == seconds * 1000); // milliseconds
    QVERIFY(gemini["name"] == "leasehold-pre");
    const json copilot = jsonAt(".github/hooks/leasehold.json");
    QVERIFY(copilot["version"] == 1);
    QVERIFY(copilot["hooks"]["preToolUse"][0]["timeoutSec"] == seconds);
    QVERIFY(copilot["hooks"]["preToolUse"][0]["bash"].get<std::string>().find(
                "--event preToolUse") != std::string::npos);
    QVERIFY(copilot["hooks"]["agentStop"][0]["bash"].get<std::string>().find("--event agentStop") !=
            std::string::npos);
    const QByteArray plugin =
        read(QDir(project.path()).filePath(QStringLiteral(".opencode/plugins/leasehold.js")));
    QVERIFY(plugin.contains("const LIMIT_MS = 30000")); // the hook answers within 25 s
    QVERIFY(plugin.contains("[\"/opt/lease hold/leasehold\",\"hook\",\"opencode\",\"--wait\","
                            "\"20\",\"--url\",\"http://127.0.0.1:7878\"]"));
}

void TstHookInstall::anotherWaitUpdatesTheEntriesInPlace()
{
    QCOMPARE(hookinstall::install(request(QStringLiteral("codex"))).exitCode, 0);
    hookinstall::Request r = request(QStringLiteral("codex"));
    r.waitSeconds = 5;
    const hookinstall::Result again = hookinstall::install(r);
    QVERIFY2(again.out.contains(QStringLiteral("4 hook entries")), qPrintable(again.out));
    const json s = json::parse(
        read(QDir(project.path()).filePath(QStringLiteral(".codex/hooks.json"))).toStdString());
    QCOMPARE(s["hooks"]["PreToolUse"].size(), 1u); // updated, not added twice
    QVERIFY(s["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] == 20);
    r.waitSeconds = 31;
    QCOMPARE(hookinstall::install(r).exitCode, 2);
}

void TstHookInstall::userConfigurationGoesToTheHome()
{
    for (const auto &[agent, file] : std::vector<std::pair<QString, QString>>{
             {"claude-code", ".claude/settings.json"},
             {"copilot", ".copilot/hooks/leasehold.json"},
             {"opencode", ".config/opencode/plugins/leasehold.js"}}) {
        hookinstall::Request r = request(agent);
        r.user = true;
        const hookinstall::Result result = hookinstall::install(r);
        QCOMPARE(result.exitCode, 0);
        QVERIFY2(QFileInfo::exists(QDir(home.path()).filePath(file)), qPrintable(file));
    }
    QVERIFY(QDir(project.path()).isEmpty());
}

void TstHookInstall::opencodePluginIsOnlyReplacedWhenOurs()
{
    const QString path =
        QDir(project.path()).filePath(QStringLiteral(".opencode/plugins/leasehold.js"));
    write(path, "export const Mine = async () => ({})\n");
    const hookinstall::Result refused = hookinstall::install(request(QStringLiteral("opencode")));
    QCOMPARE(refused.exitCode, 1);
    QVERIFY(refused.err.contains(QStringLiteral("not Leasehold's plugin")));
    QCOMPARE(read(path), QByteArray("export const Mine = async () => ({})\n"));
    QFile::remove(path);
    QCOMPARE(hookinstall::install(request(QStringLiteral("opencode"))).exitCode, 0);
    hookinstall::Request r = request(QStringLiteral("opencode"));
    r.waitSeconds = 3;
    QCOMPARE(hookinstall::install(r).exitCode, 0);
    QVERIFY(read(path).contains("\"--wait\",\"3\""));
}

void TstHookInstall::unreadableFilesAreLeftAlone()
{
    const QString path = QDir(project.path()).filePath(QStringLiteral(".gemini/settings.json"));
    for (const QByteArray &bad : {QByteArray("{ not json"), QByteArray("[1, 2]"),
                                  QByteArray(R"({"hooks": {"BeforeTool": {}}})")}) {
        write(path, bad);
        const hookinstall::Result r = hookinstall::install(request(QStringLiteral("gemini")));
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("left as it is")), qPrintable(r.err));
        QCOMPARE(read(path), bad);
    }
    QCOMPARE(hookinstall::install(request(QStringLiteral("cline"))).exitCode, 2);
}

void TstHookInstall::leaseholdHooksAreRecognised_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<bool>("ours");
    QTest::newRow("plain") << "leasehold hook codex" << true;
    QTest::newRow("path and flags") << "/usr/bin/leasehold hook codex --wait 5" << true;
    QTest::newRow("quoted path") << "'/opt/lease hold/leasehold' hook codex" << true;
    QTest::newRow("another agent") << "leasehold hook gemini" << false;
    QTest::newRow("another program") << "./check.sh leasehold hook codex" << false;
    QTest::newRow("a guard") << "leasehold guard mcp" << false;
    QTest::newRow("prefix of a name") << "leasehold hook codexx" << false;
}

void TstHookInstall::leaseholdHooksAreRecognised()
{
    QFETCH(QString, command);
    QFETCH(bool, ours);
    QCOMPARE(claudesettings::isLeaseholdHook(command.toStdString(), "codex"), ours);
}

QTEST_APPLESS_MAIN(TstHookInstall)
#include "tst_hookinstall.moc"

#include "hookinstall.h"

#include "claudesettings.h"
#include "hookdialect.h"
#include "opencodeplugin.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>

using claudesettings::Json;

namespace hookinstall {

namespace {

QString quoted(const QString &word)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:=@%+,-]+$"));
    if (plain.match(word).hasMatch())
        return word;
    QString w = word;
    return QLatin1Char('\'') + w.replace(QLatin1Char('\''), QStringLiteral("'\\''")) +
           QLatin1Char('\'');
}

// The hook's arguments after the program: hook NAME --wait N [flags] [extra].
QStringList hookArguments(const Request &r, const QStringList &extra = {})
{
    return QStringList{QStringLiteral("hook"), r.agent, QStringLiteral("--wait"),
                       QString::number(r.waitSeconds)} +
           r.flags + extra;
}

QString commandLine(const Request &r, const QStringList &extra = {})
{
    QStringList words{quoted(r.program)};
    for (const QString &a : hookArguments(r, extra))
        words << quoted(a);
    return words.join(QLatin1Char(' '));
}

struct Config
{
    QString path;
    QString folder; // what a person trusts: the project, or the user's home
};

Config configOf(const Request &r)
{
    const QString home = r.home.isEmpty() ? QDir::homePath() : r.home;
    const QString project =
        QDir(r.projectDir.isEmpty() ? QDir::currentPath() : r.projectDir).absolutePath();
    const QString base = r.user ? home : project;
    auto at = [&](const QString &relative) { return Config{QDir(base).filePath(relative), base}; };
    if (r.agent == QLatin1String("claude-code"))
        return at(QStringLiteral(".claude/settings.json"));
    if (r.agent == QLatin1String("qwen"))
        return at(QStringLiteral(".qwen/settings.json"));
    if (r.agent == QLatin1String("gemini"))
        return at(QStringLiteral(".gemini/settings.json"));
    if (r.agent == QLatin1String("codex")) {
        const QString codexHome = qEnvironmentVariable("CODEX_HOME");
        if (r.user && !codexHome.isEmpty())
            return {QDir(codexHome).filePath(QStringLiteral("hooks.json")), base};
        return at(QStringLiteral(".codex/hooks.json"));
    }
    if (r.agent == QLatin1String("copilot"))
        return at(r.user ? QStringLiteral(".copilot/hooks/leasehold.json")
                         : QStringLiteral(".github/hooks/leasehold.json"));
    // opencode
    const QString xdg = qEnvironmentVariable("XDG_CONFIG_HOME");
    if (r.user && !xdg.isEmpty())
        return {QDir(xdg).filePath(QStringLiteral("opencode/plugins/leasehold.js")), base};
    return at(r.user ? QStringLiteral(".config/opencode/plugins/leasehold.js")
                     : QStringLiteral(".opencode/plugins/leasehold.js"));
}

// The file's bytes; `exists` false when there is none. False when it cannot be read.
bool readFile(const QString &path, QByteArray *bytes, bool *exists, Result *result)
{
    QFile file(path);
    *exists = file.exists();
    if (!*exists)
        return true;
    if (!file.open(QIODevice::ReadOnly)) {
        *result = {
            1, {}, QStringLiteral("leasehold: cannot read %1: %2\n").arg(path, file.errorString())};
        return false;
    }
    *bytes = file.readAll();
    return true;
}

bool writeFile(const QString &path, const QByteArray &bytes, Result *result)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(bytes) < 0 || !out.commit()) {
        *result = {
            1, {}, QStringLiteral("leasehold: cannot write %1: %2\n").arg(path, out.errorString())};
        return false;
    }
    return true;
}

QByteArray jsonText(const Json &value)
{
    return QByteArray::fromStdString(value.dump(2)) + '\n';
}

// Copilot CLI's hooks file: {"version": 1, "hooks": {"<event>": [{"type", "bash", ...}]}}.
Json mergeCopilot(Json file, const Request &r, int timeoutSec, int *changed, QString *error)
{
    *changed = 0;
    if (file.is_null())
        file = Json::object();
    if (!file.is_object() || (file.contains("hooks") && !file["hooks"].is_object())) {
        *error = QStringLiteral("the hooks file is not an object with a \"hooks\" object");
        return file;
    }
    if (!file.contains("version"))
        file["version"] = 1;
    Json &hooks = file["hooks"];
    if (hooks.is_null())
        hooks = Json::object();
    for (const char *event :
         {"preToolUse", "postToolUse", "postToolUseFailure", "agentStop", "sessionEnd"}) {
        Json &list = hooks[event];
        if (list.is_null())
            list = Json::array();
        if (!list.is_array()) {
            *error = QStringLiteral("\"hooks.%1\" in the hooks file is not an array")
                         .arg(QLatin1String(event));
            return file;
        }
        Json *hook = nullptr;
        for (Json &h : list) {
            if (!hook && h.is_object() && h.value("bash", Json()).is_string() &&
                claudesettings::isLeaseholdHook(h["bash"].get<std::string>(), "copilot"))
                hook = &h;
        }
        const Json before = hook ? *hook : Json();
        if (!hook) {
            list.push_back(Json::object());
            hook = &list.back();
        }
        (*hook)["type"] = "command";
        (*hook)["bash"] =
            commandLine(r, {QStringLiteral("--event"), QLatin1String(event)}).toStdString();
        if (QLatin1String(event) == QLatin1String("preToolUse"))
            (*hook)["timeoutSec"] = timeoutSec;
        *changed += *hook != before ? 1 : 0;
    }
    return file;
}

std::vector<claudesettings::Entry> entriesOf(const QString &agent, int timeout)
{
    if (agent == QLatin1String("claude-code")) {
        const char *tools = "Edit|Write|MultiEdit|NotebookEdit|Bash";
        return {{"PreToolUse", tools, timeout},
                {"PostToolUse", tools},
                {"PostToolUseFailure", "Bash"},
                {"Stop", nullptr},
                {"SessionEnd", nullptr}};
    }
    if (agent == QLatin1String("qwen")) {
        const char *tools = "edit|write_file|notebook_edit|run_shell_command";
        return {{"PreToolUse", tools, timeout},
                {"PostToolUse", tools},
                {"PostToolUseFailure", "run_shell_command"},
                {"Stop", nullptr},
                {"SessionEnd", nullptr}};
    }
    if (agent == QLatin1String("codex")) {
        const char *tools = "^(apply_patch|Edit|Write|Bash)$";
        return {{"PreToolUse", tools, timeout},
                {"PostToolUse", tools},
                {"Stop", nullptr},
                {"SessionEnd", nullptr}};
    }
    // gemini: milliseconds, and every hook is named
    const char *tools = "^(write_file|replace|run_shell_command)$";
    return {{"BeforeTool", tools, timeout * 1000, "leasehold-pre"},
            {"AfterTool", tools, 0, "leasehold-post"},
            {"AfterAgent", nullptr, 0, "leasehold-stop"},
            {"SessionEnd", nullptr, 0, "leasehold-end"}};
}

QString stillToDo(const Request &r, const Config &c)
{
    QString s = QStringLiteral("Still to do:\n");
    if (r.agent == QLatin1String("codex")) {
        s += r.user
                 ? QStringLiteral("  - Codex runs hooks only once you trust them: start `codex`, "
                                  "review the Leasehold hooks when it asks and trust them "
                                  "(a `codex exec` run without that needs "
                                  "--dangerously-bypass-hook-trust).\n")
                 : QStringLiteral("  - Codex loads a project's hooks only in a trusted project "
                                  "and runs them only once you trust them: start `codex` in "
                                  "%1, trust the project, then review and trust the Leasehold "
                                  "hooks when it asks (a `codex exec` run without that needs "
                                  "--dangerously-bypass-hook-trust).\n")
                       .arg(c.folder);
    } else if (r.agent == QLatin1String("gemini")) {
        s += QStringLiteral("  - Gemini CLI runs only in a trusted folder: trust %1 when it asks "
                            "(or /permissions trust), or run it with "
                            "GEMINI_CLI_TRUST_WORKSPACE=true.\n")
                 .arg(r.user ? QStringLiteral("each project") : c.folder);
    } else if (r.agent == QLatin1String("copilot") && !r.user) {
        s += QStringLiteral("  - Copilot CLI runs a repository's hooks only in a trusted folder: "
                            "trust %1 when it asks, or pass --trust-folder (copilot -p needs "
                            "it).\n")
                 .arg(c.folder);
    } else if (r.agent == QLatin1String("opencode")) {
        s += QStringLiteral("  - opencode loads the plugin when it next starts.\n");
    }
    s += QStringLiteral("  - Start the agent with its key in its environment: "
                        "LEASEHOLD_KEY=<the agent's key> (never in a file others share; on an "
                        "--open instance LEASEHOLD_AGENT=did:agent:NAME, or nothing: each session "
                        "is then an agent of its own).\n");
    return s;
}

} // namespace

QString programFor(const QString &binary)
{
    const QString found = QStandardPaths::findExecutable(QStringLiteral("leasehold"));
    if (!found.isEmpty() &&
        QFileInfo(found).canonicalFilePath() == QFileInfo(binary).canonicalFilePath())
        return QStringLiteral("leasehold");
    return QFileInfo(binary).absoluteFilePath();
}

Result install(const Request &r)
{
    if (!HookDialect::names().contains(r.agent))
        return {2,
                {},
                QStringLiteral("leasehold ctl: install-hooks knows %1 (not %2)\n")
                    .arg(HookDialect::names().join(QStringLiteral(", ")), r.agent)};
    if (r.waitSeconds < 0 || r.waitSeconds > kMaxWaitSeconds)
        return {
            2,
            {},
            QStringLiteral("leasehold ctl: --wait must be 0 to %1 seconds\n").arg(kMaxWaitSeconds)};
    const Config config = configOf(r);
    const int timeout = r.waitSeconds + kTimeoutMarginSeconds;
    Result result;
    QByteArray before;
    bool exists = false;
    if (!readFile(config.path, &before, &exists, &result))
        return result;

    QByteArray after;
    int changed = 0;
    if (r.agent == QLatin1String("opencode")) {
        if (exists && !opencodeplugin::isOurs(before))
            return {1,
                    {},
                    QStringLiteral("leasehold: %1 is not Leasehold's plugin; left as it is\n")
                        .arg(config.path)};
        after =
            opencodeplugin::source(QStringList{r.program} + hookArguments(r), (timeout - 5) * 1000);
        changed = after != before ? 1 : 0;
    } else {
        Json file = Json::object();
        if (exists && !before.trimmed().isEmpty()) {
            file = Json::parse(before.begin(), before.end(), nullptr, false);
            if (file.is_discarded())
                return {
                    1,
                    {},
                    QStringLiteral("leasehold: %1 is not JSON; left as it is\n").arg(config.path)};
        }
        QString error;
        if (r.agent == QLatin1String("copilot")) {
            file = mergeCopilot(std::move(file), r, timeout, &changed, &error);
        } else {
            claudesettings::Wanted wanted{entriesOf(r.agent, timeout), commandLine(r).toStdString(),
                                          r.agent.toStdString()};
            file = claudesettings::merge(std::move(file), wanted, &changed, &error);
        }
        if (!error.isEmpty())
            return {1,
                    {},
                    QStringLiteral("leasehold: %1: %2; left as it is\n").arg(config.path, error)};
        after = jsonText(file);
    }

    const QString command = commandLine(r);
    if (changed == 0 && exists) {
        result.out = QStringLiteral("%1: up to date (runs `%2`)\n").arg(config.path, command) +
                     stillToDo(r, config);
        return result;
    }
    if (!writeFile(config.path, after, &result))
        return result;
    result.out = r.agent == QLatin1String("opencode")
                     ? QStringLiteral("%1: written; it runs `%2`\n").arg(config.path, command)
                     : QStringLiteral("%1: %2 hook entr%3 added or updated, running `%4`\n")
                           .arg(config.path)
                           .arg(changed)
                           .arg(changed == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
                           .arg(command);
    result.out += QStringLiteral("A held file makes the agent's edit wait up to %1 s for it; the "
                                 "agent gives the hook %2 s.\n")
                      .arg(r.waitSeconds)
                      .arg(timeout);
    result.out += stillToDo(r, config);
    return result;
}

} // namespace hookinstall

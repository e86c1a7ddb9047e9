// Copilot CLI: hooks in .github/hooks/*.json (or ~/.copilot/hooks/). Its own payload is
// camelCase and does not name the event, so the installed command says which it is
// (`--event preToolUse`): {sessionId, timestamp, cwd, toolName, toolArgs, toolResult}, toolArgs
// an object or its JSON text. Tools: edit, create (path) and bash (command). A file written
// with PascalCase keys gets Claude Code's payload instead (hook_event_name, tool_name mapped to
// Edit/Write/Bash, tool_input with Copilot's own argument names): read too.
//
// Copilot denies a call whose hook exits non-zero or crashes, and drops an exit-2 reason, so
// every answer exits 0 and a denial is {"permissionDecision": "deny",
// "permissionDecisionReason"}; a warning goes to stderr only (Copilot shows no message of a
// hook's); context is {"additionalContext"} (postToolUse and postToolUseFailure).

#include "claudecodehook.h"
#include "dialects.h"

using nlohmann::json;

namespace {

bool isEdit(const QString &tool)
{
    for (const char *t : {"edit", "create", "Edit", "Write"}) {
        if (tool == QLatin1String(t))
            return true;
    }
    return false;
}

bool isShell(const QString &tool)
{
    return tool == QLatin1String("bash") || tool == QLatin1String("Bash");
}

// What the payload says of the event, when the command line did not.
QString inferredEvent(const json &input)
{
    if (input.contains("toolResult"))
        return QStringLiteral("postToolUse");
    if (input.contains("toolName"))
        return QStringLiteral("preToolUse");
    if (input.contains("stopReason"))
        return QStringLiteral("agentStop");
    if (input.contains("reason"))
        return QStringLiteral("sessionEnd");
    return {};
}

class CopilotDialect : public HookDialect
{
public:
    QString name() const override { return QStringLiteral("copilot"); }

    std::optional<HookEvent> parse(const json &input, const QString &eventName) const override
    {
        if (!input.is_object())
            return std::nullopt;
        HookEvent e;
        const QString claudeName = hookjson::text(input, "hook_event_name");
        e.eventName = !claudeName.isEmpty()  ? claudeName
                      : !eventName.isEmpty() ? eventName
                                             : inferredEvent(input);
        if (e.eventName.isEmpty())
            return std::nullopt;
        e.session = hookjson::firstText(input, {"sessionId", "session_id"});
        e.cwd = hookjson::text(input, "cwd");
        // Native names and Claude Code's, compared without case.
        const QString event = e.eventName.toLower();
        if (event == QLatin1String("agentstop") || event == QLatin1String("stop")) {
            e.kind = HookEvent::Kind::Stop;
            return e;
        }
        if (event == QLatin1String("sessionend")) {
            e.kind = HookEvent::Kind::SessionEnd;
            return e;
        }
        const bool pre = event == QLatin1String("pretooluse");
        const bool failure = event == QLatin1String("posttoolusefailure");
        if (!pre && !failure && event != QLatin1String("posttooluse"))
            return e;
        e.tool = hookjson::firstText(input, {"toolName", "tool_name"});
        json args =
            input.contains("toolArgs") ? input["toolArgs"] : hookjson::object(input, "tool_input");
        if (args.is_string()) { // older releases pass the arguments as JSON text
            const std::string raw = args.get<std::string>();
            args = json::parse(raw, nullptr, false);
        }
        if (!args.is_object())
            args = json::object();
        if (isEdit(e.tool)) {
            const QString path = hookjson::firstText(args, {"path", "file_path", "filePath"});
            if (!path.isEmpty())
                e.files << path;
        } else if (isShell(e.tool) && args.contains("command")) {
            e.command = hookjson::command(args["command"]);
        }
        e.files.removeIf([](const QString &f) { return f.contains(QChar(0)); }); // no file's name
        if (e.files.isEmpty() && e.command.isEmpty())
            return e;
        e.kind = pre ? HookEvent::Kind::PreTool : HookEvent::Kind::PostTool;
        e.failed = failure;
        e.fingerprint = e.tool + QLatin1Char(' ') + hookjson::fingerprint(args);
        return e;
    }

    QStringList projectDirVariables() const override
    {
        return {QStringLiteral("COPILOT_PROJECT_DIR"), QStringLiteral("CLAUDE_PROJECT_DIR")};
    }

    HookAnswer deny(const HookEvent &event, const QString &reason) const override
    {
        if (claudeShaped(event))
            return claudeCodeDialect().deny(event, reason);
        return {0,
                hookjson::line({{"permissionDecision", "deny"},
                                {"permissionDecisionReason", reason.toStdString()}}),
                {}};
    }

    HookAnswer warn(const HookEvent &, const QString &message) const override
    {
        return {0, {}, message.toUtf8() + '\n'};
    }

    HookAnswer addContext(const HookEvent &event, const QString &text) const override
    {
        if (claudeShaped(event))
            return claudeCodeDialect().addContext(event, text);
        return {0, hookjson::line({{"additionalContext", text.toStdString()}}), {}};
    }

private:
    // Events of a hooks file written with Claude Code's (PascalCase) keys.
    static bool claudeShaped(const HookEvent &event)
    {
        return !event.eventName.isEmpty() && event.eventName.front().isUpper();
    }
};

} // namespace

const HookDialect &copilotDialect()
{
    static const CopilotDialect dialect;
    return dialect;
}

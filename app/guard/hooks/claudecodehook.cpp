#include "claudecodehook.h"

#include "applypatch.h"
#include "dialects.h"

using nlohmann::json;

// ClaudeStyleDialect: the shared reader of Claude Code, Qwen Code, Codex and Gemini CLI.

namespace {

bool named(const char *wanted, const QString &name)
{
    return wanted && *wanted && name == QLatin1String(wanted);
}

const ClaudeStyleDialect::ToolFields *
findTool(const std::vector<ClaudeStyleDialect::ToolFields> &tools, const QString &name)
{
    for (const ClaudeStyleDialect::ToolFields &t : tools) {
        if (name == QLatin1String(t.tool))
            return &t;
    }
    return nullptr;
}

QString firstOf(const json &input, const std::vector<const char *> &fields)
{
    for (const char *field : fields) {
        QString value = hookjson::text(input, field);
        if (!value.isEmpty())
            return value;
    }
    return {};
}

} // namespace

std::optional<HookEvent> ClaudeStyleDialect::parse(const json &input,
                                                   const QString &eventName) const
{
    if (!input.is_object())
        return std::nullopt;
    HookEvent e;
    e.eventName = hookjson::text(input, "hook_event_name");
    if (e.eventName.isEmpty())
        e.eventName = eventName;
    if (e.eventName.isEmpty())
        return std::nullopt;
    e.session = hookjson::text(input, "session_id");
    e.cwd = hookjson::text(input, "cwd");
    const Table &t = m_table;
    if (named(t.stop, e.eventName)) {
        e.kind = HookEvent::Kind::Stop;
        return e;
    }
    if (named(t.end, e.eventName)) {
        e.kind = HookEvent::Kind::SessionEnd;
        return e;
    }
    const bool pre = named(t.pre, e.eventName);
    const bool postFailure = named(t.postFailure, e.eventName);
    if (!pre && !postFailure && !named(t.post, e.eventName))
        return e; // Kind::Other: a session start, a prompt, ...
    e.tool = hookjson::text(input, "tool_name");
    const json &args = hookjson::object(input, "tool_input");
    for (const char *field : t.callIdFields) {
        e.callId = hookjson::text(input, field);
        if (!e.callId.isEmpty())
            break;
    }
    if (const ToolFields *edit = findTool(t.edits, e.tool)) {
        const QString path = firstOf(args, edit->fields);
        if (!path.isEmpty())
            e.files << path;
    } else if (const ToolFields *patch = findTool(t.patches, e.tool)) {
        for (const char *field : patch->fields) {
            e.files = applypatch::files(hookjson::text(args, field));
            if (!e.files.isEmpty())
                break;
        }
    } else if (const ToolFields *shell = findTool(t.shells, e.tool)) {
        for (const char *field : shell->fields) {
            if (args.is_object() && args.contains(field))
                e.command = hookjson::command(args[field]);
            if (!e.command.isEmpty())
                break;
        }
    }
    e.files.removeIf([](const QString &f) { return f.contains(QChar(0)); }); // no file's name
    if (e.files.isEmpty() && e.command.isEmpty())
        return e; // a tool that changes no file the hook can name: Other
    e.kind = pre ? HookEvent::Kind::PreTool : HookEvent::Kind::PostTool;
    e.failed = postFailure;
    e.durationMs = hookjson::number(input, "duration_ms");
    e.fingerprint = e.tool + QLatin1Char(' ') + hookjson::fingerprint(args);
    return e;
}

QStringList ClaudeStyleDialect::projectDirVariables() const
{
    QStringList out;
    for (const char *v : m_table.projectDirVariables)
        out << QLatin1String(v);
    return out;
}

HookAnswer ClaudeStyleDialect::deny(const HookEvent &event, const QString &reason) const
{
    return {0,
            hookjson::line({{"hookSpecificOutput",
                             {{"hookEventName", event.eventName.toStdString()},
                              {"permissionDecision", "deny"},
                              {"permissionDecisionReason", reason.toStdString()}}}}),
            {}};
}

HookAnswer ClaudeStyleDialect::warn(const HookEvent &, const QString &message) const
{
    return {0, hookjson::line({{"systemMessage", message.toStdString()}}), message.toUtf8() + '\n'};
}

HookAnswer ClaudeStyleDialect::addContext(const HookEvent &event, const QString &text) const
{
    return {0,
            hookjson::line({{"hookSpecificOutput",
                             {{"hookEventName", event.eventName.toStdString()},
                              {"additionalContext", text.toStdString()}}}}),
            {}};
}

const HookDialect &claudeCodeDialect()
{
    static const ClaudeStyleDialect dialect({
        .name = "claude-code",
        .edits = {{"Edit", {"file_path"}},
                  {"Write", {"file_path"}},
                  {"MultiEdit", {"file_path"}},
                  {"NotebookEdit", {"notebook_path", "file_path"}}},
        .patches = {},
        .shells = {{"Bash", {"command"}}},
        .pre = "PreToolUse",
        .post = "PostToolUse",
        .postFailure = "PostToolUseFailure",
        .stop = "Stop",
        .end = "SessionEnd",
        .projectDirVariables = {"CLAUDE_PROJECT_DIR"},
        .callIdFields = {"tool_use_id"},
    });
    return dialect;
}

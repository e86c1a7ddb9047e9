// opencode: its hooks are a JavaScript plugin (.opencode/plugins/leasehold.js, written by
// `leasehold ctl install-hooks opencode`, opencodeplugin.cpp) that awaits `leasehold hook
// opencode` with one JSON object on stdin per event, of the plugin's own making:
//   {"hook_event_name": "tool.execute.before" | "tool.execute.after" | "session.idle",
//    "session_id": the root session (a sub-agent's calls carry its parent's), "call_id",
//    "tool", "args", "cwd"}
// Tools: edit, write, multiedit (filePath), apply_patch and patch (patchText), bash (command).
// The answer is one JSON object: {"decision": "deny", "reason"} (the plugin throws the reason,
// which the model reads as the tool's error), {"warning"} (printed), {"context"} (appended to
// the tool's output), or {} (go ahead).

#include "applypatch.h"
#include "dialects.h"

using nlohmann::json;

namespace {

class OpencodeDialect : public HookDialect
{
public:
    QString name() const override { return QStringLiteral("opencode"); }

    std::optional<HookEvent> parse(const json &input, const QString &eventName) const override
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
        if (e.eventName == QLatin1String("session.idle")) {
            e.kind = HookEvent::Kind::Stop;
            return e;
        }
        if (e.eventName == QLatin1String("session.deleted")) {
            e.kind = HookEvent::Kind::SessionEnd;
            return e;
        }
        const bool pre = e.eventName == QLatin1String("tool.execute.before");
        if (!pre && e.eventName != QLatin1String("tool.execute.after"))
            return e;
        e.tool = hookjson::text(input, "tool");
        e.callId = hookjson::text(input, "call_id");
        const json &args = hookjson::object(input, "args");
        if (e.tool == QLatin1String("edit") || e.tool == QLatin1String("write") ||
            e.tool == QLatin1String("multiedit")) {
            const QString path = hookjson::firstText(args, {"filePath", "file_path", "path"});
            if (!path.isEmpty())
                e.files << path;
        } else if (e.tool == QLatin1String("apply_patch") || e.tool == QLatin1String("patch")) {
            e.files = applypatch::files(hookjson::firstText(args, {"patchText", "patch"}));
        } else if (e.tool == QLatin1String("bash") && args.contains("command")) {
            e.command = hookjson::command(args["command"]);
        }
        e.files.removeIf([](const QString &f) { return f.contains(QChar(0)); }); // no file's name
        if (e.files.isEmpty() && e.command.isEmpty())
            return e;
        e.kind = pre ? HookEvent::Kind::PreTool : HookEvent::Kind::PostTool;
        e.failed = input.value("failed", json()).is_boolean() && input["failed"].get<bool>();
        e.fingerprint = e.tool + QLatin1Char(' ') + hookjson::fingerprint(args);
        return e;
    }

    QStringList projectDirVariables() const override { return {}; }

    HookAnswer deny(const HookEvent &, const QString &reason) const override
    {
        return {0, hookjson::line({{"decision", "deny"}, {"reason", reason.toStdString()}}), {}};
    }
    HookAnswer warn(const HookEvent &, const QString &message) const override
    {
        return {0, hookjson::line({{"warning", message.toStdString()}}), {}};
    }
    HookAnswer addContext(const HookEvent &, const QString &text) const override
    {
        return {0, hookjson::line({{"context", text.toStdString()}}), {}};
    }
    HookAnswer allow(const HookEvent &) const override { return {0, "{}\n", {}}; }
};

} // namespace

const HookDialect &opencodeDialect()
{
    static const OpencodeDialect dialect;
    return dialect;
}

#include "claudecodehook.h"

#include "workspacepaths.h"

#include <QRegularExpression>

using nlohmann::json;

namespace {

const QString kBase = QLatin1String(ServiceClient::kBase);

// A field's text, or nothing when the field is missing or is not a string: the event comes
// from another program, and any field may hold anything.
QString text(const json &object, const char *field)
{
    if (!object.is_object() || !object.contains(field) || !object[field].is_string())
        return {};
    return QString::fromStdString(object[field].get<std::string>());
}

bool editsFiles(const QString &tool)
{
    return tool == QLatin1String("Edit") || tool == QLatin1String("Write") ||
           tool == QLatin1String("MultiEdit") || tool == QLatin1String("NotebookEdit");
}

QByteArray deny(const QString &reason)
{
    const json out = {{"hookSpecificOutput",
                       {{"hookEventName", "PreToolUse"},
                        {"permissionDecision", "deny"},
                        {"permissionDecisionReason", reason.toStdString()}}}};
    return QByteArray::fromStdString(out.dump()) + '\n';
}

QByteArray warn(const QString &message)
{
    return QByteArray::fromStdString(json{{"systemMessage", message.toStdString()}}.dump()) + '\n';
}

} // namespace

QString ClaudeCodeHook::sessionAgent(const QString &sessionId)
{
    QString name = sessionId;
    name.remove(QRegularExpression(QStringLiteral("[^A-Za-z0-9-]")));
    return QStringLiteral("did:agent:claude-code-") + name.left(36);
}

ClaudeCodeHook::Answer ClaudeCodeHook::run(const QByteArray &event, Settings settings)
{
    const json in = json::parse(event.begin(), event.end(), nullptr, false);
    const QString name = text(in, "hook_event_name");
    if (!in.is_object() || name.isEmpty()) {
        const QByteArray why = "leasehold hook: stdin is not a Claude Code hook event\n";
        return settings.strict ? Answer{0, deny(QString::fromUtf8(why.trimmed())), why}
                               : Answer{1, {}, why};
    }
    if (settings.service.key.isEmpty() && settings.service.agent.isEmpty())
        settings.service.agent = sessionAgent(text(in, "session_id"));
    ServiceClient service(settings.service);

    if (name == QLatin1String("Stop") || name == QLatin1String("SessionEnd")) {
        const ServiceClient::Reply r =
            service.postNow(kBase + QStringLiteral("/release"), json::object());
        if (r.status != 200)
            return {0, {}, "leasehold hook: could not release: " + r.explanation().toUtf8() + '\n'};
        return {};
    }
    const bool pre = name == QLatin1String("PreToolUse");
    if ((!pre && name != QLatin1String("PostToolUse")) || !editsFiles(text(in, "tool_name")))
        return {}; // not an event this hook guards

    const json &input = in.contains("tool_input") ? in["tool_input"] : json();
    QString path = text(input, "file_path");
    if (path.isEmpty())
        path = text(input, "notebook_path");
    QString root = settings.root;
    if (root.isEmpty())
        root = qEnvironmentVariable("CLAUDE_PROJECT_DIR");
    if (root.isEmpty())
        root = text(in, "cwd");
    if (path.isEmpty() || root.isEmpty())
        return {};
    const WorkspacePaths::Named where = WorkspacePaths(root).name(path);
    if (!where.judged())
        return {}; // outside the shared workspace: nobody else's lease can cover it

    const ServiceClient::Reply r =
        service.postNow(kBase + QStringLiteral("/lease"), {{"resource", where.name.toStdString()},
                                                           {"mode", "write"},
                                                           {"ttlMs", settings.ttlMs},
                                                           {"waitMs", 0},
                                                           {"wording", "tool"}});
    if (r.status == 200 || !pre)
        return {};
    if (r.status == 409 || r.status == 403) {
        return {0,
                deny(QStringLiteral("Leasehold: %1 (your %2 was not made)")
                         .arg(r.explanation(), text(in, "tool_name"))),
                {}};
    }
    const QString problem = QStringLiteral("Leasehold at %1 could not be asked about %2: %3")
                                .arg(settings.service.base.toString(), where.name, r.explanation());
    if (settings.strict)
        return {0, deny(problem + QStringLiteral("; the edit is refused (--strict)")), {}};
    return {0, warn(problem + QStringLiteral("; the edit goes ahead unguarded")), {}};
}

#include "hookwords.h"

#include "hookdialect.h"
#include "refusallog.h"

#include <QStringList>

using nlohmann::json;

namespace hookwords {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

// "held by did:agent:b through fs:src/** (for 40 s, expires in 9 min)"
QString heldBy(const json &body)
{
    const QString holder = hookjson::text(body, "holder");
    const QString held = hookjson::text(body, "heldResource");
    const QString resource = hookjson::text(body, "resource");
    const bool queued = body.value("queued", false) == true;
    QString s = queued ? QStringLiteral("queued for by %1, who waits ahead of you").arg(holder)
                       : QStringLiteral("held by %1").arg(holder);
    if (!held.isEmpty() && held != resource)
        s += QStringLiteral(" through %1").arg(held);
    const qint64 heldFor = hookjson::number(body, "heldForMs");
    const qint64 expiresIn = hookjson::number(body, "expiresInMs");
    if (heldFor >= 0 && expiresIn >= 0 && !queued)
        s += QStringLiteral(" (for %1, expires in %2)").arg(duration(heldFor), duration(expiresIn));
    return s;
}

} // namespace

QString duration(qint64 ms)
{
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(std::max<qint64>(0, ms));
    const qint64 s = ms / 1000;
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return s % 60 ? QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60)
                      : QStringLiteral("%1 min").arg(s / 60);
    return (s % 3600) / 60 ? QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60)
                           : QStringLiteral("%1 h").arg(s / 3600);
}

QString call(const HookEvent &event)
{
    if (event.isShell()) {
        QString command = event.command.simplified();
        if (command.size() > 80)
            command = command.left(77) + QStringLiteral("...");
        return QStringLiteral("command `%1`").arg(command);
    }
    QString what = event.tool.isEmpty() ? QStringLiteral("edit") : event.tool;
    if (!event.files.isEmpty())
        what += QStringLiteral(" of ") + event.files.front();
    if (event.files.size() > 1)
        what += QStringLiteral(" and %1 more").arg(event.files.size() - 1);
    return what;
}

QString denial(const HookEvent &event, const json &body)
{
    const QString head =
        QStringLiteral("Leasehold: your %1 was not %2: ")
            .arg(call(event), event.isShell() ? QStringLiteral("run") : QStringLiteral("made"));
    const QString reason = hookjson::text(body, "reason");
    const QString resource = hookjson::text(body, "resource");
    if (reason == QLatin1String("lease_held")) {
        QString s = head + resource + QStringLiteral(" is ") + heldBy(body) + QLatin1Char('.');
        const qint64 waited = hookjson::number(body, "waitedMs");
        if (waited > 0)
            s += QStringLiteral(" It waited %1 for it.").arg(duration(waited));
        return s + QStringLiteral(" Work on something else and come back to this later, or ask "
                                  "the user to have %1 let go of it.")
                       .arg(hookjson::text(body, "holder"));
    }
    if (reason == QLatin1String("deadlock")) {
        QString s = QStringLiteral("waiting for %1 would close a cycle: it is held by %2")
                        .arg(resource, hookjson::text(body, "holder"));
        const json cycle = body.value("cycle", json::array());
        for (std::size_t i = 1; cycle.is_array() && i < cycle.size(); ++i) {
            s += QStringLiteral(", who waits for %1").arg(hookjson::text(cycle[i], "resource"));
            s += i + 1 < cycle.size()
                     ? QStringLiteral(", held by %1").arg(hookjson::text(cycle[i + 1], "agent"))
                     : QStringLiteral(", which you hold");
        }
        return head + s +
               QStringLiteral(". Waiting cannot end this: work on something else (what you "
                              "hold is let go when your turn ends), or ask the user.");
    }
    const QString message = hookjson::text(body, "message");
    return head + (message.isEmpty() ? hookjson::text(body, "error") : message);
}

QString unjudged(const HookEvent &event, const QString &instance, const QString &why, bool strict)
{
    return QStringLiteral("Leasehold at %1 could not judge your %2 (%3); %4")
        .arg(instance, call(event), why,
             strict ? QStringLiteral("it is refused (--strict).")
                    : QStringLiteral("it goes ahead unguarded."));
}

QString gateReport(const std::vector<leasehold::fsgate::Refusal> &refusals, qint64 nowMs)
{
    if (refusals.empty())
        return {};
    QString s = QStringLiteral("Leasehold: while this command ran, the filesystem gate refused "
                               "%1; those files were not changed:")
                    .arg(refusals.size() == 1 ? QStringLiteral("1 change")
                                              : QStringLiteral("%1 changes").arg(refusals.size()));
    constexpr std::size_t kShown = 10;
    for (std::size_t i = 0; i < refusals.size() && i < kShown; ++i) {
        const leasehold::fsgate::Refusal &r = refusals[i];
        s += QStringLiteral("\n- %1 %2").arg(q(r.op), q(r.path));
        if (!r.command.empty())
            s += QStringLiteral(" by %1").arg(q(r.command));
        if (r.pid > 0)
            s += QStringLiteral(" (pid %1)").arg(r.pid);
        if (r.reason == "lease_held") {
            s += QStringLiteral(": held by %1").arg(q(r.holder));
            if (!r.heldResource.empty() && r.heldResource != r.resource)
                s += QStringLiteral(" through %1").arg(q(r.heldResource));
            if (r.expiresAt > nowMs)
                s += QStringLiteral(" (expires in %1)").arg(duration(r.expiresAt - nowMs));
        } else {
            s += QStringLiteral(": could not be judged (the instance was unreachable)");
        }
    }
    if (refusals.size() > kShown)
        s += QStringLiteral("\n- and %1 more").arg(refusals.size() - kShown);
    return s + QStringLiteral("\nWork on something else and come back to these later, or ask "
                              "the user to have the holder let go.");
}

QString releaseRequests(const json &body, qint64 nowMs)
{
    const auto list = body.is_object() ? body.find("releaseRequests") : body.end();
    if (!body.is_object() || list == body.end() || !list->is_array() || list->empty())
        return {};
    QStringList lines;
    for (const json &r : *list) {
        if (!r.is_object())
            continue;
        QString line =
            QStringLiteral("Leasehold: %1 asks you to let go of %2 (%3 urgency, asked %4 ago")
                .arg(hookjson::text(r, "requester"), hookjson::text(r, "resource"),
                     hookjson::text(r, "urgency"),
                     duration(std::max<qint64>(0, hookjson::number(r, "ageMs"))));
        const qint64 deadline = hookjson::number(r, "deadlineAt");
        // The service's clock, from the request itself: its own time is what deadlines are in.
        const qint64 raisedAt = hookjson::number(r, "raisedAt");
        const qint64 age = hookjson::number(r, "ageMs");
        const qint64 serviceNow = raisedAt >= 0 && age >= 0 ? raisedAt + age : nowMs;
        if (r.value("overdue", false) == true)
            line += QStringLiteral(", its deadline has passed");
        else if (deadline > 0)
            line += QStringLiteral(", deadline in %1").arg(duration(deadline - serviceNow));
        line += QLatin1Char(')');
        if (const QString why = hookjson::text(r, "reason"); !why.isEmpty())
            line += QStringLiteral(": \"%1\"").arg(why);
        lines << line + QStringLiteral(". Finish the change you are making there and leave it: "
                                       "move on to other files, or stop, so it is released.");
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace hookwords

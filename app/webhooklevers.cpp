#include "webhooklevers.h"

#include "texttable.h"
#include "webhooks.h"
#include "wording.h"

#include <QDateTime>

using namespace leasehold;
using nlohmann::json;

namespace {

QString deliveryLine(const json &d, std::int64_t now)
{
    return QString::fromStdString(d.value("event", "")) + QStringLiteral(": ") +
           webhookDeliveryText(d, now);
}

ConsoleWebhooks fromJson(const json &all)
{
    ConsoleWebhooks out;
    const std::int64_t now = QDateTime::currentMSecsSinceEpoch();
    for (const json &w : all) {
        ConsoleWebhook c;
        c.id = cellText(w.value("id", json()));
        c.url = cellText(w.value("url", json()));
        QStringList events;
        for (const json &e : w.value("events", json::array()))
            events << cellText(e);
        c.events = events.join(QStringLiteral(", "));
        c.format = cellText(w.value("format", json()));
        c.configured = w.value("configured", false);
        c.pending = w.value("pending", std::int64_t(0));
        c.delivered = w.value("delivered", std::int64_t(0));
        c.failed = w.value("failed", std::int64_t(0));
        c.failedLastHour = w.value("failedLastHour", std::int64_t(0));
        for (const json &d : w.value("recent", json::array()))
            c.recent << deliveryLine(d, now);
        out << c;
    }
    return out;
}

} // namespace

WebhookLevers webhookLevers(Webhooks &webhooks, QObject *context)
{
    WebhookLevers levers;
    Webhooks *hooks = &webhooks;
    levers.list = [hooks, context](std::function<void(ConsoleWebhooks)> done) {
        hooks->ask<ConsoleWebhooks>([](WebhookDispatcher &d) { return fromJson(d.list(10)); },
                                    context, std::move(done));
    };
    levers.add = [hooks, context](ConsoleWebhookSpec spec, std::function<void(QString)> done) {
        WebhookEndpoint e;
        e.url = spec.url.trimmed().toStdString();
        e.secret = spec.secret.toStdString();
        e.format = spec.format.toStdString();
        for (const QString &name : spec.events)
            if (!name.trimmed().isEmpty() && name.trimmed() != QLatin1String("all"))
                e.events.push_back(name.trimmed().toStdString());
        hooks->ask<QString>(
            [e = std::move(e)](WebhookDispatcher &d) {
                std::string error;
                return d.add(e, &error) ? QString() : QString::fromStdString(error);
            },
            context, std::move(done));
    };
    levers.remove = [hooks, context](QString id, std::function<void(QString)> done) {
        hooks->ask<QString>(
            [id = id.toStdString()](WebhookDispatcher &d) {
                std::string error;
                int status = 0;
                return d.remove(id, &error, &status) ? QString() : QString::fromStdString(error);
            },
            context, std::move(done));
    };
    return levers;
}

QString webhookDeliveryText(const json &d, std::int64_t now)
{
    const std::string state = d.value("state", "");
    QString out = QString::fromStdString(state);
    const json done = d.value("doneAt", json());
    if (done.is_number_integer())
        out += QStringLiteral(" %1 ago").arg(formatDuration(now - done.get<std::int64_t>()));
    const std::int64_t attempts = d.value("attempts", std::int64_t(0));
    if (state != "delivered" && attempts > 0)
        out += QStringLiteral(", ") + countOf(attempts, "attempt", "attempts");
    const json error = d.value("lastError", json());
    if (state != "delivered" && error.is_string())
        out += QStringLiteral(" (%1)").arg(QString::fromStdString(error.get<std::string>()));
    return out;
}

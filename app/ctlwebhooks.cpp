// `ctl webhooks add URL --secret S [--events LIST] [--format json|slack]`, `webhooks list`,
// `webhooks remove ID` and `webhooks test ID`: the admin routes under /admin/webhooks. The
// secret goes to the instance once and is never printed back.

#include "ctlcommands.h"
#include "texttable.h"
#include "webhooklevers.h"
#include "wording.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QEventLoop>
#include <QTimer>

using namespace leasehold;
using nlohmann::json;

namespace {

const QString kRoute = QLatin1String(ServiceClient::kBase) + QStringLiteral("/admin/webhooks");

} // namespace

CtlExit CtlCommands::webhooks(const QStringList &args)
{
    const QString verb = args.value(1);
    const auto usage = [this] {
        m_err << "usage: leasehold ctl webhooks add URL --secret SECRET [--events LIST] "
                 "[--format json|slack] | list | remove ID | test ID\n";
        return CtlExit::Usage;
    };
    if (verb == QLatin1String("list") && args.size() == 2) {
        const CtlClient::Reply r = m_client.get(kRoute);
        if (auto code = failure(r))
            return *code;
        const json all = r.body.value("webhooks", json::array());
        if (m_json) {
            printJson(all);
            return CtlExit::Ok;
        }
        if (all.empty()) {
            m_out << "no webhooks (add one: leasehold ctl webhooks add URL --secret SECRET)\n";
            return CtlExit::Ok;
        }
        const std::int64_t now = QDateTime::currentMSecsSinceEpoch();
        TextTable table(
            {"ID", "URL", "EVENTS", "FORMAT", "SECRET", "PENDING", "DELIVERED", "FAILED", "LAST"});
        for (const json &w : all) {
            QStringList events;
            for (const json &e : w.value("events", json::array()))
                events << cellText(e);
            const json recent = w.value("recent", json::array());
            table.add({cellText(w.value("id", json())), cellText(w.value("url", json())),
                       events.join(','), cellText(w.value("format", json())),
                       cellText(w.value("secret", json())), cellText(w.value("pending", json())),
                       cellText(w.value("delivered", json())), cellText(w.value("failed", json())),
                       recent.empty() ? QStringLiteral("-") : webhookDeliveryText(recent[0], now)});
        }
        m_out << table.render();
        return CtlExit::Ok;
    }
    if (verb == QLatin1String("add") && args.size() == 3) {
        json body = {{"url", args[2].toStdString()}};
        if (m_parser.isSet(QStringLiteral("secret")))
            body["secret"] = m_parser.value(QStringLiteral("secret")).toStdString();
        if (m_parser.isSet(QStringLiteral("events"))) {
            json events = json::array();
            for (const QString &e :
                 m_parser.value(QStringLiteral("events")).split(',', Qt::SkipEmptyParts))
                events.push_back(e.trimmed().toStdString());
            body["events"] = events;
        }
        if (m_parser.isSet(QStringLiteral("format")))
            body["format"] = m_parser.value(QStringLiteral("format")).toStdString();
        const CtlClient::Reply r = m_client.post(kRoute, body);
        if (auto code = failure(r))
            return *code;
        if (m_json)
            printJson(r.body);
        else
            m_out << cellText(r.body.value("id", json())) << "\n";
        return CtlExit::Ok;
    }
    if ((verb == QLatin1String("remove") || verb == QLatin1String("test")) && args.size() == 3) {
        const bool remove = verb == QLatin1String("remove");
        const CtlClient::Reply r =
            m_client.post(kRoute + (remove ? QStringLiteral("/remove") : QStringLiteral("/test")),
                          {{"id", args[2].toStdString()}});
        if (auto code = failure(r))
            return *code;
        if (remove) {
            m_json ? printJson(r.body) : void(m_out << "removed webhook " << args[2] << "\n");
            return CtlExit::Ok;
        }
        return followTest(args[2], QString::fromStdString(r.body.value("deliveryId", "")));
    }
    return usage();
}

CtlExit CtlCommands::followTest(const QString &id, const QString &deliveryId)
{
    // Watches the test delivery's first attempt (a few seconds at most): the operator learns at
    // once whether the receiver took it, and why not.
    const std::int64_t until = QDateTime::currentMSecsSinceEpoch() + 15'000;
    json found;
    while (QDateTime::currentMSecsSinceEpoch() < until) {
        const CtlClient::Reply r = m_client.get(kRoute);
        if (auto code = failure(r))
            return *code;
        for (const json &w : r.body.value("webhooks", json::array()))
            if (w.value("id", "") == id.toStdString())
                for (const json &d : w.value("recent", json::array()))
                    if (d.value("id", "") == deliveryId.toStdString())
                        found = d;
        if (found.is_object() &&
            (found.value("state", "") != "pending" || found.value("attempts", 0) > 0))
            break;
        QEventLoop loop;
        QTimer::singleShot(200, &loop, &QEventLoop::quit);
        loop.exec();
    }
    if (m_json) {
        printJson({{"id", id.toStdString()},
                   {"deliveryId", deliveryId.toStdString()},
                   {"delivery", found}});
    } else if (!found.is_object() || found.value("attempts", 0) == 0) {
        m_out << "test delivery " << deliveryId << " queued; not tried yet (ctl webhooks list)\n";
    } else {
        m_out << "test delivery " << deliveryId << ": "
              << webhookDeliveryText(found, QDateTime::currentMSecsSinceEpoch()) << "\n";
    }
    return found.is_object() && found.value("state", "") == "delivered" ? CtlExit::Ok
                                                                        : CtlExit::Refused;
}

// `ctl watch` and the live part of `ctl ledger --follow`: both read the instance's watch stream
// (WatchClient) instead of polling, and end on Ctrl-C.

#include "ctlcommands.h"
#include "ledgerevent.h"
#include "ledgerjson.h"
#include "resourcename.h"
#include "texttable.h"
#include "watchclient.h"
#include "wording.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QEventLoop>
#include <QTimer>

#include <csignal>

using namespace leasehold;
using nlohmann::json;

namespace {

volatile std::sig_atomic_t g_stop = 0;

// Runs `loop` until it quits or an interrupt arrives.
void runUntilInterrupted(QEventLoop &loop)
{
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&loop] {
        if (g_stop)
            loop.quit();
    });
    poll.start(100);
    loop.exec();
}

// One lease as `watch` prints it.
QString leaseLine(const char *sign, const json &e, const QString &what)
{
    return QString::fromLatin1(sign) + QLatin1Char(' ') + what + QLatin1Char('\t') +
           cellText(e["resource"]) + QLatin1Char('\t') +
           cellText(e.contains("holder") ? e["holder"] : e["actorDid"]) +
           QStringLiteral("\ttoken ") + cellText(e["token"]);
}

} // namespace

void CtlCommands::catchInterrupts()
{
    std::signal(SIGINT, [](int) { g_stop = 1; });
    std::signal(SIGTERM, [](int) { g_stop = 1; });
}

bool CtlCommands::interrupted()
{
    return g_stop != 0;
}

std::optional<CtlExit> CtlCommands::followLedger(qulonglong &since)
{
    // The filters /ledger applied on the instance, applied here to the stream's events.
    LedgerFilter filter{m_parser.value(QStringLiteral("agent")).toStdString(),
                        {},
                        m_parser.value(QStringLiteral("kind")).toStdString()};
    if (m_parser.isSet(QStringLiteral("resource"))) {
        auto name =
            ResourceParser().parse(m_parser.value(QStringLiteral("resource")).toStdString());
        if (const auto *parsed = std::get_if<ResourceName>(&name))
            filter.resource = parsed->canonical();
    }
    WatchClient::Options options;
    options.allEvents = true;
    options.snapshot = false;
    WatchClient watch(m_client.settings(), options);
    QEventLoop loop;
    std::optional<CtlExit> exit;
    QObject::connect(&watch, &WatchClient::ledgerEvent, &loop, [&](const json &e) {
        const qulonglong seq = e.value("seq", qulonglong(0));
        if (seq <= since)
            return;
        since = seq;
        if (filter.matches(ledgerEventFromJson(e).value_or(LedgerEvent{}))) {
            printEvent(e);
            m_out.flush();
        }
    });
    // The events after `since` are no longer in the stream's ring: page them from the store.
    QObject::connect(&watch, &WatchClient::snapshot, &loop, [&] { loop.quit(); });
    QObject::connect(&watch, &WatchClient::refused, &loop, [&](int status, const QString &why) {
        m_err << "leasehold ctl: " << why << "\n";
        exit = status == 401 || status == 403 ? CtlExit::Auth : CtlExit::Refused;
        loop.quit();
    });
    QObject::connect(&watch, &WatchClient::liveChanged, &loop, [&](bool live, const QString &why) {
        if (!live)
            m_err << "leasehold ctl: the watch stream was lost (" << why << "); reconnecting\n";
        m_err.flush();
    });
    watch.start(since);
    runUntilInterrupted(loop);
    if (!exit && interrupted())
        exit = CtlExit::Ok;
    return exit;
}

CtlExit CtlCommands::watch()
{
    WatchClient::Options options;
    options.prefix = m_parser.value(QStringLiteral("prefix"));
    WatchClient watch(m_client.settings(), options);
    QEventLoop loop;
    CtlExit exit = CtlExit::Ok;
    catchInterrupts();
    auto print = [&](const QString &type, const json &data) {
        if (m_json)
            m_out << QString::fromStdString(
                         json{{"event", type.toStdString()}, {"data", data}}.dump())
                  << "\n";
        m_out.flush();
    };
    QObject::connect(&watch, &WatchClient::snapshot, &loop,
                     [&](quint64 revision, const json &leases, const QString &reason) {
                         if (m_json)
                             return print(QStringLiteral("snapshot"),
                                          {{"revision", revision}, {"leases", leases}});
                         m_out << "revision " << revision << ": "
                               << countOf(qint64(leases.size()), "lease", "leases")
                               << (reason == QLatin1String("new") ? QString() : " (" + reason + ")")
                               << "\n";
                         for (const json &l : leases)
                             m_out << leaseLine("=", l, QStringLiteral("held")) << "\n";
                         m_out.flush();
                     });
    QObject::connect(&watch, &WatchClient::ledgerEvent, &loop, [&](const json &e) {
        if (m_json)
            return print(QStringLiteral("ledger"), e);
        const std::string kind = cellText(e["kind"]).toStdString();
        const std::string reason = cellText(e["reason"]).toStdString(); // null when none
        if (kind == "coordination.lease.granted")
            m_out << leaseLine(reason.empty() ? "+" : "~", e,
                               reason.empty() ? QStringLiteral("granted")
                                              : QString::fromStdString(reason))
                  << "\tfor " << formatDuration(e.value("ttlMs", std::int64_t(0))) << "\n";
        else
            m_out << leaseLine("-", e,
                               kind == "coordination.lease.expired" ? QStringLiteral("expired")
                                                                    : QStringLiteral("released"))
                  << (reason.empty() || reason == "release" || reason == "expired"
                          ? QString()
                          : " (" + QString::fromStdString(reason) + ")")
                  << "\n";
        m_out.flush();
    });
    QObject::connect(&watch, &WatchClient::refused, &loop, [&](int status, const QString &why) {
        m_err << "leasehold ctl: " << why << "\n";
        exit = status == 401 || status == 403 ? CtlExit::Auth : CtlExit::Refused;
        loop.quit();
    });
    QObject::connect(&watch, &WatchClient::liveChanged, &loop, [&](bool live, const QString &why) {
        if (!live)
            m_err << "leasehold ctl: the watch stream was lost (" << why << "); reconnecting\n";
        m_err.flush();
    });
    watch.start();
    runUntilInterrupted(loop);
    return exit;
}

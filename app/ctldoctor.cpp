// `ctl doctor` (what is wrong, each finding with the command that fixes it) and `ctl sweep` (the
// leases of holders that are gone). The doctor reads only what any reader key may (GET /health,
// the instance's own check, shared with the console's Health page); the sweep is an admin lever.

#include "ctlcommands.h"
#include "texttable.h"
#include "wording.h"

#include <QCommandLineParser>
#include <QDateTime>

#include <algorithm>

using namespace leasehold;
using nlohmann::json;

namespace {

const QString kBase = QLatin1String(ServiceClient::kBase);

constexpr std::int64_t kHourMs = 3'600'000;
enum class Severity { Info, Warning, Critical };

struct Finding
{
    Severity severity;
    QString what;
    QString fix; // the command that fixes it; empty when there is none
};

const char *severityName(Severity s)
{
    return s == Severity::Critical ? "critical" : s == Severity::Warning ? "warning" : "info";
}

std::int64_t integerOf(const json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::string textOf(const json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

std::optional<std::int64_t> CtlCommands::parseDurationMs(const QString &text)
{
    // "90s", "10m", "2h", "1d", or bare seconds.
    QString t = text.trimmed();
    std::int64_t unit = 1000;
    if (!t.isEmpty() && !t.back().isDigit()) {
        const QChar u = t.back();
        unit = u == 's'   ? 1000
               : u == 'm' ? 60'000
               : u == 'h' ? kHourMs
               : u == 'd' ? 24 * kHourMs
                          : 0;
        t.chop(1);
    }
    bool ok = false;
    const qlonglong n = t.toLongLong(&ok);
    if (!ok || unit == 0 || n < 0 || n > 365LL * 24 * 3600)
        return std::nullopt;
    return n * unit;
}

CtlExit CtlCommands::sweep()
{
    const auto notLive = parseDurationMs(m_parser.value(QStringLiteral("not-live-for")));
    if (!m_parser.isSet(QStringLiteral("not-live-for")) || !notLive || *notLive < 60'000) {
        m_err << "leasehold ctl: sweep needs --not-live-for DURATION of at least a minute, e.g. "
                 "10m or 2h\n";
        return CtlExit::Usage;
    }
    const bool dryRun = m_parser.isSet(QStringLiteral("dry-run"));
    const CtlClient::Reply r = m_client.post(kBase + QStringLiteral("/admin/sweep"),
                                             {{"notLiveForMs", *notLive}, {"dryRun", dryRun}});
    if (auto code = failure(r))
        return *code;
    if (m_json) {
        printJson(r.body);
        return CtlExit::Ok;
    }
    const json agents = r.body.value("agents", json::array());
    if (agents.empty()) {
        m_out << "no holder has been gone for " << formatDuration(*notLive) << "\n";
        return CtlExit::Ok;
    }
    TextTable table({"AGENT", "NOT SEEN FOR", "LEASES", dryRun ? "WOULD RELEASE" : "RELEASED"});
    for (const json &a : agents) {
        QStringList names;
        for (const json &n : a.value("resources", json::array()))
            names << cellText(n);
        table.add({cellText(a["actorDid"]), formatDuration(integerOf(a, "idleMs")),
                   names.join(QStringLiteral(", ")),
                   dryRun ? QString::number(names.size()) : cellText(a["released"])});
    }
    m_out << table.render();
    if (dryRun)
        m_out << "dry run: nothing was released; without --dry-run these leases go, recorded as "
                 "release-holder with reason sweep\n";
    return CtlExit::Ok;
}

CtlExit CtlCommands::doctor()
{
    // The instance's own health check (GET /health: the store and its disk, the cluster, holders
    // that are gone, waits, the last hour's incidents), and what only this side can see: how far
    // this machine's clock is from the instance's.
    const CtlClient::Reply r = m_client.get(kBase + QStringLiteral("/health"));
    if (auto code = failure(r))
        return *code;
    std::vector<Finding> findings;
    bool storeDown = false;
    for (const json &f : r.body.value("findings", json::array())) {
        const std::string severity = textOf(f, "severity");
        storeDown = storeDown || textOf(f, "code") == "store";
        findings.push_back({severity == "critical"  ? Severity::Critical
                            : severity == "warning" ? Severity::Warning
                                                    : Severity::Info,
                            QString::fromStdString(textOf(f, "finding")),
                            QString::fromStdString(textOf(f, "fix"))});
    }
    const std::int64_t skew = QDateTime::currentMSecsSinceEpoch() - integerOf(r.body, "at");
    if (std::abs(skew) > 2'000)
        findings.push_back(
            {Severity::Warning,
             QStringLiteral("this machine's clock and the instance's differ by %1")
                 .arg(formatDuration(std::abs(skew))),
             QStringLiteral("timedatectl status (on both machines); leases are timed by the "
                            "instance's clock alone")});
    // Worst first, as the instance ordered its own.
    std::stable_sort(findings.begin(), findings.end(),
                     [](const Finding &a, const Finding &b) { return a.severity > b.severity; });

    Severity worst = Severity::Info;
    for (const Finding &f : findings)
        worst = std::max(worst, f.severity);
    if (m_json) {
        json out = json::array();
        for (const Finding &f : findings)
            out.push_back({{"severity", severityName(f.severity)},
                           {"finding", f.what.toStdString()},
                           {"fix", f.fix.toStdString()}});
        printJson({{"findings", out}, {"worst", findings.empty() ? "none" : severityName(worst)}});
    } else if (findings.empty()) {
        m_out << "no findings: the store grants, no holder is gone, no deadlock in the last hour\n";
    } else {
        for (const Finding &f : findings) {
            m_out << severityName(f.severity) << ": " << f.what << "\n";
            if (!f.fix.isEmpty())
                m_out << "    fix: " << f.fix << "\n";
        }
    }
    // Scripts: 0 nothing but information, 1 something to act on, 6 the store cannot grant.
    if (storeDown)
        return CtlExit::Degraded;
    return worst == Severity::Info ? CtlExit::Ok : CtlExit::Refused;
}

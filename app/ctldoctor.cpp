// `ctl doctor` (what is wrong, each finding with the command that fixes it) and `ctl sweep` (the
// leases of holders that are gone). The doctor reads what any reader key may (/healthz, /status
// and the recent ledger) and, with an admin key, the webhooks' deliveries; the sweep is an
// admin lever.

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
// Findings that page someone: the store cannot grant, a clock far off, holders that are gone.
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
    std::vector<Finding> findings;
    const CtlClient::Reply health = m_client.get(QStringLiteral("/healthz"));
    if (health.status == 0)
        return *failure(health);
    const CtlClient::Reply s = m_client.get(kBase + QStringLiteral("/status"));
    if (auto code = failure(s))
        return *code;
    const json &st = s.body;
    const std::int64_t now = integerOf(st, "at");

    // The store and the cluster, as /healthz says.
    if (!health.body.value("ok", false))
        findings.push_back({Severity::Critical,
                            QStringLiteral("the store cannot record grants: %1")
                                .arg(QString::fromStdString(textOf(health.body, "error"))),
                            QStringLiteral("check the data directory's disk (room, permissions); "
                                           "see docs/operating.md, State and crash recovery")});
    if (const auto cluster = health.body.find("cluster"); cluster != health.body.end()) {
        const std::string role = textOf(*cluster, "role");
        if (role != "leader" && textOf(*cluster, "leader").empty())
            findings.push_back({Severity::Critical,
                                QStringLiteral("the cluster has no leader this instance knows of"),
                                QStringLiteral("check etcd: etcdctl endpoint health")});
    }
    // The clock: this machine's against the instance's.
    const std::int64_t skew = QDateTime::currentMSecsSinceEpoch() - now;
    if (std::abs(skew) > 2'000)
        findings.push_back(
            {Severity::Warning,
             QStringLiteral("this machine's clock and the instance's differ by %1")
                 .arg(formatDuration(std::abs(skew))),
             QStringLiteral("timedatectl status (on both machines); leases are timed by the "
                            "instance's clock alone")});

    // Holders that are gone: live on no surface, what they hold, for how long.
    const json agents = st.value("agents", json::array());
    for (const json &a : agents) {
        if (integerOf(a, "leases") == 0 || !a.value("via", json::array()).empty() ||
            integerOf(a, "liveSessions") > 0)
            continue;
        const std::int64_t idle = now - integerOf(a, "lastSeen");
        findings.push_back(
            {Severity::Warning,
             QStringLiteral("%1 holds %2 and is live on no surface (last call %3 ago)")
                 .arg(cellText(a["actorDid"]), countOf(integerOf(a, "leases"), "lease", "leases"),
                      formatDuration(idle)),
             QStringLiteral("leasehold ctl release-holder %1   (or: ctl sweep --not-live-for "
                            "10m --dry-run)")
                 .arg(cellText(a["actorDid"]))});
    }
    // Waits: the longest, and leases about to run out under someone waiting.
    const json waiters = st.value("waiters", json::array());
    std::int64_t longest = 0;
    QString longestWho;
    for (const json &w : waiters) {
        const std::int64_t waited = now - integerOf(w, "since");
        if (waited > longest) {
            longest = waited;
            longestWho =
                cellText(w["actorDid"]) + QStringLiteral(" for ") + cellText(w["resource"]);
        }
    }
    if (longest >= 10'000)
        findings.push_back({Severity::Info,
                            QStringLiteral("the longest wait: %1, %2 so far")
                                .arg(longestWho, formatDuration(longest)),
                            QStringLiteral("leasehold ctl wait")});
    for (const json &d : st.value("deadlocks", json::array()))
        findings.push_back({Severity::Warning,
                            QStringLiteral("a live deadlock: %1")
                                .arg(QString::fromStdString(d.value("cycle", json()).dump())),
                            QStringLiteral("leasehold ctl wait, then release-holder one of them")});

    // The last hour of the ledger: deadlocks refused and force releases.
    const std::uint64_t last = st.value("lastSeq", std::uint64_t(0));
    const std::uint64_t from = last > 5'000 ? last - 5'000 : 0;
    // Pages of the ledger's newest events (at most 5 000): what happened within the hour.
    std::vector<json> recent;
    for (std::uint64_t since = from; recent.size() < 5'000;) {
        const CtlClient::Reply page = m_client.get(
            kBase + QStringLiteral("/ledger"), {{QStringLiteral("since"), QString::number(since)},
                                                {QStringLiteral("limit"), QStringLiteral("1000")}});
        const json events = page.status == 200 ? page.body.value("events", json::array()) : json();
        if (!events.is_array() || events.empty())
            break;
        recent.insert(recent.end(), events.begin(), events.end());
        since = page.body.value("next", since);
        if (since >= last)
            break;
    }
    int deadlocks = 0, forced = 0, expired = 0;
    for (const json &e : recent) {
        if (!e.is_object() || now - integerOf(e, "at") > kHourMs)
            continue;
        const std::string kind = textOf(e, "kind");
        if (kind == "coordination.lease.refused" && textOf(e, "reason") == "deadlock")
            ++deadlocks;
        else if (kind == "coordination.lease.admin.release_holder" ||
                 kind == "coordination.lease.admin.release_all" ||
                 kind == "coordination.lease.admin.release_lease")
            ++forced;
        else if (kind == "coordination.lease.expired")
            ++expired;
    }
    if (deadlocks > 0)
        findings.push_back(
            {Severity::Warning,
             QStringLiteral("%1 refused in the last hour")
                 .arg(countOf(deadlocks, "deadlock", "deadlocks")),
             QStringLiteral("leasehold ctl ledger --kind coordination.lease.refused")});
    if (forced > 0)
        findings.push_back({Severity::Info,
                            QStringLiteral("%1 by an operator in the last hour")
                                .arg(countOf(forced, "force release", "force releases")),
                            QStringLiteral("leasehold ctl ledger --kind "
                                           "coordination.lease.admin.release_holder")});
    if (expired > 0)
        findings.push_back(
            {Severity::Info,
             QStringLiteral("%1 expired on their holders in the last hour")
                 .arg(countOf(expired, "lease", "leases")),
             QStringLiteral("leasehold ctl ledger --kind coordination.lease.expired")});

    // Webhooks whose deliveries failed in the last hour, or keep failing now (admin keys only:
    // a reader key cannot see the endpoints, and the doctor says nothing of them then).
    const CtlClient::Reply hooks = m_client.get(kBase + QStringLiteral("/admin/webhooks"));
    for (const json &w :
         hooks.status == 200 ? hooks.body.value("webhooks", json::array()) : json::array()) {
        const std::int64_t failed = integerOf(w, "failedLastHour");
        const json deliveries = w.value("recent", json::array());
        const json newest = deliveries.empty() ? json::object() : deliveries[0];
        const bool retrying =
            textOf(newest, "state") == "pending" && integerOf(newest, "attempts") > 0;
        if (failed == 0 && !retrying)
            continue;
        const QString id = QString::fromStdString(textOf(w, "id"));
        const QString why = QString::fromStdString(textOf(newest, "lastError"));
        findings.push_back(
            {Severity::Warning,
             (failed > 0 ? QStringLiteral("webhook %1 (%2): %3 failed in the last hour")
                               .arg(id, QString::fromStdString(textOf(w, "url")),
                                    countOf(failed, "delivery", "deliveries"))
                         : QStringLiteral("webhook %1 (%2): deliveries are being retried")
                               .arg(id, QString::fromStdString(textOf(w, "url")))) +
                 (why.isEmpty() ? QString() : QStringLiteral("; last: ") + why),
             QStringLiteral("fix the receiver, then: leasehold ctl webhooks test %1   (or: ctl "
                            "webhooks remove %1)")
                 .arg(id)});
    }

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
    if (!health.body.value("ok", false))
        return CtlExit::Degraded;
    return worst == Severity::Info ? CtlExit::Ok : CtlExit::Refused;
}

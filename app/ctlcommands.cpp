#include "ctlcommands.h"

#include "coverquery.h"
#include "guardcli.h"
#include "ledgerjson.h"
#include "texttable.h"
#include "wording.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QEventLoop>
#include <QTimer>

#include <csignal>

using namespace leasehold;
using nlohmann::json;

namespace {

const QString kBase = QLatin1String(ServiceClient::kBase);

QString text(const json &value)
{
    return cellText(value);
}

// "released 3 leases": what a release lever answered.
QString released(const json &reply)
{
    return QStringLiteral("released ") +
           leasehold::countOf(reply.value("released", 0), "lease", "leases");
}

} // namespace

CtlCommands::CtlCommands(CtlClient &client, const QCommandLineParser &parser, bool asJson)
    : m_client(client)
    , m_parser(parser)
    , m_json(asJson)
    , m_out(stdout)
    , m_err(stderr)
{}

CtlExit CtlCommands::run(const QStringList &args)
{
    const QString command = args.value(0);
    auto needs = [&](int count, const char *usage) {
        if (args.size() == count)
            return true;
        m_err << "usage: leasehold ctl " << usage << "\n";
        return false;
    };
    if (command == QLatin1String("status") && needs(1, "status"))
        return status();
    if (command == QLatin1String("holders") && needs(1, "holders"))
        return holders();
    if (command == QLatin1String("wait") && needs(1, "wait"))
        return wait();
    if (command == QLatin1String("doctor") && needs(1, "doctor"))
        return doctor();
    if (command == QLatin1String("webhooks"))
        return webhooks(args);
    if (command == QLatin1String("sweep") && needs(1, "sweep --not-live-for DURATION [--dry-run]"))
        return sweep();
    if (command == QLatin1String("release-holder") && needs(2, "release-holder DID"))
        return lever(QStringLiteral("/admin/release-holder"), {{"actorDid", args[1].toStdString()}},
                     [&](const json &r) { return released(r) + QStringLiteral(" of ") + args[1]; });
    if (command == QLatin1String("release-lease") && needs(2, "release-lease LEASE"))
        return lever(QStringLiteral("/admin/release-lease"), {{"leaseId", args[1].toStdString()}},
                     [&](const json &) { return QStringLiteral("released lease ") + args[1]; });
    if (command == QLatin1String("release-all") && needs(1, "release-all --yes")) {
        if (!m_parser.isSet(QStringLiteral("yes"))) {
            m_err << "leasehold ctl: release-all releases every lease of every agent; add --yes\n";
            return CtlExit::Usage;
        }
        return lever(QStringLiteral("/admin/release-all"), json::object(), released);
    }
    if ((command == QLatin1String("suspend") || command == QLatin1String("unsuspend")) &&
        needs(2, "suspend|unsuspend DID")) {
        const bool on = command == QLatin1String("suspend");
        return lever(QStringLiteral("/admin/suspend"),
                     {{"actorDid", args[1].toStdString()}, {"suspended", on}}, [&](const json &) {
                         return args[1] + (on ? QStringLiteral(" is suspended")
                                              : QStringLiteral(" may acquire again"));
                     });
    }
    if ((command == QLatin1String("pause") || command == QLatin1String("resume")) &&
        needs(1, "pause|resume")) {
        const bool on = command == QLatin1String("pause");
        return lever(QStringLiteral("/admin/pause"), {{"paused", on}}, [on](const json &) {
            return on ? QStringLiteral("admissions paused") : QStringLiteral("admissions resumed");
        });
    }
    if (command == QLatin1String("ledger") && needs(1, "ledger [--since N] [--follow] ..."))
        return ledger();
    if (command == QLatin1String("watch") && needs(1, "watch [--prefix PREFIX]"))
        return watch();
    if (command == QLatin1String("install-hooks") &&
        needs(2, "install-hooks claude-code|codex|gemini|copilot|qwen|opencode "
                 "[--project DIR | --user] [--url URL] [--wait SECONDS]")) {
        if (m_parser.isSet(QStringLiteral("project")) && m_parser.isSet(QStringLiteral("user"))) {
            m_err << "leasehold ctl: install-hooks writes the project's configuration "
                     "(--project) or the user's (--user), not both\n";
            return CtlExit::Usage;
        }
        int wait = 20;
        if (m_parser.isSet(QStringLiteral("wait"))) {
            bool ok = false;
            wait = m_parser.value(QStringLiteral("wait")).toInt(&ok);
            if (!ok || wait < 0 || wait > 30) {
                m_err << "leasehold ctl: --wait must be 0 to 30 seconds\n";
                return CtlExit::Usage;
            }
        }
        // Only what the hook needs to find the instance: never the key (the configuration may
        // be shared; the agent's key comes from LEASEHOLD_KEY in its environment).
        QStringList flags;
        if (m_parser.isSet(QStringLiteral("url")))
            flags << QStringLiteral("--url") << m_parser.value(QStringLiteral("url"));
        const int code = installHooks(args[1], m_parser.value(QStringLiteral("project")),
                                      m_parser.isSet(QStringLiteral("user")), flags, wait);
        return code == 0 ? CtlExit::Ok : code == 2 ? CtlExit::Usage : CtlExit::Refused;
    }
    if (command == QLatin1String("keys") && needs(3, "keys add DID [--role agent|admin]")) {
        if (args[1] != QLatin1String("add")) {
            m_err << "usage: leasehold ctl keys add DID [--role agent|admin]\n";
            return CtlExit::Usage;
        }
        return keysAdd(args[2]);
    }
    bool known = false;
    for (const CtlCommand &c : ctlCommands())
        known = known || command == QLatin1String(c.name);
    if (!known)
        m_err << "leasehold ctl: unknown command '" << command << "' (see leasehold ctl --help)\n";
    return CtlExit::Usage;
}

namespace {

// "leader (term 4); members: URL (leader), URL (standby)" or "standby; the leader is URL; …".
QString describeCluster(const json &cluster)
{
    QStringList members;
    for (const json &m : cluster.value("members", json::array()))
        members << text(m.value("address", json())) + " (" + text(m.value("role", json())) + ")";
    const QString leader = text(cluster.value("leader", json()));
    const QString role =
        cluster.value("role", "") == "leader"
            ? QStringLiteral("leader (term %1%2)")
                  .arg(cluster.value("term", json()).is_number_integer()
                           ? cluster["term"].get<std::int64_t>()
                           : 0)
                  .arg(cluster.value("lapsed", json()) == true
                           ? QStringLiteral("; cannot confirm its etcd session: granting nothing")
                           : QString())
            : QStringLiteral("standby; the leader is %1")
                  .arg(leader.isEmpty() ? QStringLiteral("not elected yet") : leader);
    const QString problem = text(cluster.value("problem", json()));
    return role + (members.isEmpty() ? QString() : "; members: " + members.join(", ")) +
           (problem.isEmpty() ? QString() : "; etcd: " + problem);
}

} // namespace

CtlExit CtlCommands::status()
{
    const CtlClient::Reply health = m_client.get(QStringLiteral("/healthz"));
    // A 503 from /healthz is an answer too: alive, but unable to record grants.
    const bool degraded =
        health.status == 503 && health.body.value("reason", "") == "store_unavailable";
    if (!degraded) {
        if (auto code = failure(health))
            return *code;
    }
    // Cluster mode: the role, the leader and every instance; a standby has no state to show.
    const json cluster = health.body.value("cluster", json());
    const QString clusterLine = cluster.is_object() ? describeCluster(cluster) : QString();
    if (cluster.is_object() && cluster.value("role", "") != "leader") {
        if (m_json)
            printJson({{"version", health.body.value("version", "")},
                       {"url", m_client.base().toString().toStdString()},
                       {"cluster", cluster}});
        else
            m_out << "Leasehold " << text(health.body.value("version", json())) << " at "
                  << m_client.base().toString() << "\n"
                  << "cluster:    " << clusterLine << "\n";
        return CtlExit::Ok;
    }
    const CtlClient::Reply s = m_client.get(kBase + QStringLiteral("/status"));
    if (auto code = failure(s))
        return *code;
    if (m_json) {
        json out = s.body;
        if (cluster.is_object())
            out["cluster"] = cluster;
        out["version"] = health.body.value("version", "");
        out["url"] = m_client.base().toString().toStdString();
        out["store"] = health.body.value("store", "ok");
        printJson(out);
        return degraded ? CtlExit::Degraded : CtlExit::Ok;
    }
    int parked = 0;
    for (const json &w : s.body["waiters"])
        parked += w.value("kind", "") == "parked" ? 1 : 0;
    m_out << "Leasehold " << text(health.body.value("version", json())) << " at "
          << m_client.base().toString() << "\n"
          << "store:      "
          << (degraded ? "UNAVAILABLE (" + text(health.body.value("store", json())) +
                             "): " + text(health.body.value("error", json())) + " - grants refused"
                       : QStringLiteral("ok"))
          << "\n"
          << (clusterLine.isEmpty() ? QString() : "cluster:    " + clusterLine + "\n")
          << "admissions: " << (s.body.value("paused", false) ? "PAUSED" : "open") << "\n"
          << "leases:     " << s.body["leases"].size() << "\n"
          << "waiting:    " << parked << " parked, "
          << s.body["waiters"].size() - std::size_t(parked) << " recently refused\n"
          << "deadlocks:  " << s.body["deadlocks"].size() << " live cycle(s)\n"
          << "agents:     " << s.body["agents"].size() << "\n"
          << "grants:     " << text(s.body["counters"].value("grants", json(0))) << ", expiries "
          << text(s.body["counters"].value("expiries", json(0))) << "\n";
    return degraded ? CtlExit::Degraded : CtlExit::Ok;
}

CtlExit CtlCommands::holders()
{
    const CtlClient::Reply s = m_client.get(kBase + QStringLiteral("/status"));
    if (auto code = failure(s))
        return *code;
    // --covers PATH: only the leases that cover it (a folder above it, a pattern matching it).
    const CoverQuery covers(m_parser.value(QStringLiteral("covers")));
    if (!covers.problem().isEmpty()) {
        m_err << "leasehold ctl: --covers " << m_parser.value(QStringLiteral("covers")) << ": "
              << covers.problem() << "\n";
        return CtlExit::Usage;
    }
    json leases = json::array();
    for (const json &l : s.body["leases"])
        if (covers.coveredBy(text(l["resource"])))
            leases.push_back(l);
    if (m_json) {
        printJson(leases);
        return CtlExit::Ok;
    }
    const std::int64_t now = s.body.value("at", std::int64_t(0));
    TextTable table({"RESOURCE", "HOLDER", "MODE", "TOKEN", "HELD", "EXPIRES IN", "LEASE"});
    for (const json &l : leases)
        table.add({text(l["resource"]), text(l["holder"]), text(l["mode"]), text(l["token"]),
                   formatDuration(now - l.value("grantedAt", now)),
                   formatDuration(l.value("expiresAt", now) - now), text(l["leaseId"])});
    m_out << table.render();
    return CtlExit::Ok;
}

CtlExit CtlCommands::wait()
{
    const CtlClient::Reply w = m_client.get(kBase + QStringLiteral("/wait"));
    if (auto code = failure(w))
        return *code;
    if (m_json) {
        printJson(w.body);
        return CtlExit::Ok;
    }
    const std::int64_t now = QDateTime::currentMSecsSinceEpoch();
    TextTable table({"AGENT", "RESOURCE", "KIND", "WAITING FOR", "SINCE", "DEADLINE IN"});
    for (const json &x : w.body["waiters"])
        table.add({text(x["actorDid"]), text(x["resource"]), text(x["kind"]), text(x["holder"]),
                   formatDuration(now - x.value("since", now)),
                   formatDuration(x.value("deadline", now) - now)});
    m_out << table.render();
    if (!w.body["deadlocks"].empty()) {
        m_out << "\ndeadlocks (live cycles; each waits for what the next holds):\n";
        for (const json &d : w.body["deadlocks"]) {
            std::vector<CycleStep> steps;
            for (const json &s : d.value("cycle", json::array()))
                steps.push_back({s.value("agent", ""), s.value("resource", "")});
            m_out << "  " << cyclePath(steps) << "\n";
        }
    }
    return CtlExit::Ok;
}

CtlExit CtlCommands::lever(const QString &route, const json &body, const Describe &done)
{
    const CtlClient::Reply r = m_client.post(kBase + route, body);
    if (auto code = failure(r))
        return *code;
    if (m_json)
        printJson(r.body);
    else
        m_out << done(r.body) << "\n";
    return CtlExit::Ok;
}

CtlExit CtlCommands::keysAdd(const QString &did)
{
    json body = {{"actorDid", did.toStdString()}};
    if (m_parser.isSet(QStringLiteral("role")))
        body["role"] = m_parser.value(QStringLiteral("role")).toStdString();
    const CtlClient::Reply r = m_client.post(kBase + QStringLiteral("/admin/keys"), body);
    if (auto code = failure(r))
        return *code;
    if (m_json) {
        printJson(r.body);
        return CtlExit::Ok;
    }
    m_out << text(r.body["key"]) << "\n";
    m_err << "minted a key for " << did << " (role " << text(r.body["role"]) << ")"
          << "; it is shown only now (the instance keeps its digest)\n";
    return CtlExit::Ok;
}

CtlExit CtlCommands::ledger()
{
    QList<QPair<QString, QString>> filters;
    const std::pair<const char *, const char *> flagToQuery[] = {
        {"agent", "actorDid"}, {"resource", "resource"}, {"kind", "kind"}};
    for (const auto &[flag, query] : flagToQuery) {
        if (m_parser.isSet(QLatin1String(flag)))
            filters.append({QLatin1String(query), m_parser.value(QLatin1String(flag))});
    }
    bool ok = true;
    const int limit = m_parser.isSet("limit") ? m_parser.value("limit").toInt(&ok) : 100;
    if (!ok || limit < 1 || limit > 1000) {
        m_err << "leasehold ctl: --limit must be from 1 to 1000\n";
        return CtlExit::Usage;
    }
    qulonglong since = 0;
    if (m_parser.isSet("since")) {
        since = m_parser.value("since").toULongLong(&ok);
        if (!ok) {
            m_err << "leasehold ctl: --since must be a sequence number\n";
            return CtlExit::Usage;
        }
    } else {
        // The last 20 events, as `tail` would: start from the newest sequence number.
        const CtlClient::Reply s = m_client.get(kBase + QStringLiteral("/status"));
        if (auto code = failure(s))
            return *code;
        const qulonglong newest = s.body.value("lastSeq", qulonglong(0));
        since = newest > 20 ? newest - 20 : 0;
    }
    const bool follow = m_parser.isSet("follow");
    catchInterrupts();
    while (!interrupted()) {
        QList<QPair<QString, QString>> query = filters;
        query.append({QStringLiteral("since"), QString::number(since)});
        query.append({QStringLiteral("limit"), QString::number(limit)});
        const CtlClient::Reply page = m_client.get(kBase + QStringLiteral("/ledger"), query);
        if (auto code = failure(page))
            return *code;
        const json &events = page.body["events"];
        for (const json &e : events)
            printEvent(e);
        m_out.flush();
        since = page.body.value("next", since);
        if (events.size() == std::size_t(limit))
            continue; // more is waiting now
        if (!follow)
            break;
        // Follow: the watch stream from here on; it returns when it cannot resume (the events
        // after `since` left its ring), and the pages above catch up from the store.
        if (auto code = followLedger(since))
            return *code;
    }
    return CtlExit::Ok;
}

// `leasehold run`, `leasehold guard fs` and `leasehold why`: flags, defaults and the dispatch
// to app/guard/fs/.

#include "fscli.h"

#include "guardflags.h"
#include "hookwords.h"
#include "refusallog.h"
#include "refusals.h"
#include "serviceclient.h"
#include "wording.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTextStream>

#include <cstdlib>

#ifdef LEASEHOLD_FSGATE
#include "agentrun.h"
#include "fsguard.h"
#endif

using namespace leasehold;

namespace {

const std::vector<AppFlag> &gateFlags()
{
    static const std::vector<AppFlag> all = {
        {"no-implicit", nullptr,
         "Take no lease for a change to a free file (by default its first change takes one).", ""},
        {"ttl", "SECONDS",
         "How long an implicit lease lasts after the file's last change (default 600).", ""},
        {"stale-after", "SECONDS",
         "Refuse every change once the instance has not been heard from for this long "
         "(default 5).",
         ""},
    };
    return all;
}

// The gate's own flags from `parser`, as `leasehold guard fs` takes them; false after printing
// why one is wrong.
bool forwardGateFlags(const QCommandLineParser &parser, QStringList *out, const char *who)
{
    QTextStream err(stderr);
    if (parser.isSet(QStringLiteral("no-implicit")))
        *out << QStringLiteral("--no-implicit");
    for (const auto &[flag, max] : {std::pair{"ttl", 3600}, std::pair{"stale-after", 600}}) {
        if (!parser.isSet(QLatin1String(flag)))
            continue;
        bool ok = false;
        const int seconds = parser.value(QLatin1String(flag)).toInt(&ok);
        if (!ok || seconds < 1 || seconds > max) {
            err << who << ": --" << flag << " must be 1 to " << max << " seconds\n";
            return false;
        }
        *out << QStringLiteral("--") + QLatin1String(flag) << QString::number(seconds);
    }
    return true;
}

// The folder a run gates by default: the git work tree around `dir` (its top folder), else
// `dir` itself. Found by looking for .git upward, without starting any process.
QString defaultRoot(const QString &dir)
{
    for (QDir d(dir);;) {
        if (QFileInfo::exists(d.filePath(QStringLiteral(".git"))))
            return d.canonicalPath();
        if (!d.cdUp())
            return QDir(dir).canonicalPath();
    }
}

#ifndef LEASEHOLD_FSGATE
int withoutGate(const char *who)
{
    QTextStream(stderr) << who
                        << ": this build has no filesystem gate (it was built without "
                           "libfuse3: install libfuse3-dev and build again)\n";
    return 125;
}
#endif

} // namespace

int runRun(const QStringList &arguments)
{
#ifndef LEASEHOLD_FSGATE
    Q_UNUSED(arguments);
    return withoutGate("leasehold run");
#else
    const qsizetype dashes = arguments.indexOf(QStringLiteral("--"));
    const QStringList own = dashes < 0 ? arguments : arguments.mid(0, dashes);
    const QStringList command = dashes < 0 ? QStringList() : arguments.mid(dashes + 1);
    QCommandLineParser parser;
    int code = 0;
    if (!guardcli::parse(parser, own,
                         QStringLiteral("Runs COMMAND (an agent, a shell, a script) with the "
                                        "workspace replaced by a gated view of itself: a change "
                                        "to a file another agent holds is refused, whatever "
                                        "program makes it. Usage: leasehold run [options] -- "
                                        "COMMAND [ARGS...]"),
                         gateFlags(), &code))
        return code;
    QTextStream err(stderr);
    if (command.isEmpty()) {
        err << "usage: leasehold run [--url URL] [--key KEY | --agent DID] [--root DIR] "
               "[--no-implicit] [--ttl SECONDS] -- COMMAND [ARGS...]\n";
        return 2;
    }
    const auto service = guardcli::serviceFrom(parser, {}, "fs", "leasehold run", 2, &code);
    if (!service)
        return code;
    AgentRunSettings run;
    run.binary = QCoreApplication::applicationFilePath();
    run.root = parser.isSet(QStringLiteral("root"))
                   ? QDir(parser.value(QStringLiteral("root"))).canonicalPath()
                   : defaultRoot(QDir::currentPath());
    if (run.root.isEmpty() || !QFileInfo(run.root).isDir()) {
        err << "leasehold run: --root " << parser.value(QStringLiteral("root"))
            << " is not a folder\n";
        return 2;
    }
    run.command = command;
    if (!forwardGateFlags(parser, &run.gateFlags, "leasehold run"))
        return 2;
    // The gate finds the instance as any guard does: the key travels in its environment, never
    // on a command line others can read.
    run.environment << QStringLiteral("LEASEHOLD_URL=") + service->base.toString();
    if (!service->key.isEmpty())
        run.environment << QStringLiteral("LEASEHOLD_KEY=") + QString::fromUtf8(service->key);
    else if (!service->agent.isEmpty())
        run.environment << QStringLiteral("LEASEHOLD_AGENT=") + service->agent;
    // The run's folder: its refusals, for `leasehold why` and the hooks.
    const QString base = qEnvironmentVariable("XDG_RUNTIME_DIR", QDir::tempPath());
    QByteArray templ = QFile::encodeName(base + QStringLiteral("/leasehold-run-XXXXXX"));
    if (!::mkdtemp(templ.data())) {
        err << "leasehold run: cannot make a run folder in " << base << "\n";
        return 125;
    }
    const QString runDir = QFile::decodeName(templ);
    QFile rootFile(runDir + QStringLiteral("/root"));
    if (rootFile.open(QIODevice::WriteOnly))
        rootFile.write(QFile::encodeName(run.root));
    rootFile.close();
    run.gateFlags << QStringLiteral("--run-dir") << runDir;
    qputenv("LEASEHOLD_RUN", QFile::encodeName(runDir));
    run.releaseRun = [settings = *service] {
        ServiceClient::Settings s = settings;
        s.timeoutMs = 3'000;
        ServiceClient(s).postNow(QLatin1String(ServiceClient::kBase) + QStringLiteral("/release"),
                                 nlohmann::json::object());
    };
    const int status = runAgent(run);
    QDir(runDir).removeRecursively();
    return status;
#endif
}

int guardFs(const QStringList &arguments)
{
#ifndef LEASEHOLD_FSGATE
    Q_UNUSED(arguments);
    return withoutGate("leasehold guard fs");
#else
    QCommandLineParser parser;
    int code = 0;
    std::vector<AppFlag> extra = gateFlags();
    extra.push_back({"mount", "DIR", "Where to serve the gated view (may be --root itself).", ""});
    extra.push_back({"threads", "N", "Workers serving the view (default 8).", ""});
    extra.push_back({"debug", nullptr, "Log every request and refusal on stderr.", ""});
    // Set by `leasehold run`, which starts the gate with the real folder already open.
    extra.push_back({"backing-fd", "FD", "", ""});
    extra.push_back({"ready-fd", "FD", "", ""});
    extra.push_back({"run-dir", "DIR", "", ""});
    if (!guardcli::parse(parser, arguments,
                         QStringLiteral("Serves the folder --root at --mount through the "
                                        "filesystem gate: a change to a file another agent holds "
                                        "is refused (EACCES), whatever program makes it."),
                         extra, &code))
        return code;
    QTextStream err(stderr);
    FsGuardSettings settings;
    settings.mountPoint = parser.value(QStringLiteral("mount"));
    settings.root = parser.value(QStringLiteral("root"));
    bool ok = true;
    if (parser.isSet(QStringLiteral("backing-fd")))
        settings.backingFd = parser.value(QStringLiteral("backing-fd")).toInt(&ok);
    if (ok && parser.isSet(QStringLiteral("ready-fd")))
        settings.readyFd = parser.value(QStringLiteral("ready-fd")).toInt(&ok);
    if (!ok || settings.mountPoint.isEmpty() ||
        (settings.root.isEmpty() && settings.backingFd < 0)) {
        err << "usage: leasehold guard fs --mount DIR --root DIR [--url URL] [--key KEY | "
               "--agent DID] [--no-implicit] [--ttl SECONDS] [--stale-after SECONDS]\n";
        return 2;
    }
    settings.mountPoint = QFileInfo(settings.mountPoint).absoluteFilePath();
    const auto service = guardcli::serviceFrom(parser, {}, "fs", "leasehold guard fs", 2, &code);
    if (!service)
        return code;
    settings.service = *service;
    settings.runDir = parser.value(QStringLiteral("run-dir"));
    settings.implicit = !parser.isSet(QStringLiteral("no-implicit"));
    if (parser.isSet(QStringLiteral("ttl")))
        settings.ttlMs = parser.value(QStringLiteral("ttl")).toLongLong() * 1000;
    if (parser.isSet(QStringLiteral("stale-after")))
        settings.staleAfterMs = parser.value(QStringLiteral("stale-after")).toLongLong() * 1000;
    if (settings.ttlMs < 1000 || settings.staleAfterMs < 1000) {
        err << "leasehold guard fs: --ttl and --stale-after are whole seconds, at least 1\n";
        return 2;
    }
    if (parser.isSet(QStringLiteral("threads")))
        settings.threads = std::clamp(parser.value(QStringLiteral("threads")).toInt(), 1, 64);
    settings.debug = parser.isSet(QStringLiteral("debug"));
    return runFsGuard(settings);
#endif
}

namespace {

// The open release requests against the run's agent (its leases), as the instance tells the
// agent on any call: asked with a POST /check that names nothing (nothing taken, nothing
// recorded). Silent when the instance is not there.
void printReleaseRequests(QTextStream &out, bool json, std::int64_t now)
{
    ServiceClient::Settings s;
    s.base = QUrl(qEnvironmentVariable("LEASEHOLD_URL"));
    s.key = qgetenv("LEASEHOLD_KEY");
    s.agent = qEnvironmentVariable("LEASEHOLD_AGENT");
    s.via = "guard";
    s.timeoutMs = 3'000;
    if (s.base.isEmpty())
        return;
    const ServiceClient::Reply r = ServiceClient(s).postNow(
        QLatin1String(ServiceClient::kBase) + QStringLiteral("/check"), nlohmann::json::object());
    const auto list = r.body.is_object() ? r.body.find("releaseRequests") : r.body.end();
    if (!r.body.is_object() || list == r.body.end() || !list->is_array())
        return;
    if (json) {
        for (const nlohmann::json &request : *list)
            out << QString::fromStdString(nlohmann::json{{"releaseRequest", request}}.dump())
                << "\n";
        return;
    }
    const QString text = hookwords::releaseRequests(r.body, now);
    if (!text.isEmpty())
        out << text << "\n";
}

} // namespace

int runWhy(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Inside `leasehold run`: the changes the gate refused lately, each with "
                       "who holds the file and what to do."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("path"), QStringLiteral("Only this file or "
                                                                        "folder (and below)."));
    parser.addOption({QStringLiteral("since"),
                      QStringLiteral("Only the last SECONDS (default "
                                     "600)."),
                      QStringLiteral("SECONDS"), QStringLiteral("600")});
    parser.addOption({QStringLiteral("json"), QStringLiteral("One JSON object per refusal.")});
    if (!parser.parse(arguments)) {
        QTextStream(stderr) << "leasehold why: " << parser.errorText() << "\n";
        return 2;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << parser.helpText();
        return 0;
    }
    QTextStream out(stdout);
    const QString runDir = qEnvironmentVariable("LEASEHOLD_RUN");
    if (runDir.isEmpty()) {
        QTextStream(stderr) << "leasehold why: not inside `leasehold run` (LEASEHOLD_RUN is not "
                               "set)\n";
        return 2;
    }
    QFile rootFile(runDir + QStringLiteral("/root"));
    const QString root =
        rootFile.open(QIODevice::ReadOnly) ? QFile::decodeName(rootFile.readAll()) : QString();
    QString only;
    if (!parser.positionalArguments().isEmpty()) {
        const QString abs = QFileInfo(parser.positionalArguments().first()).absoluteFilePath();
        only = QDir(root).relativeFilePath(abs);
        if (only == QLatin1String("."))
            only.clear();
    }
    const std::int64_t now = QDateTime::currentMSecsSinceEpoch();
    const std::int64_t since = now - parser.value(QStringLiteral("since")).toLongLong() * 1000;
    int shown = 0;
    for (const fsgate::Refusal &r : fsgate::RefusalLog::read(
             (runDir + QStringLiteral("/refusals.jsonl")).toStdString(), since)) {
        const QString path = QString::fromStdString(r.path);
        if (!only.isEmpty() && path != only && !path.startsWith(only + QLatin1Char('/')))
            continue;
        ++shown;
        if (parser.isSet(QStringLiteral("json"))) {
            out << QString::fromStdString(fsgate::RefusalLog::toLine(r));
            continue;
        }
        out << QString::fromStdString(r.op) << " of " << path << " by "
            << QString::fromStdString(r.command) << " (pid " << r.pid << "), "
            << formatDuration(now - r.at) << " ago: ";
        if (r.reason != "lease_held") {
            out << "refused: the instance could not be heard from, so nobody could say whose "
                   "file it is. Nothing was changed; try again once `leasehold ctl status` "
                   "answers.\n";
            continue;
        }
        Refusal no;
        no.resource = r.resource;
        no.holder = r.holder;
        no.heldResource = r.heldResource;
        no.heldForMs = r.grantedAt > 0 ? now - r.grantedAt : 0;
        no.expiresInMs = std::max<std::int64_t>(0, r.expiresAt - now);
        // Words for a program in a shell: it did not change the file; wait, or work elsewhere.
        const NextSteps shell{QStringLiteral("the same command"),
                              QStringLiteral("leasehold ctl release"),
                              QStringLiteral("leasehold why")};
        out << refusalSentence(no, shell) << "\n";
    }
    if (shown == 0 && !parser.isSet(QStringLiteral("json")))
        out << "nothing was refused" << (only.isEmpty() ? QString() : " at " + only)
            << " in the last " << formatDuration(now - since) << "\n";
    // What others ask of this run: the release requests against the leases it holds.
    printReleaseRequests(out, parser.isSet(QStringLiteral("json")), now);
    return 0;
}

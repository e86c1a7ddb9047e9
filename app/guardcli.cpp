// The command lines of the guards and hooks: flags, where the instance is, and the dispatch to
// app/guard/.

#include "guardcli.h"
#include "guardflags.h"

#include "connection.h"
#include "fscli.h"
#include "gitguard.h"
#include "hookdialect.h"
#include "hookinstall.h"
#include "hookrun.h"
#include "innerhttp.h"
#include "innerserver.h"
#include "mcpguard.h"
#include "options.h"
#include "stdiochannel.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextStream>

#include <cstdio>

namespace {

using guardcli::parse;
using guardcli::serviceFrom;

int hookAgent(const HookDialect &dialect, const QStringList &arguments)
{
    QCommandLineParser parser;
    int code = 0;
    const std::vector<AppFlag> extra = {
        {"ttl", "SECONDS", "How long an edit's lease lasts without another edit (default 600).",
         ""},
        {"wait", "SECONDS",
         "How long an edit of a held file waits for it before it is denied (0 to 30, default "
         "20); the hook answers within this plus 5 s.",
         ""},
        {"event", "NAME",
         "The event's name, for agents whose payload does not carry it (Copilot CLI).", ""},
    };
    if (!parse(parser, arguments,
               QStringLiteral("Answers one %1 hook event read from stdin, in its format. Install "
                              "it with `leasehold ctl install-hooks %1`.")
                   .arg(dialect.name()),
               extra, &code)) {
        if (code == 0)
            return 0; // --help
        // Every answer exits 0: an agent lets a call through when its hook fails, except
        // Copilot CLI, which denies it; a bad command line is answered like an unreadable event.
        const HookAnswer answer = HookRun::cannotJudge(
            dialect, {}, QStringLiteral("the hook's command line is not understood"));
        std::fwrite(answer.out.constData(), 1, std::size_t(answer.out.size()), stdout);
        return answer.exitCode;
    }
    HookRun::Settings settings;
    QString problem;
    const auto service = serviceFrom(parser, {}, "hook", "leasehold hook", 0, &code);
    if (service)
        settings.service = *service;
    else
        problem = QStringLiteral("command line names no instance it can use");
    settings.root = parser.value(QStringLiteral("root"));
    settings.strict = parser.isSet(QStringLiteral("strict"));
    settings.eventName = parser.value(QStringLiteral("event"));
    settings.runFolder = qEnvironmentVariable("LEASEHOLD_RUN");
    auto seconds = [&](const char *flag, qint64 min, qint64 max, qint64 *ms) {
        if (!parser.isSet(QLatin1String(flag)))
            return;
        bool ok = false;
        const qint64 value = parser.value(QLatin1String(flag)).toLongLong(&ok);
        if (!ok || value < min || value > max)
            problem = QStringLiteral("--%1 must be %2 to %3 seconds")
                          .arg(QLatin1String(flag))
                          .arg(min)
                          .arg(max);
        else
            *ms = value * 1000;
    };
    seconds("ttl", 1, 3600, &settings.ttlMs);
    seconds("wait", 0, hookinstall::kMaxWaitSeconds, &settings.waitMs);
    QFile in;
    const QByteArray event = in.open(stdin, QIODevice::ReadOnly) ? in.readAll() : QByteArray();
    HookAnswer answer;
    if (!problem.isEmpty()) {
        // Nothing can be asked: answered as the dialect answers an event it cannot judge.
        answer = HookRun::cannotJudge(dialect, settings, QStringLiteral("the hook's ") + problem);
    } else {
        answer = HookRun::runNow(dialect, event, settings);
    }
    std::fwrite(answer.out.constData(), 1, std::size_t(answer.out.size()), stdout);
    std::fwrite(answer.err.constData(), 1, std::size_t(answer.err.size()), stderr);
    return answer.exitCode;
}

int guardGit(const QStringList &arguments)
{
    QCommandLineParser parser;
    int code = 0;
    parser.addPositionalArgument(QStringLiteral("step"),
                                 QStringLiteral("install, pre-commit or pre-push"));
    if (!parse(parser, arguments,
               QStringLiteral("Refuses a commit or push that changes a path under another agent's "
                              "write lease. `install` writes the repository's pre-commit and "
                              "pre-push hooks; LEASEHOLD_GUARD=off lets a person through."),
               {{"data-dir", "DIR", "The instance's data directory (for its admin key).", ""}},
               &code))
        return code;
    const QString step = parser.positionalArguments().value(0);
    QTextStream err(stderr);
    if (parser.positionalArguments().size() != 1 ||
        (step != QLatin1String("install") && step != QLatin1String("pre-commit") &&
         step != QLatin1String("pre-push"))) {
        err << "usage: leasehold guard git install|pre-commit|pre-push [--url URL] [--key KEY | "
               "--agent DID] [--root DIR] [--strict]\n";
        return 2;
    }
    // A person committing speaks with the instance's admin key when it has no key of its own.
    const auto service = serviceFrom(parser, {.adminFallback = true, .agentFlag = true}, "git",
                                     "leasehold guard git", 2, &code);
    if (!service)
        return code;
    GitGuard::Settings settings;
    settings.service = *service;
    if (settings.service.key.isEmpty() && settings.service.agent.isEmpty())
        settings.service.agent =
            QStringLiteral("did:op:") + qEnvironmentVariable("USER", QStringLiteral("person"));
    settings.workTree = QDir::currentPath();
    settings.root = parser.value(QStringLiteral("root"));
    settings.strict = parser.isSet(QStringLiteral("strict"));
    GitGuard::Outcome outcome;
    if (step == QLatin1String("install")) {
        QStringList flags;
        for (const char *flag : {"url", "root", "agent"})
            if (parser.isSet(QLatin1String(flag)))
                flags << QStringLiteral("--") + QLatin1String(flag)
                      << parser.value(QLatin1String(flag));
        if (settings.strict)
            flags << QStringLiteral("--strict");
        outcome = GitGuard::install(settings, QCoreApplication::applicationFilePath(), flags);
    } else if (step == QLatin1String("pre-commit")) {
        outcome = GitGuard::preCommit(settings);
    } else {
        QFile in;
        if (!in.open(stdin, QIODevice::ReadOnly))
            return 1;
        outcome = GitGuard::prePush(settings, in.readAll());
    }
    QTextStream(stdout) << outcome.out;
    err << outcome.err;
    return outcome.exitCode;
}

int guardMcp(const QStringList &arguments)
{
    // Everything after "--" is the inner server's command line, not ours.
    const qsizetype dashes = arguments.indexOf(QStringLiteral("--"));
    const QStringList own = dashes < 0 ? arguments : arguments.mid(0, dashes);
    const QStringList inner = dashes < 0 ? QStringList() : arguments.mid(dashes + 1);
    QCommandLineParser parser;
    int code = 0;
    const std::vector<AppFlag> extra = {
        {"enforced-tools", "PATTERNS",
         "Comma-separated glob patterns of the inner tools that change files (default: write*, "
         "edit*, move*, delete*, patch*, create_directory, rename*, remove*, apply_patch*).",
         ""},
        {"path-params", "TOOL=P1,P2",
         "The path arguments of TOOL (repeatable; default: path, paths, source, destination, "
         "file_path).",
         ""},
        {"inner-url", "URL", "The inner server over Streamable HTTP instead of a command.", ""},
        {"inner-header", "NAME: VALUE", "A header for every request to --inner-url (repeatable).",
         ""},
        {"presence-every", "SECONDS",
         "Tell the instance the agent is live at least this often while its client is active "
         "(default 60).",
         ""},
        {"no-publish-tools", nullptr,
         "Do not add lock_acquire, lock_release and lock_status to the tool list.", ""},
    };
    if (!parse(parser, own,
               QStringLiteral("An MCP server on stdio in front of another (-- COMMAND [ARGS...]): "
                              "its tools that change files are checked against Leasehold's leases, "
                              "and Leasehold's lock tools are added."),
               extra, &code))
        return code;
    QTextStream err(stderr);
    const QString innerUrl = parser.value(QStringLiteral("inner-url"));
    if (inner.isEmpty() == innerUrl.isEmpty()) {
        err << "usage: leasehold guard mcp [--url URL] [--key KEY | --agent DID] [--root DIR] "
               "[--enforced-tools PATTERNS] [--path-params TOOL=P,...]... [--no-publish-tools] "
               "(-- COMMAND [ARGS...] | --inner-url URL)\n";
        return 2;
    }
    const auto service = serviceFrom(parser, {}, "guard", "leasehold guard mcp", 2, &code);
    if (!service)
        return code;
    QHash<QString, QStringList> pathParams;
    for (const QString &v : parser.values(QStringLiteral("path-params"))) {
        if (!ToolPolicy::parsePathParams(v, &pathParams)) {
            err << "leasehold guard mcp: --path-params " << v
                << ": expected TOOL=PARAM[,PARAM...]\n";
            return 2;
        }
    }
    QStringList patterns;
    if (parser.isSet(QStringLiteral("enforced-tools")))
        patterns = parser.value(QStringLiteral("enforced-tools"))
                       .split(QLatin1Char(','), Qt::SkipEmptyParts);
    int presenceEveryS = 60;
    if (parser.isSet(QStringLiteral("presence-every"))) {
        bool ok = false;
        presenceEveryS = parser.value(QStringLiteral("presence-every")).toInt(&ok);
        if (!ok || presenceEveryS < 0 || presenceEveryS > 3600) {
            err << "leasehold guard mcp: --presence-every must be 0 to 3600 seconds\n";
            return 2;
        }
    }
    McpGuard::Settings settings{*service,
                                parser.isSet(QStringLiteral("root"))
                                    ? parser.value(QStringLiteral("root"))
                                    : QDir::currentPath(),
                                ToolPolicy(patterns, pathParams),
                                !parser.isSet(QStringLiteral("no-publish-tools")),
                                parser.isSet(QStringLiteral("strict")),
                                presenceEveryS * 1000};
    std::unique_ptr<InnerTransport> server;
    if (!innerUrl.isEmpty()) {
        QList<QPair<QByteArray, QByteArray>> headers;
        for (const QString &h : parser.values(QStringLiteral("inner-header"))) {
            const qsizetype colon = h.indexOf(QLatin1Char(':'));
            if (colon <= 0) {
                err << "leasehold guard mcp: --inner-header " << h << ": expected NAME: VALUE\n";
                return 2;
            }
            headers.append({h.left(colon).trimmed().toUtf8(), h.mid(colon + 1).trimmed().toUtf8()});
        }
        server = std::make_unique<InnerHttp>(QUrl(innerUrl), headers);
    } else {
        server = std::make_unique<InnerServer>(inner.first(), inner.mid(1));
    }
    StdioChannel client;
    McpGuard guard(std::move(settings), &StdioChannel::send,
                   [&server](const nlohmann::json &m) { server->send(m); });
    QObject::connect(&client, &StdioChannel::message, &guard, &McpGuard::fromClient);
    QObject::connect(server.get(), &InnerTransport::message, &guard, &McpGuard::fromInner);
    QObject::connect(server.get(), &InnerTransport::died, &guard, [&guard](const QString &why) {
        QTextStream(stderr) << "leasehold guard mcp: " << why << "\n";
        guard.innerDied(why);
    });
    // The client closing stdin ends the session: the inner server's stdin is closed in turn.
    QObject::connect(&client, &StdioChannel::closed, QCoreApplication::instance(),
                     [] { QCoreApplication::exit(0); });
    server->start();
    client.start();
    return QCoreApplication::exec();
}

} // namespace

int runHook(const QStringList &arguments)
{
    if (const HookDialect *dialect = HookDialect::find(arguments.value(1))) {
        QStringList rest = arguments;
        rest.removeAt(1);
        return hookAgent(*dialect, rest);
    }
    QTextStream(stderr) << "usage: leasehold hook " << HookDialect::names().join(QLatin1Char('|'))
                        << " [--url URL] [--key KEY | --agent DID] [--root DIR] [--wait SECONDS] "
                           "[--ttl SECONDS] [--event NAME] [--strict]\n"
                           "(installed by `leasehold ctl install-hooks NAME`; see docs/guard.md)\n";
    return 2;
}

int runGuard(const QStringList &arguments)
{
    const QString which = arguments.value(1);
    QStringList rest = arguments;
    if (rest.size() > 1)
        rest.removeAt(1);
    if (which == QLatin1String("git"))
        return guardGit(rest);
    if (which == QLatin1String("mcp"))
        return guardMcp(rest);
    if (which == QLatin1String("fs"))
        return guardFs(rest);
    QTextStream(stderr) << "usage: leasehold guard mcp|git|fs ... (" << arguments.value(1)
                        << " is not a guard)\n";
    return 2;
}

int installHooks(const QString &agent, const QString &projectDir, bool user,
                 const QStringList &hookFlags, int waitSeconds)
{
    hookinstall::Request request;
    request.agent = agent;
    request.projectDir = projectDir;
    request.user = user;
    request.program = hookinstall::programFor(QCoreApplication::applicationFilePath());
    request.flags = hookFlags;
    request.waitSeconds = waitSeconds;
    const hookinstall::Result result = hookinstall::install(request);
    QTextStream(stdout) << result.out;
    QTextStream(stderr) << result.err;
    return result.exitCode;
}

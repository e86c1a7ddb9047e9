// leasehold ctl: options, where the URL and key come from, and the dispatch to each command
// (ctlcommands.cpp; the table of commands: ctltable.cpp).

#include "ctl.h"

#include "connection.h"
#include "ctlclient.h"
#include "ctlcommands.h"
#include "keystore.h"
#include "options.h"

#include <QCommandLineParser>
#include <QDir>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTextStream>

using namespace leasehold;

namespace {

const std::vector<AppFlag> &flags()
{
    static const std::vector<AppFlag> all = {
        {"url", "URL",
         "The instance (default: $LEASEHOLD_URL, the config file, http://127.0.0.1:7878).", ""},
        {"key", "KEY", "Bearer key (default: $LEASEHOLD_KEY, else the data directory's admin key).",
         ""},
        {"config", "FILE", "The instance's config file (for its address and data directory).", ""},
        {"data-dir", "DIR", "The instance's data directory (for its admin key).", ""},
        {"json", nullptr, "Print JSON instead of a table (JSON Lines for ledger).", ""},
        {"timeout", "SECONDS", "Give up on a request after this long (default 10).", ""},
        {"since", "SEQ", "ledger: events after this sequence number (default: the last 20).", ""},
        {"limit", "N", "ledger: at most this many events per page (default 100).", ""},
        {"agent", "DID", "ledger: only this agent's events.", ""},
        {"resource", "NAME", "ledger: only this resource and what is below it.", ""},
        {"covers", "PATH",
         "holders: only the leases that cover PATH (a folder above it, a pattern matching it).",
         ""},
        {"kind", "KIND", "ledger: only this kind, e.g. coordination.lease.expired.", ""},
        {"follow", nullptr, "ledger: keep printing new events until interrupted.", ""},
        {"prefix", "PREFIX", "watch: only names that start with PREFIX, e.g. fs: or lock:deploy/.",
         ""},
        {"role", "ROLE", "keys add: agent (default) or admin.", ""},
        {"yes", nullptr, "release-all: really release every lease.", ""},
        {"not-live-for", "DURATION",
         "sweep: holders live on no surface and not seen for this long (10m, 2h, 1d).", ""},
        {"dry-run", nullptr, "sweep: list what would be released, release nothing.", ""},
        {"secret", "SECRET", "webhooks add: the key the deliveries are signed with.", ""},
        {"events", "LIST",
         "webhooks add: the events to send, comma-separated (default all): deadlock, expired, "
         "force_release, release_request, suspended, store, leader, hot_resource.",
         ""},
        {"format", "FORMAT", "webhooks add: json (default) or slack ({\"text\": ...}).", ""},
        {"project", "DIR", "install-hooks: the project folder (default: the current one).", ""},
        {"user", nullptr,
         "install-hooks: the user's own configuration (e.g. ~/.claude) instead of a project's.",
         ""},
        {"wait", "SECONDS",
         "install-hooks: how long an edit of a held file waits for it (0 to 30, default 20).", ""},
    };
    return all;
}

} // namespace

QStringList ctlFlags()
{
    QStringList names;
    for (const AppFlag &f : flags())
        names << QLatin1String(f.name);
    return names;
}

int runCtl(const QStringList &arguments)
{
    QTextStream err(stderr);
    QCommandLineParser parser;
    QString description = QStringLiteral("Talks to a running Leasehold instance.\n\nCommands:\n");
    for (const CtlCommand &c : ctlCommands())
        description +=
            QStringLiteral("  %1 %2\n      %3\n")
                .arg(QLatin1String(c.name), QLatin1String(c.arguments), QLatin1String(c.summary));
    description += QStringLiteral("\nExit codes: 0 done, 1 refused or not found, 2 bad usage, "
                                  "3 instance unreachable, 4 key missing or not allowed, "
                                  "5 unexpected answer, 6 (status) the service cannot record "
                                  "grants (its store is unavailable).");
    parser.setApplicationDescription(description);
    parser.addHelpOption();
    addFlags(parser, flags());
    parser.addPositionalArgument(QStringLiteral("command"),
                                 QStringLiteral("What to do (see above)."));
    if (!parser.parse(arguments)) {
        err << "leasehold ctl: " << parser.errorText() << "\n";
        return int(CtlExit::Usage);
    }
    const QStringList args = parser.positionalArguments();
    if (parser.isSet(QStringLiteral("help")) || args.isEmpty()) {
        QTextStream(args.isEmpty() && !parser.isSet("help") ? stderr : stdout) << parser.helpText();
        return int(args.isEmpty() && !parser.isSet("help") ? CtlExit::Usage : CtlExit::Ok);
    }

    // Where the instance is and which key to use: flags, environment, config, data directory.
    QString error;
    const std::optional<Connection> to =
        Connection::resolve(parser, {.adminFallback = true, .agentFlag = false}, &error);
    if (!to) {
        err << "leasehold ctl: " << error << "\n";
        return int(CtlExit::Usage);
    }
    CtlClient client(to->url, to->key, to->timeoutMs);
    CtlCommands commands(client, parser, parser.isSet("json"));
    return int(commands.run(args));
}

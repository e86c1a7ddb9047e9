// leasehold ctl: options, where the URL and key come from, and the dispatch to each command
// (ctl_commands.cpp).

#include "ctl.h"

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
        {"kind", "KIND", "ledger: only this kind, e.g. coordination.lease.expired.", ""},
        {"follow", nullptr, "ledger: keep printing new events until interrupted.", ""},
        {"role", "ROLE", "keys add: agent (default) or admin.", ""},
        {"yes", nullptr, "release-all: really release every lease.", ""},
    };
    return all;
}

QString readAdminKey(const QString &dataDir)
{
    QString error;
    const auto entries =
        KeyStore::readKeysFile(QDir(dataDir).filePath(QStringLiteral("keys.json")), &error);
    for (const KeyFileEntry &e : entries.value_or(std::vector<KeyFileEntry>{})) {
        if (e.identity.role == Role::Admin)
            return QString::fromLatin1(e.key);
    }
    return {};
}

} // namespace

const std::vector<CtlCommand> &ctlCommands()
{
    static const std::vector<CtlCommand> all = {
        {"status", "", "Version, counts, and whether admissions are open"},
        {"holders", "", "Every lease: resource, holder, token, since when, expires in"},
        {"wait", "", "Parked waits and recent refusals, with who they wait for; deadlock pairs"},
        {"release-holder", "DID", "Release everything DID holds"},
        {"release-all", "--yes", "Release every lease of every agent"},
        {"suspend", "DID", "Refuse DID until unsuspended"},
        {"unsuspend", "DID", "Let DID acquire again"},
        {"pause", "", "Refuse new requests (held leases stay)"},
        {"resume", "", "Admit requests again"},
        {"ledger", "", "Ledger events (--since, --limit, --agent, --resource, --kind, --follow)"},
        {"keys", "add DID", "Mint a key for DID (shown once; the instance keeps a digest)"},
    };
    return all;
}

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
    QJsonObject config;
    if (parser.isSet("config")) {
        const std::optional<QJsonObject> read = readConfigFile(parser.value("config"));
        if (!read) {
            err << "leasehold ctl: --config " << parser.value("config")
                << ": not a readable JSON object\n";
            return int(CtlExit::Usage);
        }
        config = *read;
    }
    QString url = parser.value("url");
    if (url.isEmpty())
        url = qEnvironmentVariable("LEASEHOLD_URL");
    if (url.isEmpty())
        url = QStringLiteral("http://%1:%2")
                  .arg(config.value("bind").toString(QStringLiteral("127.0.0.1")))
                  .arg(config.value("port").toInt(7878));
    QString key = parser.value("key");
    if (key.isEmpty())
        key = qEnvironmentVariable("LEASEHOLD_KEY");
    if (key.isEmpty()) {
        QString dir = parser.value("data-dir");
        if (dir.isEmpty())
            dir = config.value("dataDir").toString();
        if (dir.isEmpty())
            dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
        key = readAdminKey(dir);
    }
    bool ok = false;
    const int timeout = parser.isSet("timeout") ? parser.value("timeout").toInt(&ok) : 10;
    if (parser.isSet("timeout") && (!ok || timeout <= 0)) {
        err << "leasehold ctl: --timeout must be a whole number of seconds\n";
        return int(CtlExit::Usage);
    }
    const QUrl base(url);
    if (!base.isValid() ||
        (base.scheme() != QLatin1String("http") && base.scheme() != QLatin1String("https"))) {
        err << "leasehold ctl: --url must be an http:// URL (got " << url << ")\n";
        return int(CtlExit::Usage);
    }

    CtlClient client(base, key.toUtf8(), timeout * 1000);
    CtlCommands commands(client, parser, parser.isSet("json"));
    return int(commands.run(args));
}

#include "options.h"

#include "configfile.h"
#include "etcdclient.h"
#include "version.h"

#include <QCommandLineParser>
#include <QFile>
#include <QTextStream>
#include <QUrl>

const std::vector<AppFlag> &appFlags()
{
    static const std::vector<AppFlag> all = {
        {"headless", nullptr, "Run without a window (servers, CI).", ""},
        {"port", "N", "Port to listen on (0 picks a free one).", "7878"},
        {"bind", "ADDR", "Address to bind (default 127.0.0.1).", "127.0.0.1"},
        {"open", nullptr,
         "Let agents name themselves without keys (loopback only; admin routes still need one).",
         ""},
        {"keys", "FILE", "JSON file of bearer keys and their agents.", ""},
        {"workspace", "DIR", "Workspace root for path resources.", ""},
        {"data-dir", "DIR", "Where state (ledger, leases, keys) lives.", ""},
        {"in-memory", nullptr,
         "Keep leases, trust and the ledger in memory only: nothing survives a restart (keys "
         "still come from the data directory).",
         ""},
        {"config", "FILE", "JSON config file; flags override it.", ""},
        {"demo", nullptr, "Drive simulated agents over loopback HTTP so every view is alive.", ""},
        {"etcd", "URLS",
         "Cluster mode: keep state in etcd (comma-separated client URLs) and lead or stand by.",
         ""},
        {"advertise", "URL", "Cluster mode: where standbys send agents (default: this listener).",
         ""},
        {"etcd-prefix", "PREFIX", "Cluster mode: the etcd key prefix (default leasehold/).", ""},
        {"session-ttl", "SECONDS", "Cluster mode: the leader's etcd session (default 3).", ""},
        {"etcd-ca", "FILE", "Cluster mode: the CA of https:// etcd members (PEM).", ""},
        {"etcd-cert", "FILE", "Cluster mode: this instance's etcd client certificate (PEM).", ""},
        {"etcd-key", "FILE", "Cluster mode: the key of --etcd-cert (PEM).", ""},
    };
    return all;
}

void addFlags(QCommandLineParser &parser, const std::vector<AppFlag> &flags)
{
    for (const AppFlag &f : flags)
        parser.addOption(f.value
                             ? QCommandLineOption(QLatin1String(f.name), QLatin1String(f.help),
                                                  QLatin1String(f.value), QLatin1String(f.fallback))
                             : QCommandLineOption(QLatin1String(f.name), QLatin1String(f.help)));
}

ParsedOptions parseOptions(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Leasehold: an operator console and lease engine that keeps a fleet of AI "
                       "agents from changing the same thing at once.\n\n"
                       "Agents ask over REST (/api/v1/acp/coordination) and MCP (/mcp) on one "
                       "port; the window shows holders, queues, deadlocks and trust, and pulls "
                       "the levers. Without a display it runs headless.\n\n"
                       "leasehold ctl COMMAND talks to a running instance (leasehold ctl "
                       "--help); leasehold completion bash prints shell completion."));
    parser.addHelpOption();
    parser.addVersionOption();
    addFlags(parser, appFlags());
    const QString headless = QStringLiteral("headless"), port = QStringLiteral("port"),
                  bind = QStringLiteral("bind"), open = QStringLiteral("open"),
                  keys = QStringLiteral("keys"), workspace = QStringLiteral("workspace"),
                  dataDir = QStringLiteral("data-dir"), config = QStringLiteral("config"),
                  demo = QStringLiteral("demo"), inMemory = QStringLiteral("in-memory");

    ParsedOptions result;
    if (!parser.parse(arguments)) {
        QTextStream(stderr) << "leasehold: " << parser.errorText() << "\n";
        result.exitCode = 2;
        return result;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << parser.helpText();
        return result;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        QTextStream(stdout) << "leasehold " << LEASEHOLD_VERSION << "\n";
        return result;
    }
    if (!parser.positionalArguments().isEmpty()) {
        QTextStream(stderr) << "leasehold: unexpected argument '"
                            << parser.positionalArguments().first() << "'\n";
        result.exitCode = 2;
        return result;
    }

    AppOptions o;
    if (parser.isSet(config)) {
        // Settings from the config file first; flags given on the command line override them.
        QString error;
        if (!readConfig(parser.value(config), o, &error)) {
            QTextStream(stderr) << "leasehold: " << error << "\n";
            result.exitCode = 2;
            return result;
        }
    }
    o.headless = parser.isSet(headless);
    o.open = o.open || parser.isSet(open);
    o.demo = parser.isSet(demo);
    o.inMemory = o.inMemory || parser.isSet(inMemory);
    if (parser.isSet(port)) {
        bool ok = false;
        const uint portValue = parser.value(port).toUInt(&ok);
        if (!ok || portValue > 65535) {
            QTextStream(stderr) << "leasehold: --port must be a number from 0 to 65535\n";
            result.exitCode = 2;
            return result;
        }
        o.port = static_cast<quint16>(portValue);
    }
    auto flag = [&parser](const QString &option, QString &field) {
        if (parser.isSet(option))
            field = parser.value(option);
    };
    flag(bind, o.bind);
    flag(keys, o.keysFile);
    flag(workspace, o.workspace);
    flag(dataDir, o.dataDir);
    if (parser.isSet(QStringLiteral("etcd")))
        o.etcd = parser.value(QStringLiteral("etcd")).split(QLatin1Char(','), Qt::SkipEmptyParts);
    flag(QStringLiteral("advertise"), o.advertise);
    flag(QStringLiteral("etcd-prefix"), o.etcdPrefix);
    flag(QStringLiteral("etcd-ca"), o.etcdCaFile);
    flag(QStringLiteral("etcd-cert"), o.etcdCertFile);
    flag(QStringLiteral("etcd-key"), o.etcdKeyFile);
    if (parser.isSet(QStringLiteral("session-ttl"))) {
        bool ok = false;
        o.sessionTtlSeconds = parser.value(QStringLiteral("session-ttl")).toInt(&ok);
        if (!ok || o.sessionTtlSeconds < 2 || o.sessionTtlSeconds > 600) {
            QTextStream(stderr) << "leasehold: --session-ttl must be 2 to 600 seconds\n";
            result.exitCode = 2;
            return result;
        }
    }
    bool https = false;
    for (const QString &url : o.etcd) {
        const QUrl parsed(url.trimmed());
        https = https || parsed.scheme() == QLatin1String("https");
        if (!parsed.isValid() ||
            (parsed.scheme() != QLatin1String("http") &&
             parsed.scheme() != QLatin1String("https")) ||
            parsed.host().isEmpty() || parsed.port() <= 0) {
            QTextStream(stderr)
                << "leasehold: --etcd (and the config's etcd.endpoints) takes http(s)://HOST:PORT "
                   "client URLs (got '"
                << url << "')\n";
            result.exitCode = 2;
            return result;
        }
    }
    const bool tlsFiles =
        !o.etcdCaFile.isEmpty() || !o.etcdCertFile.isEmpty() || !o.etcdKeyFile.isEmpty();
    if (tlsFiles && !https) {
        QTextStream(stderr) << "leasehold: --etcd-ca, --etcd-cert and --etcd-key are for "
                               "https:// etcd members; --etcd names none\n";
        result.exitCode = 2;
        return result;
    }
    if (https) {
        std::string problem;
        if (!leasehold::etcd::Client::tlsConfiguration(
                {o.etcdCaFile, o.etcdCertFile, o.etcdKeyFile}, &problem)) {
            QTextStream(stderr) << "leasehold: " << problem.c_str() << "\n";
            result.exitCode = 2;
            return result;
        }
    }
    if (!o.etcd.isEmpty() && o.inMemory) {
        QTextStream(stderr) << "leasehold: --etcd keeps state in etcd; it cannot run --in-memory\n";
        result.exitCode = 2;
        return result;
    }
    o.configFile = parser.value(config);
    result.options = o;
    return result;
}

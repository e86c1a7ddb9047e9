#include "options.h"

#include "version.h"

#include <QCommandLineParser>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

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

std::optional<QJsonObject> readConfigFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll());
    if (!doc.isObject())
        return std::nullopt;
    return doc.object();
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
        const std::optional<QJsonObject> read = readConfigFile(parser.value(config));
        if (!read) {
            QTextStream(stderr) << "leasehold: --config " << parser.value(config)
                                << ": not a readable JSON object\n";
            result.exitCode = 2;
            return result;
        }
        const QJsonObject &c = *read;
        o.port = static_cast<quint16>(c.value(QStringLiteral("port")).toInt(o.port));
        o.bind = c.value(QStringLiteral("bind")).toString(o.bind);
        o.open = c.value(QStringLiteral("open")).toBool(false);
        o.keysFile = c.value(QStringLiteral("keys")).toString();
        o.workspace = c.value(QStringLiteral("workspace")).toString();
        o.dataDir = c.value(QStringLiteral("dataDir")).toString();
        o.inMemory = c.value(QStringLiteral("inMemory")).toBool(false);
        for (const QJsonValue &v : c.value(QStringLiteral("allowedHosts")).toArray())
            o.allowedHosts << v.toString();
        o.liveWindowSeconds = qBound(
            5, c.value(QStringLiteral("liveWindowSeconds")).toInt(o.liveWindowSeconds), 86400);
        o.mcpProgressMs =
            qBound(100, c.value(QStringLiteral("mcpProgressMs")).toInt(o.mcpProgressMs), 600'000);
        o.ledgerRetainRows = qBound<qint64>(
            1000, c.value(QStringLiteral("ledgerRetainRows")).toInteger(o.ledgerRetainRows),
            qint64(1) << 40);
        o.ledgerRetainDays =
            qBound(1, c.value(QStringLiteral("ledgerRetainDays")).toInt(o.ledgerRetainDays), 36500);
        for (const QJsonValue &v : c.value(QStringLiteral("exclusive")).toArray())
            o.exclusive << v.toString();
        o.maxConnections =
            qBound(0, c.value(QStringLiteral("maxConnections")).toInt(o.maxConnections), 1'000'000);
        o.headTimeoutMs =
            qBound(100, c.value(QStringLiteral("headTimeoutMs")).toInt(o.headTimeoutMs), 600'000);
        o.storeTimeoutMs =
            qBound(100, c.value(QStringLiteral("storeTimeoutMs")).toInt(o.storeTimeoutMs), 600'000);
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
    o.configFile = parser.value(config);
    result.options = o;
    return result;
}

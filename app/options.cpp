#include "options.h"

#include "version.h"

#include <QCommandLineParser>
#include <QTextStream>

ParsedOptions parseOptions(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Leasehold: an operator console and lease engine that keeps a fleet of AI "
                       "agents from changing the same thing at once.\n\n"
                       "This build carries the lease engine only: the HTTP service (REST and "
                       "MCP) and the console window are not in it yet, so every mode prints the "
                       "configuration it would run with and exits."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption headless(QStringLiteral("headless"),
                                      QStringLiteral("Run without a window (servers, CI)."));
    const QCommandLineOption port(QStringLiteral("port"),
                                  QStringLiteral("Port to listen on (0 picks a free one)."),
                                  QStringLiteral("N"), QStringLiteral("7878"));
    const QCommandLineOption bind(QStringLiteral("bind"),
                                  QStringLiteral("Address to bind (default 127.0.0.1)."),
                                  QStringLiteral("ADDR"), QStringLiteral("127.0.0.1"));
    const QCommandLineOption open(QStringLiteral("open"),
                                  QStringLiteral("Let agents name themselves without keys "
                                                 "(loopback only; admin routes still need one)."));
    const QCommandLineOption keys(QStringLiteral("keys"),
                                  QStringLiteral("JSON file of bearer keys and their agents."),
                                  QStringLiteral("FILE"));
    const QCommandLineOption workspace(QStringLiteral("workspace"),
                                       QStringLiteral("Workspace root for path resources."),
                                       QStringLiteral("DIR"));
    const QCommandLineOption dataDir(QStringLiteral("data-dir"),
                                     QStringLiteral("Where state (ledger, leases, keys) lives."),
                                     QStringLiteral("DIR"));
    const QCommandLineOption config(QStringLiteral("config"),
                                    QStringLiteral("JSON config file; flags override it."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption demo(QStringLiteral("demo"),
                                  QStringLiteral("Drive simulated agents so every view is alive."));
    parser.addOptions({headless, port, bind, open, keys, workspace, dataDir, config, demo});

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
    o.headless = parser.isSet(headless);
    o.open = parser.isSet(open);
    o.demo = parser.isSet(demo);
    bool ok = false;
    const uint portValue = parser.value(port).toUInt(&ok);
    if (!ok || portValue > 65535) {
        QTextStream(stderr) << "leasehold: --port must be a number from 0 to 65535\n";
        result.exitCode = 2;
        return result;
    }
    o.port = static_cast<quint16>(portValue);
    o.bind = parser.value(bind);
    o.keysFile = parser.value(keys);
    o.workspace = parser.value(workspace);
    o.dataDir = parser.value(dataDir);
    o.configFile = parser.value(config);
    result.options = o;
    return result;
}

QString describeOptions(const AppOptions &o)
{
    QString text;
    QTextStream out(&text);
    out << "mode       " << (o.headless ? "headless" : "window") << "\n"
        << "bind       " << o.bind << ":" << o.port << "\n"
        << "auth       " << (o.open ? "open (agents name themselves)" : "bearer keys") << "\n"
        << "keys       " << (o.keysFile.isEmpty() ? "(data-dir key store)" : o.keysFile) << "\n"
        << "workspace  " << (o.workspace.isEmpty() ? "(none)" : o.workspace) << "\n"
        << "data-dir   " << (o.dataDir.isEmpty() ? "(default)" : o.dataDir) << "\n"
        << "config     " << (o.configFile.isEmpty() ? "(none)" : o.configFile) << "\n"
        << "demo       " << (o.demo ? "on" : "off") << "\n";
    return text;
}

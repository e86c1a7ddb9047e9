#pragma once

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

class QCoreApplication;

// One webhook endpoint of the config file ("webhooks": {"endpoints": [...]}).
struct WebhookSetting
{
    QString url;
    QString secret;
    QStringList events; // empty: all
    QString format = QStringLiteral("json");
};

// Everything the command line (and later the config file) decides about one run.
struct AppOptions
{
    bool headless = false;
    bool open = false;
    bool demo = false;
    bool inMemory = false; // no state database: nothing survives the process
    quint16 port = 7878;
    QString bind = QStringLiteral("127.0.0.1");
    QString keysFile;
    QString workspace;
    QString dataDir;
    QString configFile;
    QStringList exclusive;       // resources not safe to read concurrently (config "exclusive")
    QStringList allowedHosts;    // Host/Origin names MCP accepts besides loopback ("allowedHosts")
    int liveWindowSeconds = 300; // MCP: an agent is live this long after its last call
    int mcpProgressMs = 10'000;  // MCP: a parked call that asked for progress hears this often
    qint64 ledgerRetainRows = 1'000'000; // the stored ledger keeps at most this many events
    int ledgerRetainDays = 30;           // ... and none older than this
    int minFreeDiskMegabytes = 1024;     // the health check warns below this free in dataDir
    int maxConnections = 0;     // open connections at most; 0: from the file descriptor limit
    int headTimeoutMs = 10'000; // a request head must arrive whole within this
    int parkAfterMs = 2'000;    // idle this long, a connection leaves the event loop's poll set
    int storeTimeoutMs = 5'000; // a change waits at most this for the disk before 503
    // Lock-delay by default: named resources, workspace paths (docs/operating.md).
    int lockDelayMs = 0;
    int workspaceLockDelayMs = 0;
    // Webhooks (docs/webhooks.md): endpoints of the config file and how deliveries are tried.
    std::vector<WebhookSetting> webhooks;
    qint64 webhookRetryForMs = 3'600'000; // a delivery is retried this long, then failed
    int webhookFirstRetryMs = 1'000;      // the first pause between attempts (then doubled)
    int webhookMaxRetryMs = 300'000;      // the longest pause between attempts
    int webhookTimeoutMs = 10'000;        // one attempt is cut after this
    int hotRefusalsPerMinute = 60;        // refusals on one resource in a minute: hot_resource
    int commitWindowUs = 250; // group commit under a stream of changes (SqliteStore::Options)
    // Cluster mode (docs/cluster.md): state in etcd, one leader among the instances.
    QStringList etcd;  // etcd members' client URLs; empty: not in a cluster
    QString advertise; // where standbys send agents; empty: the listening URL
    QString etcdPrefix = QStringLiteral("leasehold/");
    int sessionTtlSeconds = 3; // the election's etcd lease
    // TLS to https:// members (PEM files): the CA that signed them (empty: the system's), and
    // this instance's client certificate and key (for --client-cert-auth).
    QString etcdCaFile;
    QString etcdCertFile;
    QString etcdKeyFile;
};

// Parses argv with QCommandLineParser. On --help/--version or a bad flag it prints and returns
// the exit code to use; otherwise it returns the options.
struct ParsedOptions
{
    std::optional<AppOptions> options;
    int exitCode = 0;
};

ParsedOptions parseOptions(const QStringList &arguments);

// The command line's flags (without dashes), the one table help, parsing and shell completion
// are made from.
struct AppFlag
{
    const char *name;
    const char *value; // the value's name in help, or nullptr for a switch
    const char *help;
    const char *fallback;
};
const std::vector<AppFlag> &appFlags();
// Adds each of `flags` to `parser` (the main command line's and ctl's tables alike).
void addFlags(class QCommandLineParser &parser, const std::vector<AppFlag> &flags);

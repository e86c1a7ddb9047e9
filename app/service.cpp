#include "service.h"

#include "clustermember.h"
#include "consolecommands.h"
#include "consolefeed.h"
#include "enginehost.h"
#include "etcdstore.h"
#include "httpfront.h"
#include "keystore.h"
#include "logging.h"
#include "sqlitestore.h"
#include "version.h"
#include "webhooklevers.h"
#include "webhookroutes.h"
#include "webhooks.h"
#include "webhooktap.h"
#include "workspacetools.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QStandardPaths>
#include <QTextStream>

#include <sys/statvfs.h>

#include <cstdio>
#include <cstdlib>

using namespace leasehold;

namespace {

QString dataDirectory(const AppOptions &o)
{
    if (!o.dataDir.isEmpty())
        return o.dataDir;
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

// The data directory's key store: created on first start with one admin key, readable only
// by its owner. The key itself is never printed; its location is.
std::optional<KeyStore> dataDirKeys(const QString &dir, QString *error)
{
    const QString path = QDir(dir).filePath(QStringLiteral("keys.json"));
    if (QFileInfo::exists(path))
        return KeyStore::fromFile(path, error);
    if (!QDir().mkpath(dir)) {
        *error = QStringLiteral("cannot create data directory %1").arg(dir);
        return std::nullopt;
    }
    if (!KeyStore::createKeysFile(path, KeyStore::mintKey(), QStringLiteral("did:op:admin"), error))
        return std::nullopt;
    QTextStream(stderr) << "leasehold: created an admin key for did:op:admin in " << path << "\n";
    return KeyStore::fromFile(path, error);
}

} // namespace

Service::Service(AppOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
{}

Service::~Service() = default;

int Service::start()
{
    QTextStream err(stderr);
    const QHostAddress address(m_options.bind);
    if (address.isNull()) {
        err << "leasehold: --bind " << m_options.bind << " is not an IP address\n";
        return 2;
    }
    if (m_options.open && !address.isLoopback()) {
        err << "leasehold: --open lets agents name themselves without keys, so it only runs on a "
               "loopback address (got "
            << m_options.bind << ")\n";
        return 2;
    }

    EngineConfig config;
    for (const QString &pattern : m_options.exclusive)
        config.exclusivePatterns.push_back(pattern.toStdString());
    config.lockDelayMs = m_options.lockDelayMs;
    config.workspaceLockDelayMs = m_options.workspaceLockDelayMs;
    m_host = std::make_unique<EngineHost>(config);
    m_host->setStoreTimeoutMs(m_options.storeTimeoutMs);
    if (!m_options.workspace.isEmpty()) {
        const QFileInfo root(m_options.workspace);
        if (!root.isDir()) {
            err << "leasehold: --workspace " << m_options.workspace << " is not a directory\n";
            return 2;
        }
        m_host->setWorkspaceRoot(root.canonicalFilePath().toStdString());
    }

    const QString dir = dataDirectory(m_options);
    if (!QDir().mkpath(dir)) {
        err << "leasehold: cannot create the data directory " << dir << "\n";
        return 2;
    }
    QString error;
    const std::optional<std::vector<StoredKey>> storedKeys = openStore(dir, &error);
    if (!storedKeys) {
        err << "leasehold: " << error << "\n";
        return 2;
    }

    std::optional<KeyStore> keys = m_options.keysFile.isEmpty()
                                       ? dataDirKeys(dataDirectory(m_options), &error)
                                       : KeyStore::fromFile(m_options.keysFile, &error);
    if (!keys) {
        err << "leasehold: " << error << "\n";
        return 2;
    }

    HttpFront::Options front;
    // Every connection is a descriptor: take what the system allows before sizing the cap.
    int softLimit = 0;
    const int fileLimit = raiseFileLimit(&softLimit);
    front.limits.maxConnections = m_options.maxConnections > 0
                                      ? std::min(m_options.maxConnections, fileLimit - 64)
                                      : defaultMaxConnections(fileLimit);
    front.limits.headTimeoutMs = m_options.headTimeoutMs;
    front.limits.bodyReadTimeoutMs = m_options.headTimeoutMs;
    front.limits.parkAfterMs = m_options.parkAfterMs;
    qCInfo(lcService) << "file descriptors:" << fileLimit << "(raised from" << softLimit
                      << ") - up to" << front.limits.maxConnections << "connections";
    front.open = m_options.open;
    front.allowedHosts = m_options.allowedHosts;
    front.liveWindowMs = std::int64_t(m_options.liveWindowSeconds) * 1000;
    front.progressEveryMs = m_options.mcpProgressMs;
    front.version = QStringLiteral(LEASEHOLD_VERSION);
    m_front = std::make_unique<HttpFront>(*m_host, std::move(*keys), front);
    m_front->setHealthFacts([this] { return healthFacts(); });
    // Keys minted while running (console, ctl keys add) are kept as digests in the store.
    m_front->acceptStoredKeys(*storedKeys);
    if (!m_options.etcd.isEmpty())
        m_front->setStandby(QString()); // until elected: nothing is served from an empty engine
    const quint16 port = m_front->listen(address, m_options.port, &error);
    if (port == 0) {
        err << "leasehold: cannot listen on " << m_options.bind << ":" << m_options.port << ": "
            << error << "\n";
        return 2;
    }
    const QString host = address.protocol() == QAbstractSocket::IPv6Protocol
                             ? "[" + address.toString() + "]"
                             : address.toString();
    m_url = QStringLiteral("http://%1:%2").arg(host).arg(port);
    if (!m_options.etcd.isEmpty() && !joinCluster(dir))
        return 2;
    if (m_options.etcd.isEmpty() && !startWebhooks(dir, &error)) {
        err << "leasehold: " << error << "\n";
        return 2;
    }
    QTextStream(stdout) << "listening " << m_url << Qt::endl;
    return 0;
}

namespace {

// Leaves at once, answering nothing more (exit 7: a supervisor restarts it as a standby).
[[noreturn]] void stepDown()
{
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(7);
}

} // namespace

bool Service::startWebhooks(const QString &dir, QString *error)
{
    WebhookOptions o;
    o.path = m_options.inMemory ? QStringLiteral(":memory:")
                                : QDir(dir).filePath(QStringLiteral("webhooks.db"));
    o.retryForMs = m_options.webhookRetryForMs;
    o.firstRetryMs = m_options.webhookFirstRetryMs;
    o.maxRetryMs = std::max(m_options.webhookMaxRetryMs, m_options.webhookFirstRetryMs);
    o.timeoutMs = m_options.webhookTimeoutMs;
    for (const WebhookSetting &w : m_options.webhooks) {
        WebhookEndpoint e;
        e.url = w.url.toStdString();
        e.id = configuredWebhookId(e.url);
        e.secret = w.secret.toStdString();
        e.format = w.format.toStdString();
        for (const QString &name : w.events)
            e.events.push_back(name.toStdString());
        o.configured.push_back(std::move(e));
    }
    m_webhooks = std::make_unique<Webhooks>(std::move(o));
    if (!m_webhooks->start(error))
        return false;
    m_webhookTap =
        std::make_unique<WebhookTap>(*m_host, *m_webhooks, m_options.hotRefusalsPerMinute);
    addWebhookRoutes(*m_front, *m_host, m_webhooks.get());
    qCInfo(lcService) << "webhooks:" << m_options.webhooks.size()
                      << "endpoints in the config file, outbox in"
                      << (m_options.inMemory ? QStringLiteral("memory") : dir);
    return true;
}

bool Service::joinCluster(const QString &dir)
{
    m_dataDir = dir;
    // The store exists from the start: standing by, it keeps this instance's copy of the
    // ledger up with etcd's ring; elected, it is the engine's store.
    // One description of the etcd members, for the store and for the election.
    etcd::Client::Options reach;
    for (const QString &url : m_options.etcd)
        reach.endpoints.push_back(QUrl(url.trimmed()));
    reach.tls = {m_options.etcdCaFile, m_options.etcdCertFile, m_options.etcdKeyFile};
    etcd::EtcdStore::Options s;
    s.etcd = reach;
    s.prefix = m_options.etcdPrefix.toStdString();
    s.localLedger.path = QDir(m_dataDir).filePath(QStringLiteral("ledger.db"));
    s.localLedger.retainRows = std::uint64_t(m_options.ledgerRetainRows);
    s.localLedger.retainMs = std::int64_t(m_options.ledgerRetainDays) * 24 * 3600 * 1000;
    m_clusterStore = std::make_unique<etcd::EtcdStore>(s);
    std::string error;
    if (!m_clusterStore->follow(&error)) {
        QTextStream(stderr) << "leasehold: cannot open the local ledger in " << dir << ": "
                            << error.c_str() << "\n";
        return false;
    }
    ClusterMember::Options o;
    o.etcd = reach;
    o.prefix = m_options.etcdPrefix.toStdString();
    o.advertise = (m_options.advertise.isEmpty() ? m_url : m_options.advertise).toStdString();
    o.sessionTtlSeconds = m_options.sessionTtlSeconds;
    m_advertise = o.advertise;
    m_front->setClusterFacts([this] {
        const ClusterFacts c = clusterFacts();
        nlohmann::json members = nlohmann::json::array();
        for (const std::string &member : c.members)
            members.push_back(
                {{"address", member}, {"role", member == c.leader ? "leader" : "standby"}});
        return nlohmann::json{{"problem", c.problem},     {"role", c.role},
                              {"lapsed", c.lapsed},       {"leader", c.leader},
                              {"advertise", c.advertise}, {"term", c.term},
                              {"members", members}};
    });
    m_cluster = std::make_unique<ClusterMember>(o);
    connect(m_cluster.get(), &ClusterMember::changed, this,
            [this](ClusterMember::Role role, const QString &leader, const QString &fenceKey,
                   qint64 term, const QStringList &members) {
                onClusterChange(role, leader, fenceKey, term, members);
            });
    connect(m_cluster.get(), &ClusterMember::problemChanged, this,
            [this](const QString &problem) { m_clusterProblem = problem; });
    qCInfo(lcService) << "cluster mode: etcd" << m_options.etcd.join(QLatin1Char(',')) << "prefix"
                      << m_options.etcdPrefix << "- standing for election as"
                      << o.advertise.c_str();
    m_cluster->start();
    return true;
}

HealthFacts Service::healthFacts() const
{
    HealthFacts h;
    const StoreHealth &store = m_host->storeHealth();
    h.storeHealth = store.reasonName();
    h.storeProblem = store.ok() ? std::string() : store.phrase();
    h.minFreeBytes = qint64(m_options.minFreeDiskMegabytes) * 1024 * 1024;
    if (!m_options.inMemory && !m_dataDir.isEmpty()) {
        // statvfs alone (QStorageInfo reads the mount table too): cheap enough for every
        // /health and every console frame.
        h.dataDir = m_dataDir;
        struct statvfs disk = {};
        if (::statvfs(QFile::encodeName(m_dataDir).constData(), &disk) == 0) {
            h.diskFreeBytes = qint64(disk.f_bavail) * qint64(disk.f_frsize);
            h.diskTotalBytes = qint64(disk.f_blocks) * qint64(disk.f_frsize);
        }
    }
    const ClusterFacts c = clusterFacts();
    h.clustered = !c.role.empty();
    h.clusterRole = c.role;
    h.clusterLeader = c.leader;
    h.clusterLapsed = c.lapsed;
    h.clusterProblem = c.problem;
    if (!m_leading && m_clusterStore)
        h.clusterFollowAgeMs = m_clusterStore->followAgeMs();
    h.lastHour = m_host->incidentsLastHour();
    if (m_webhooks)
        h.webhooks = m_webhooks->troubles();
    return h;
}

ClusterFacts Service::clusterFacts() const
{
    ClusterFacts c;
    if (!m_cluster)
        return c;
    c.role = m_leading ? "leader" : "standby";
    c.leader = m_leader.toStdString();
    c.advertise = m_advertise;
    c.term = m_term;
    c.lapsed = m_lapsed;
    c.problem = m_clusterProblem.toStdString();
    for (const QString &member : m_members)
        c.members.push_back(member.toStdString());
    return c;
}

void Service::updateConsoleAccess()
{
    if (!m_commands)
        return;
    if (!m_cluster || m_leading)
        return m_commands->setReadOnly({});
    m_commands->setReadOnly(
        m_leader.isEmpty()
            ? tr("this instance stands by and no leader is elected yet")
            : tr("this instance stands by; the levers are on the leader's console (%1)")
                  .arg(m_leader));
}

void Service::onClusterChange(ClusterMember::Role role, const QString &leader,
                              const QString &fenceKey, qint64 term, const QStringList &members)
{
    const bool news = leader != m_leader || !m_reported;
    m_reported = true;
    m_leader = leader;
    m_members = members;
    const bool elected = role == ClusterMember::Role::Leader;
    if (m_leading && term == m_term && (elected || role == ClusterMember::Role::Lapsed)) {
        // Lapsed: its session cannot be confirmed in time (etcd without quorum, or out of
        // reach), but its key may stand. It grants nothing meanwhile (the store reports itself
        // unavailable), and leads on, same term, state and all, once a renewal answers.
        const bool lapsed = !elected;
        if (lapsed != m_lapsed) {
            m_lapsed = lapsed;
            m_clusterStore->setLapsed(lapsed);
            if (lapsed)
                qCWarning(lcService) << "cannot confirm the etcd session in time (term" << m_term
                                     << "): granting nothing until it answers";
            else
                qCInfo(lcService) << "the etcd session answers again: leading on (term" << m_term
                                  << ")";
        }
        return;
    }
    if (elected && !m_leading) {
        if (!takeOver(fenceKey, term))
            stepDown(); // resigning by going: the next candidate takes over
        return;
    }
    if (m_leading && (!elected || term != m_term)) {
        // Its session ended (its key is gone: it was frozen, or cut off past the session, and
        // another may lead by now): it stops at once. What it had not made durable was never
        // answered; a supervisor restarts it, and it stands again as a standby.
        qCCritical(lcService) << "no longer leading (term" << m_term
                              << "); the leader it last saw is"
                              << (leader.isEmpty() ? QStringLiteral("not known yet") : leader)
                              << "- stepping down (exit 7)";
        stepDown();
    }
    if (!m_leading) {
        m_front->setStandby(leader);
        updateConsoleAccess();
        if (news)
            qCInfo(lcService) << "standing by; the leader is"
                              << (leader.isEmpty() ? QStringLiteral("not elected yet") : leader);
    }
}

bool Service::takeOver(const QString &fenceKey, qint64 term)
{
    std::string error;
    std::optional<StoredState> stored = m_clusterStore->load(&error);
    if (!stored) {
        qCCritical(lcService) << "elected (term" << term
                              << ") but cannot take over:" << error.c_str();
        return false;
    }
    m_clusterStore->setFence({fenceKey.toStdString(),
                              etcd::Compare::Target::Create,
                              etcd::Compare::Result::Equal,
                              term,
                              {}});
    const int restored = m_host->restoreFrom(*m_clusterStore, *stored);
    m_front->acceptStoredKeys(stored->keys);
    m_leading = true;
    m_term = term;
    // Only the leader delivers webhooks, from an outbox in its own data directory
    // (docs/webhooks.md): what a former leader had pending stays in its file until it leads.
    QString webhookError;
    if (!startWebhooks(m_dataDir, &webhookError))
        qCCritical(lcService) << "webhooks are off:" << webhookError;
    else
        m_webhookTap->leaderChanged(m_advertise, term);
    if (m_commands && m_webhooks)
        m_commands->setWebhookLevers(webhookLevers(*m_webhooks, m_commands.get()));
    m_front->setStandby(std::nullopt);
    updateConsoleAccess();
    qCInfo(lcService) << "leading (term" << term << "): restored" << restored << "of"
                      << stored->leases.size() << "leases from etcd, tokens continue from"
                      << m_host->engine().nextToken();
    return true;
}

std::optional<std::vector<StoredKey>> Service::openStore(const QString &dir, QString *error)
{
    if (!m_options.etcd.isEmpty())
        return std::vector<StoredKey>(); // the state is etcd's, read when elected
    if (m_options.inMemory) {
        qCInfo(lcService) << "state in memory only (--in-memory): nothing survives a restart";
        return std::vector<StoredKey>();
    }
    m_dataDir = dir;
    SqliteStore::Options storeOptions;
    storeOptions.path = QDir(dir).filePath(QStringLiteral("leasehold.db"));
    storeOptions.retainRows = std::uint64_t(m_options.ledgerRetainRows);
    storeOptions.commitWindowUs = m_options.commitWindowUs;
    storeOptions.retainMs = std::int64_t(m_options.ledgerRetainDays) * 24 * 3600 * 1000;
    m_store = std::make_unique<SqliteStore>(storeOptions);
    std::string storeError;
    std::optional<StoredState> stored = m_store->load(&storeError);
    if (!stored) {
        *error = QString::fromStdString(storeError);
        return std::nullopt;
    }
    const int restored = m_host->restoreFrom(*m_store, *stored);
    qCInfo(lcService) << "state in" << storeOptions.path << "- restored" << restored << "of"
                      << stored->leases.size() << "leases, tokens continue from"
                      << m_host->engine().nextToken();
    return std::move(stored->keys);
}

Service::ConsoleEnds Service::attachConsole(const QString &operatorDid)
{
    if (!m_feed) {
        auto facts = [this] {
            ServiceFacts f;
            const RequestStats::Gauges g = m_front->gauges();
            f.listenUrl = m_url;
            f.open = m_options.open;
            f.workspace = !m_options.workspace.isEmpty();
            f.strict = f.workspace && WorkspaceTools::strict(g.liveAgents);
            f.liveAgents = g.liveAgents;
            f.mcpSessions = g.mcpSessions;
            f.openConnections = g.openConnections;
            f.store = m_host->store() != nullptr;
            if (f.store)
                f.storeStats = m_host->store()->stats();
            const StoreHealth &health = m_host->storeHealth();
            f.storeHealth = health.reasonName();
            if (!health.ok())
                f.storeProblem = health.phrase();
            f.requests = m_front->stats().count();
            f.keysByAgent = m_front->keys().keysByAgent();
            f.cluster = clusterFacts();
            f.health = healthFacts();
            return f;
        };
        m_feed = std::make_unique<ConsoleFeed>(*m_host, facts);
        auto minter = [this](const QString &did, QString *error) {
            return m_front->mintKey(did, Role::Agent, error);
        };
        m_commands = std::make_unique<ConsoleCommands>(*m_host, operatorDid, minter);
        if (m_webhooks)
            m_commands->setWebhookLevers(webhookLevers(*m_webhooks, m_commands.get()));
        updateConsoleAccess();
    }
    return {m_feed.get(), m_commands.get()};
}

QByteArray Service::temporaryKey(const QString &did)
{
    return m_front->temporaryKey(did);
}

void Service::shutdown(std::function<void()> done)
{
    if (!m_front) {
        done();
        return;
    }
    const std::size_t parked = m_host->engine().parkedCount();
    qCInfo(lcService) << "stopping:" << parked << "parked waits answered,"
                      << m_host->engine().leaseCount() << "leases kept in the store";
    m_front->stopListening();
    m_host->run([](LeaseEngine &e) { e.pause("system:shutdown", true); });
    // Everything decided is committed, answers that waited for it are written, and pushed out
    // before the process goes.
    m_host->closeStore();
    m_front->flushConnections();
    m_cluster.reset(); // resigns: a standby leads at once rather than after the session
    if (m_store && m_store->writerStuck()) {
        // Its writer never came back from the disk and still uses it: leave it be.
        (void)m_store.release();
    }
    done();
}

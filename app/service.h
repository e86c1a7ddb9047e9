#pragma once

#include "clustermember.h"
#include "healthcheck.h"
#include "options.h"
#include "storeops.h"

#include <QObject>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace leasehold {
struct ClusterFacts;
class ConsoleCommands;
class ConsoleFeed;
class EngineHost;
class HttpFront;
class SqliteStore;
class WebhookTap;
class Webhooks;
namespace etcd {
class EtcdStore;
}
} // namespace leasehold

// One running Leasehold service built from the options: the engine host and the HTTP front on
// this thread, with keys from --keys, --open, or the data directory's key store, and state
// kept in the data directory's SQLite store (or, with --in-memory, nowhere).
class Service : public QObject
{
    Q_OBJECT

public:
    explicit Service(AppOptions options, QObject *parent = nullptr);
    ~Service() override;

    // Starts listening and prints "listening http://HOST:PORT"; returns 0, or an exit code
    // (2) after printing why it could not start.
    int start();
    // Stops accepting connections, answers every parked wait (admissions paused), hands those
    // answers to the kernel, then calls `done`.
    void shutdown(std::function<void()> done);

    // The console's ends on this thread: a feed of coalesced frames and the levers, acting as
    // `operatorDid`. Created on the first call. Requires: start() returned 0.
    struct ConsoleEnds
    {
        leasehold::ConsoleFeed *feed = nullptr;
        leasehold::ConsoleCommands *commands = nullptr;
    };
    ConsoleEnds attachConsole(const QString &operatorDid);

    QString listenUrl() const { return m_url; }
    bool open() const { return m_options.open; }
    // A key for `did` accepted until the process ends and never stored (--demo's agents).
    QByteArray temporaryKey(const QString &did);

private:
    // Opens the state database in `dir` and restores the engine from it (nothing with
    // --in-memory); returns the keys minted in earlier runs, or nothing (with `error`).
    std::optional<std::vector<leasehold::StoredKey>> openStore(const QString &dir, QString *error);
    // Cluster mode: stands for election; serves once elected (takeOver), and exits when it no
    // longer leads (a supervisor restarts it as a standby).
    bool joinCluster(const QString &dir);
    void onClusterChange(ClusterMember::Role role, const QString &leader, const QString &fenceKey,
                         qint64 term, const QStringList &members);
    bool takeOver(const QString &fenceKey, qint64 term);
    leasehold::ClusterFacts clusterFacts() const;
    // The health check's facts beyond the snapshot: disk room under the data directory, the
    // cluster, the last hour's incidents.
    leasehold::HealthFacts healthFacts() const;
    // Starts the delivery thread on the outbox in `dir` (in memory with --in-memory), hears the
    // host, and adds the admin routes. In a cluster only the leader does (at takeOver).
    bool startWebhooks(const QString &dir, QString *error);
    // A standby's console levers are refused (its engine is not the one agents use).
    void updateConsoleAccess();

    AppOptions m_options;
    std::unique_ptr<leasehold::SqliteStore> m_store; // outlives the host, which writes to it
    std::unique_ptr<leasehold::etcd::EtcdStore> m_clusterStore; // cluster mode
    std::unique_ptr<ClusterMember> m_cluster;
    QString m_dataDir;
    bool m_leading = false;
    bool m_lapsed = false;
    bool m_reported = false; // the election has reported at least once
    QString m_leader;
    QStringList m_members; // every instance standing, the leader first
    std::string m_advertise;
    QString m_clusterProblem; // why the election's last look at etcd failed
    qint64 m_term = 0;
    std::unique_ptr<leasehold::EngineHost> m_host;
    std::unique_ptr<leasehold::HttpFront> m_front;
    std::unique_ptr<leasehold::Webhooks> m_webhooks; // after the host: goes before it
    std::unique_ptr<leasehold::WebhookTap> m_webhookTap;
    std::unique_ptr<leasehold::ConsoleFeed> m_feed;
    std::unique_ptr<leasehold::ConsoleCommands> m_commands;
    QString m_url;
};

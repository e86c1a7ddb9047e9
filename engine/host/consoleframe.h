#pragma once

#include "healthcheck.h"
#include "leasestore.h"
#include "ledgerevent.h"
#include "snapshot.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace leasehold {

// Cluster mode (docs/cluster.md), as this instance sees it.
struct ClusterFacts
{
    std::string role;      // "leader" or "standby"; empty when not in a cluster
    std::string leader;    // the leader's advertised URL; empty while none is known
    std::string advertise; // this instance's
    std::int64_t term = 0; // while leading
    bool lapsed = false;   // leading, but unable to confirm its etcd session: granting nothing
    std::vector<std::string> members; // every instance standing, the leader first
    std::string problem;              // why the last look at etcd failed; empty when it did not

    bool standby() const { return role == "standby"; }
};

// What the service looks like from outside the engine: the transport's and the store's facts.
struct ServiceFacts
{
    QString listenUrl;      // http://127.0.0.1:7878
    bool open = false;      // agents name themselves (no keys)
    bool workspace = false; // guarded workspace tools are published
    bool strict = false;    // workspace writes need a covering lease (more than one agent live)
    int liveAgents = 0;
    int mcpSessions = 0;
    int openConnections = 0;
    bool store = false;
    StoreStats storeStats;
    std::string storeHealth = "ok";   // StoreHealth::reasonName()
    std::string storeProblem;         // StoreHealth::phrase() when not ok
    std::uint64_t requests = 0;       // answered since start
    std::int64_t engineLoopLagMs = 0; // how late the engine thread ran the last publication
    std::map<std::string, int> keysByAgent;
    ClusterFacts cluster;
    HealthFacts health; // what the health check needs beyond the snapshot
};

// One coalesced publication for the console: the engine's state at one moment, the ledger
// events recorded since the previous frame, and the service's facts. Immutable once published;
// the console thread and the engine thread share it through a shared_ptr.
struct ConsoleFrame
{
    std::uint64_t number = 0; // 1, 2, 3 ... in publication order
    Snapshot snapshot;
    std::vector<LedgerEvent> events; // oldest first
    std::uint64_t eventsSkipped = 0; // recorded since the previous frame but not carried
    ServiceFacts facts;
};

using ConsoleFramePtr = std::shared_ptr<const ConsoleFrame>;

} // namespace leasehold

Q_DECLARE_METATYPE(leasehold::ConsoleFramePtr)

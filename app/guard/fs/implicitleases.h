#pragma once

#include "leasegate.h"
#include "serviceclient.h"

#include <QObject>
#include <QTimer>

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

// The filesystem gate's side of the conversation with the instance (GateService): implicit
// leases and refusals for the ledger. The gate's workers hand it work from any thread without
// waiting; it is done here, in order, on the thread that owns this object, each request
// asynchronous (the instance answers several at once).
//
// An implicit lease is a write lease on a file this agent changed that no lease of its own
// covered: taken after the first change, renewed while a handle that wrote it is open or
// further changes come, and given back (released, not left to expire against the agent's
// trust) once neither happened for a TTL, or at once when the file is unlinked or renamed away
// (an editor's temporary file leaves no lease behind; the file it became takes one).
// releaseAll() ends the run's leases.
//
// Thread: the owner's for everything but the GateService calls, which are thread-safe.
class ImplicitLeases : public QObject, public leasehold::fsgate::GateService
{
    Q_OBJECT

public:
    ImplicitLeases(ServiceClient::Settings settings, std::int64_t ttlMs, QObject *parent = nullptr);

    void changed(const std::string &name, std::uint64_t handle, bool covered) override;
    void removed(const std::string &name) override;
    void closed(std::uint64_t handle) override;
    void refused(const leasehold::fsgate::Refusal &refusal) override;

    // Releases everything this agent holds (the run's leases: implicit ones and those its tools
    // took under the same key) and waits for the answer, at most `timeoutMs`. The end of a run.
    bool releaseAll(int timeoutMs);
    // Names with an implicit lease now, or one on its way (tests, `why`).
    std::vector<std::string> claimed() const;
    // Requests sent and not yet answered.
    int inFlight() const { return m_inFlight; }

signals:
    void idle(); // nothing queued or in flight

private:
    struct Work
    {
        enum Kind { Changed, Removed, Closed, Refused } kind;
        std::string name;
        std::uint64_t handle = 0;
        bool covered = false;
        leasehold::fsgate::Refusal refusal;
    };
    struct Claim
    {
        std::string leaseId;      // empty while the grant is on its way
        bool requesting = false;  // a lease or renew request is in flight
        bool dropAfter = false;   // removed while requesting: release once granted
        std::int64_t touched = 0; // the last change (steady ms)
        std::int64_t renewed = 0; // the last grant or renewal
        std::set<std::uint64_t> handles;
    };
    void enqueue(Work work);
    void drain();
    void take(const std::string &name);
    void give(std::string name, std::string leaseId); // copies: the claim they may come from goes
    void sweep(); // renew what open handles keep; give back what went quiet
    void settled();
    static std::int64_t now();

    ServiceClient m_client;
    std::int64_t m_ttlMs;
    std::mutex m_queueLock;
    std::vector<Work> m_queue;
    std::map<std::string, Claim> m_claims;
    std::unordered_map<std::uint64_t, std::string> m_handles;
    QTimer m_sweep;
    int m_inFlight = 0;
};

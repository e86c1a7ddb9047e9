#pragma once

#include "gatepolicy.h"
#include "leaseview.h"
#include "refusallog.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace leasehold::fsgate {

// What the gate asks of the instance, without waiting for an answer (the implementation queues
// it for the gate's network thread). Names are canonical workspace names ("fs:src/a.ts").
class GateService
{
public:
    virtual ~GateService() = default;
    // This agent changed the file `name`: take, or renew, its implicit write lease, unless
    // `covered` (a write lease of its own already covers it). A non-zero `handle` keeps the
    // lease while that handle is open.
    virtual void changed(const std::string &name, std::uint64_t handle, bool covered) = 0;
    // `name` is gone (unlinked, or renamed away): its implicit lease goes too.
    virtual void removed(const std::string &name) = 0;
    virtual void closed(std::uint64_t handle) = 0;
    // A refusal for the ledger (the instance checks it again and records it).
    virtual void refused(const Refusal &refusal) = 0;
};

// The lease policy of the filesystem gate (docs/guard.md, "leasehold run"): a change to a name
// another agent holds is refused with EACCES, judged from the LeaseView alone; the refusal is
// logged for `leasehold why` and sent to the ledger. A change the agent's own leases cover goes
// through; one to a free file takes an implicit lease (when `implicit`), after it was made.
// While the view has not been kept current for longer than `staleAfterMs` (the watch stream is
// down), every change is refused: nobody can say whose file it is.
//
// Thread-safe: admit/done/closed come from the gate's workers; setFresh from the watch's thread.
class LeaseGate final : public GatePolicy
{
public:
    struct Options
    {
        bool implicit = true;
        std::int64_t staleAfterMs = 5'000;
    };

    LeaseGate(LeaseView &view, GateService &service, RefusalLog &log, Options options);

    int admit(const Change &change) override;
    void done(const Change &change, int error) override;
    void closed(std::uint64_t handle) override;

    // The view is current (the stream is up and heard from), or not since now.
    void setFresh(bool fresh);
    // The canonical name of a path below the root ("" is the root).
    static leasehold::ResourceName nameOf(const std::string &path);

private:
    // 0, or EACCES after recording why: `path` (a folder with what is below it when `subtree`)
    // stands under another agent's lease.
    int judge(const Change &change, const std::string &path, bool subtree, bool *covered);
    int refuse(const Change &change, const std::string &path, const std::string &reason,
               const LeaseView::Lease *blocker);
    static std::int64_t steadyMs();

    LeaseView &m_view;
    GateService &m_service;
    RefusalLog &m_log;
    Options m_options;
    std::atomic<std::int64_t> m_staleSince{0}; // steady ms; 0 while fresh
    std::mutex m_lastLock;
    std::string m_lastKey; // the last refusal logged, and when (wall ms)
    std::int64_t m_lastAt = 0;
};

} // namespace leasehold::fsgate

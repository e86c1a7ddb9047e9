#pragma once

#include "deadlinequeue.h"
#include "leasetypes.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace leasehold {

// A release request as it stands: an open ask to the holder of one lease to let it go.
struct ReleaseRequestRecord : Timed
{
    ReleaseRequestRecord()
        : Timed(TimerKind::RequestDeadline)
    {}
    std::string requestId;
    std::string leaseId;
    std::string resource; // the lease's canonical name
    std::string holder;
    std::string requester; // an agent waiting for it, or an operator
    bool byOperator = false;
    Urgency urgency = Urgency::Normal;
    std::string reason;
    TimeMs raisedAt = 0;
    TimeMs deadlineAt = 0; // 0: none
    bool overdue = false;  // its deadline passed unanswered; still open
};

// The open release requests, by id, by lease and by holder, so that a holder's reply looks up
// its own requests in a hash probe (and pays nothing when there are none at all).
//
// The engine owns it and keeps its records in step with its leases: a request names a live
// lease of its holder; when that lease ends the engine removes the lease's requests (they are
// answered). A request with a deadline that is not yet overdue is in the engine's deadline
// queue. Not thread-safe: owned by the engine thread.
class ReleaseRequests
{
public:
    ReleaseRequests() = default;
    ReleaseRequests(const ReleaseRequests &) = delete;
    ReleaseRequests &operator=(const ReleaseRequests &) = delete;

    ReleaseRequestRecord *add(std::unique_ptr<ReleaseRequestRecord> record);
    // Requires: `record` was added and not removed.
    void remove(ReleaseRequestRecord *record);

    ReleaseRequestRecord *find(const std::string &requestId) const;
    // The open requests against lease `leaseId` / held by `holder` (empty when none).
    const std::vector<ReleaseRequestRecord *> &forLease(const std::string &leaseId) const;
    const std::vector<ReleaseRequestRecord *> &forHolder(const std::string &holder) const;
    // The open request `requester` raised against `leaseId`, or null.
    ReleaseRequestRecord *existing(const std::string &leaseId, const std::string &requester) const;

    bool empty() const { return m_byId.empty(); }
    std::size_t size() const { return m_byId.size(); }
    // Every open request, oldest first.
    std::vector<const ReleaseRequestRecord *> all() const;

    static ReleaseRequestInfo describe(const ReleaseRequestRecord &r);
    // The three indexes agree (every record in each exactly once); false otherwise.
    bool isConsistent() const;

private:
    static void erase(std::vector<ReleaseRequestRecord *> &list, ReleaseRequestRecord *record);

    std::unordered_map<std::string, std::unique_ptr<ReleaseRequestRecord>> m_byId;
    std::unordered_map<std::string, std::vector<ReleaseRequestRecord *>> m_byLease;
    std::unordered_map<std::string, std::vector<ReleaseRequestRecord *>> m_byHolder;
};

} // namespace leasehold

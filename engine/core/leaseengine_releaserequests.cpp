// LeaseEngine: release requests. An agent waiting for a resource (parked, or refused it
// recently: a want), or an operator, asks the holder of the lease in the way to let go, with an
// urgency and perhaps a deadline. A request never changes who holds what: the holder answers
// by releasing (or letting the lease expire, or an operator ending it), which ends every request
// against that lease, or declines it; a deadline that passes unanswered marks it overdue, and it
// stays open. Raised, declined and overdue are ledger events; the answer is the lease's own
// released or expired event.
//
// Requests are engine state only: a restart forgets the open ones (the ledger keeps them).

#include "leaseengine.h"
#include "leaseengine_p.h"

#include <algorithm>

namespace leasehold {

namespace {

RequestFailure failure(RequestError error, std::string resource = {}, std::string holder = {})
{
    return RequestFailure{error, std::move(resource), std::move(holder)};
}

} // namespace

bool LeaseEngine::hasBusiness(const AgentRecord *agent, const ResourceName &name) const
{
    for (const Waiter *w : agent->parked)
        for (const ResourceName &r : w->resources)
            if (r.overlaps(name))
                return true;
    for (const auto &[canonical, want] : agent->wants)
        if (want->resource.overlaps(name))
            return true;
    return false;
}

RequestResult LeaseEngine::raiseReleaseRequest(const ReleaseRequestAsk &ask)
{
    const AgentRecord *agent = m_agents.find(ask.requester);
    const LeaseRecord *lease = nullptr;
    if (!ask.leaseId.empty()) {
        const auto it = m_leases.find(ask.leaseId);
        if (it == m_leases.end())
            return failure(RequestError::UnknownLease);
        lease = it->second.get();
    } else {
        lease = m_trie.firstLeaseConflict(*ask.resource, true, ask.byOperator ? nullptr : agent);
        if (!lease || lease->heldBackUntil > 0) {
            const bool own = agent && ownLease(agent, *ask.resource);
            return failure(own ? RequestError::OwnLease : RequestError::NotHeld,
                           ask.resource->canonical(), own ? ask.requester : std::string());
        }
    }
    const std::string resource = lease->resource.canonical();
    if (lease->agent == agent)
        return failure(RequestError::OwnLease, resource, ask.requester);
    if (!ask.byOperator && (!agent || !hasBusiness(agent, lease->resource)))
        return failure(RequestError::NoBusiness, resource, lease->agent->did);
    if (const ReleaseRequestRecord *open = m_requests.existing(lease->leaseId, ask.requester)) {
        ReleaseRequestInfo info = ReleaseRequests::describe(*open);
        info.existing = true;
        return info;
    }
    const TimeMs now = m_clock.nowMs();
    auto record = std::make_unique<ReleaseRequestRecord>();
    record->requestId = m_ids->next("rr_");
    record->leaseId = lease->leaseId;
    record->resource = resource;
    record->holder = lease->agent->did;
    record->requester = ask.requester;
    record->byOperator = ask.byOperator;
    record->urgency = ask.urgency;
    record->reason = ask.reason;
    record->raisedAt = now;
    record->deadlineAt = ask.deadlineMs > 0 ? now + ask.deadlineMs : 0;
    record->order = m_seq + 1; // ties at one deadline: in the order raised
    ReleaseRequestRecord *r = m_requests.add(std::move(record));
    if (r->deadlineAt > 0)
        m_deadlines.schedule(r, r->deadlineAt);
    recordRequestEvent(EventKind::ReleaseRequestRaised, r->requester, *r, lease->token, r->reason);
    settle();
    return ReleaseRequests::describe(*r);
}

RequestResult LeaseEngine::declineReleaseRequest(const std::string &holder,
                                                 const std::string &requestId,
                                                 const std::string &reason)
{
    ReleaseRequestRecord *r = m_requests.find(requestId);
    if (!r)
        return failure(RequestError::UnknownRequest);
    if (r->holder != holder)
        return failure(RequestError::NotHolder, r->resource, r->holder);
    const auto lease = m_leases.find(r->leaseId);
    recordRequestEvent(EventKind::ReleaseRequestDeclined, holder, *r,
                       lease == m_leases.end() ? 0 : lease->second->token, reason);
    ReleaseRequestInfo info = ReleaseRequests::describe(*r);
    m_deadlines.cancel(r);
    m_requests.remove(r);
    settle();
    return info;
}

std::vector<ReleaseRequestInfo> LeaseEngine::releaseRequestsFor(const std::string &holder) const
{
    std::vector<ReleaseRequestInfo> out;
    for (const ReleaseRequestRecord *r : m_requests.forHolder(holder))
        out.push_back(ReleaseRequests::describe(*r));
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
        return a.raisedAt != b.raisedAt ? a.raisedAt < b.raisedAt : a.requestId < b.requestId;
    });
    return out;
}

std::vector<ReleaseRequestInfo> LeaseEngine::releaseRequests() const
{
    std::vector<ReleaseRequestInfo> out;
    out.reserve(m_requests.size());
    for (const ReleaseRequestRecord *r : m_requests.all())
        out.push_back(ReleaseRequests::describe(*r));
    return out;
}

void LeaseEngine::requestOverdue(ReleaseRequestRecord *r)
{
    m_deadlines.cancel(r);
    r->overdue = true;
    const auto lease = m_leases.find(r->leaseId);
    recordRequestEvent(EventKind::ReleaseRequestOverdue, r->holder, *r,
                       lease == m_leases.end() ? 0 : lease->second->token, r->reason);
}

void LeaseEngine::answerRequests(const LeaseRecord *lease)
{
    if (m_requests.empty())
        return;
    const std::vector<ReleaseRequestRecord *> open = m_requests.forLease(lease->leaseId);
    for (ReleaseRequestRecord *r : open) {
        m_deadlines.cancel(r);
        m_requests.remove(r);
    }
}

void LeaseEngine::recordRequestEvent(EventKind kind, const std::string &actor,
                                     const ReleaseRequestRecord &r, std::uint64_t token,
                                     std::string reason)
{
    recordEvent(kind, actor, r.resource, r.leaseId, token, std::move(reason), [&](EventFacts &f) {
        f.requestId = r.requestId;
        f.urgency = std::string(urgencyName(r.urgency));
        f.deadlineAt = r.deadlineAt;
        f.requester = r.requester;
        f.holder = r.holder;
    });
}

void LeaseEngine::checkReleaseRequests(std::size_t &timed) const
{
    auto fail = [](const std::string &what) { throw std::logic_error("invariant: " + what); };
    if (!m_requests.isConsistent())
        fail("release request indexes disagree");
    const TimeMs now = m_clock.nowMs();
    for (const ReleaseRequestRecord *r : m_requests.all()) {
        const auto lease = m_leases.find(r->leaseId);
        if (lease == m_leases.end())
            fail("release request " + r->requestId + " outlived its lease");
        if (lease->second->agent->did != r->holder)
            fail("release request " + r->requestId + " names a holder that is not the lease's");
        const bool queued = r->heapSlot != Timed::kNotQueued;
        if (queued != (r->deadlineAt > 0 && !r->overdue))
            fail("release request " + r->requestId + " must be timed exactly until overdue");
        if (r->overdue && r->deadlineAt > now)
            fail("release request " + r->requestId + " is overdue before its deadline");
        timed += queued ? 1 : 0;
    }
}

} // namespace leasehold

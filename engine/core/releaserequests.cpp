#include "releaserequests.h"

#include <algorithm>

namespace leasehold {

namespace {
const std::vector<ReleaseRequestRecord *> kNone;
}

ReleaseRequestRecord *ReleaseRequests::add(std::unique_ptr<ReleaseRequestRecord> record)
{
    ReleaseRequestRecord *r = record.get();
    m_byLease[r->leaseId].push_back(r);
    m_byHolder[r->holder].push_back(r);
    m_byId.emplace(r->requestId, std::move(record));
    return r;
}

void ReleaseRequests::erase(std::vector<ReleaseRequestRecord *> &list, ReleaseRequestRecord *record)
{
    list.erase(std::remove(list.begin(), list.end(), record), list.end());
}

void ReleaseRequests::remove(ReleaseRequestRecord *record)
{
    if (auto it = m_byLease.find(record->leaseId); it != m_byLease.end()) {
        erase(it->second, record);
        if (it->second.empty())
            m_byLease.erase(it);
    }
    if (auto it = m_byHolder.find(record->holder); it != m_byHolder.end()) {
        erase(it->second, record);
        if (it->second.empty())
            m_byHolder.erase(it);
    }
    m_byId.erase(record->requestId); // last: it owns the record
}

ReleaseRequestRecord *ReleaseRequests::find(const std::string &requestId) const
{
    const auto it = m_byId.find(requestId);
    return it == m_byId.end() ? nullptr : it->second.get();
}

const std::vector<ReleaseRequestRecord *> &
ReleaseRequests::forLease(const std::string &leaseId) const
{
    const auto it = m_byLease.find(leaseId);
    return it == m_byLease.end() ? kNone : it->second;
}

const std::vector<ReleaseRequestRecord *> &
ReleaseRequests::forHolder(const std::string &holder) const
{
    if (m_byHolder.empty())
        return kNone;
    const auto it = m_byHolder.find(holder);
    return it == m_byHolder.end() ? kNone : it->second;
}

ReleaseRequestRecord *ReleaseRequests::existing(const std::string &leaseId,
                                                const std::string &requester) const
{
    for (ReleaseRequestRecord *r : forLease(leaseId))
        if (r->requester == requester)
            return r;
    return nullptr;
}

std::vector<const ReleaseRequestRecord *> ReleaseRequests::all() const
{
    std::vector<const ReleaseRequestRecord *> out;
    out.reserve(m_byId.size());
    for (const auto &[id, r] : m_byId)
        out.push_back(r.get());
    std::sort(out.begin(), out.end(), [](const auto *a, const auto *b) {
        return a->raisedAt != b->raisedAt ? a->raisedAt < b->raisedAt : a->requestId < b->requestId;
    });
    return out;
}

ReleaseRequestInfo ReleaseRequests::describe(const ReleaseRequestRecord &r)
{
    ReleaseRequestInfo info;
    info.requestId = r.requestId;
    info.leaseId = r.leaseId;
    info.resource = r.resource;
    info.holder = r.holder;
    info.requester = r.requester;
    info.byOperator = r.byOperator;
    info.urgency = r.urgency;
    info.reason = r.reason;
    info.raisedAt = r.raisedAt;
    info.deadlineAt = r.deadlineAt;
    info.overdue = r.overdue;
    return info;
}

bool ReleaseRequests::isConsistent() const
{
    std::size_t byLease = 0;
    std::size_t byHolder = 0;
    for (const auto &[lease, list] : m_byLease) {
        byLease += list.size();
        for (const ReleaseRequestRecord *r : list)
            if (r->leaseId != lease || find(r->requestId) != r)
                return false;
    }
    for (const auto &[holder, list] : m_byHolder) {
        byHolder += list.size();
        for (const ReleaseRequestRecord *r : list)
            if (r->holder != holder || find(r->requestId) != r)
                return false;
    }
    return byLease == m_byId.size() && byHolder == m_byId.size();
}

} // namespace leasehold

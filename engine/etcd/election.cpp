#include "election.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace leasehold::etcd {

namespace {

std::int64_t steadyMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string hex(std::int64_t lease)
{
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(lease));
    return text;
}

} // namespace

Election::Election(Client &client, Options options, std::function<std::int64_t()> nowMs)
    : m_client(client)
    , m_options(std::move(options))
    , m_now(nowMs ? std::move(nowMs) : steadyMs)
{}

Compare Election::fence() const
{
    return {m_key, Compare::Target::Create, Compare::Result::Equal, m_term, {}};
}

Election::Role Election::step()
{
    m_problem.clear();
    if (m_lease == 0)
        campaign(m_now());
    else if (m_now() >= m_renewAt)
        renew(m_now());
    if (m_lease != 0)
        observe();
    else
        m_role = Role::Candidate;
    // Whatever was or was not heard: past its own reckoning of the lease, it does not lead.
    if ((m_role == Role::Leader || m_role == Role::Lapsed) && m_now() >= m_validUntil)
        m_role = Role::Lapsed;
    return m_role;
}

bool Election::campaign(std::int64_t now)
{
    const std::optional<std::int64_t> lease = m_client.grantLease(m_options.ttlSeconds);
    if (!lease) {
        m_problem = "cannot open an etcd session: " + m_client.lastError().message;
        return false;
    }
    const std::string key = electionPrefix() + hex(*lease);
    const std::optional<TxnResult> made =
        m_client.txn({{key, Compare::Target::Create, Compare::Result::Equal, 0, {}}},
                     {Op::put(key, m_options.address, *lease)}, {Op::range(key)});
    if (!made) {
        m_problem = "cannot stand for election: " + m_client.lastError().message;
        m_client.revokeLease(*lease); // best effort; it expires on its own otherwise
        return false;
    }
    m_lease = *lease;
    m_key = key;
    // The transaction's revision is the key's create revision (a transaction is one revision).
    m_term = made->succeeded || made->ranges.empty() || made->ranges[0].empty()
                 ? made->revision
                 : made->ranges[0][0].createRevision;
    m_validUntil = now + m_options.ttlSeconds * 1000 - m_options.stepDownMarginMs;
    m_renewAt = now + m_options.ttlSeconds * 1000 / 3;
    return true;
}

void Election::renew(std::int64_t now)
{
    const std::optional<std::int64_t> left = m_client.keepAlive(m_lease);
    if (!left) {
        m_problem = "cannot renew the etcd session: " + m_client.lastError().message;
        return; // tried again next step; the lease as reckoned runs on
    }
    if (*left <= 0)
        return endSession("the etcd session expired");
    m_validUntil = now + *left * 1000 - m_options.stepDownMarginMs;
    m_renewAt = now + *left * 1000 / 3;
}

void Election::observe()
{
    const std::string prefix = electionPrefix();
    std::optional<std::vector<KeyValue>> candidates =
        m_client.range(prefix, Client::prefixEnd(prefix));
    if (!candidates) {
        m_problem = "cannot see the election: " + m_client.lastError().message;
        return; // the role stands until the lease as reckoned runs out
    }
    std::sort(candidates->begin(), candidates->end(), [](const KeyValue &a, const KeyValue &b) {
        return a.createRevision < b.createRevision;
    });
    m_candidates.clear();
    for (const KeyValue &kv : *candidates)
        m_candidates.push_back(kv.value);
    const bool standing = std::any_of(candidates->begin(), candidates->end(),
                                      [&](const KeyValue &kv) { return kv.key == m_key; });
    if (!standing) // the session ended between renewals
        return endSession("the etcd session expired");
    m_role = candidates->front().key == m_key ? Role::Leader : Role::Follower;
}

void Election::resign()
{
    if (m_lease != 0)
        m_client.revokeLease(m_lease);
    endSession("");
}

void Election::endSession(const char *why)
{
    m_problem = why;
    m_lease = 0;
    m_key.clear();
    m_term = 0;
    m_validUntil = 0;
    m_role = Role::Candidate;
}

} // namespace leasehold::etcd

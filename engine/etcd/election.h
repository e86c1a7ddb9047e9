#pragma once

#include "etcdclient.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace leasehold::etcd {

// One candidacy in a leader election held in etcd, after etcd's own election recipe. The
// candidate keeps a session lease alive and binds to it a key, `<prefix>election/<lease id>`,
// holding its advertised address; the candidate whose key has the lowest create revision
// leads, and that revision is its term.
//
// Fencing: every write the leader makes compares its key's create revision (fence()). While
// the key exists no lower one can appear (revisions only grow), so the compare holds exactly
// while it leads; once its lease is gone (expired or revoked) its writes fail.
//
// Never two leaders granting: a leader counts its lease from the moment it *sent* the last
// renewal that etcd answered, and stops leading `stepDownMarginMs` before that lease could
// end, renewal or no renewal; etcd counts from when it received the renewal, later, and
// only then lets the key go and the next candidate lead.
//
// A leader past its own reckoning is *lapsed*: it must act as no leader (grant nothing), but
// its key may well still stand (etcd without quorum expires no lease, and a new etcd leader
// renews them all). If a renewal answers and its key still leads, it leads again with the same
// term: no other candidate can have led meanwhile, since that needs its key gone, and a key
// once gone never returns with the same create revision. If its key is found gone, the
// session has ended (Candidate) and whatever it knew is stale.
//
// Driven by step(), from the one thread that owns the client; every call in it is bounded by
// the client's timeout. Time is the injected clock (milliseconds, monotonic).
class Election
{
public:
    struct Options
    {
        std::string prefix = "leasehold/";
        std::string address; // what followers are told to send agents to
        std::int64_t ttlSeconds = 3;
        std::int64_t stepDownMarginMs = 1000;
    };
    enum class Role { Candidate, Follower, Leader, Lapsed };

    Election(Client &client, Options options, std::function<std::int64_t()> nowMs = {});

    // Renews the session when due (or opens a new one when it is gone), then looks at who
    // leads. Returns this candidate's role now.
    Role step();
    // Gives the leadership (and the candidacy) up at once: the session lease is revoked.
    void resign();

    Role role() const { return m_role; }
    // The compare every write of the leader carries.
    Compare fence() const;
    std::int64_t term() const { return m_term; }
    // The leader's advertised address, as last seen (empty: none known).
    std::string leaderAddress() const
    {
        return m_candidates.empty() ? std::string() : m_candidates.front();
    }
    // Every candidate's advertised address as last seen, the leader first, then in the order
    // they would lead.
    const std::vector<std::string> &candidates() const { return m_candidates; }
    // When this candidate must stop leading unless a renewal answers first.
    std::int64_t leadsUntil() const { return m_validUntil; }
    // Why the last step could not see or renew (empty when it could).
    const std::string &problem() const { return m_problem; }
    std::string electionPrefix() const { return m_options.prefix + "election/"; }

private:
    bool campaign(std::int64_t now);
    void renew(std::int64_t now);
    void observe();
    void endSession(const char *why);

    Client &m_client;
    Options m_options;
    std::function<std::int64_t()> m_now;
    Role m_role = Role::Candidate;
    std::int64_t m_lease = 0;
    std::string m_key;
    std::int64_t m_term = 0;
    std::int64_t m_validUntil = 0;
    std::int64_t m_renewAt = 0;
    std::vector<std::string> m_candidates;
    std::string m_problem;
};

} // namespace leasehold::etcd

#pragma once

#include "resourcename.h"

#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

// The filesystem gate's copy of the instance's workspace leases, kept by the watch stream, so
// that a change is judged from memory and never waits on the network. Judged as the engine
// judges a write (docs/protocol.md, "Resource names"): another agent's lease of any mode on the
// name, on a folder above it, or a pattern covering either, is in the way; for a folder that
// moves or goes, so is any lease below it. A file has nothing below it, so a pattern such as
// `src/**/*.ts` is in the way of `src/a/b.ts` and not of the file `src/a/b.js`.
//
// Cost follows the depth of the name (a lookup per folder above it), not the number of leases;
// patterns, which are few, are each tested. Thread-safe: the watch's thread writes, the gate's
// workers read, under a shared lock.
class LeaseView
{
public:
    struct Lease
    {
        std::string leaseId;
        leasehold::ResourceName name;
        std::string holder;
        std::string mode; // "read", "write", "delete"
        std::uint64_t token = 0;
        std::int64_t grantedAt = 0; // ms since the epoch
        std::int64_t expiresAt = 0;
    };
    struct Verdict
    {
        std::optional<Lease> blocker; // another agent's lease in the way
        bool ownCover = false;        // a write lease of `self` covers the name
    };

    explicit LeaseView(std::string self = {});

    // The agent the gate acts for: its own leases let its changes through.
    void setSelf(const std::string &self);
    std::string self() const;

    // Replaces everything (a snapshot). Leases that are not workspace names are left out.
    void replace(std::vector<Lease> leases);
    // A grant (new, extended or renewed: the same leaseId replaces the old entry).
    void granted(Lease lease);
    // A lease ended (released or expired).
    void ended(const std::string &leaseId);

    // May `self` change `name` (a plain workspace name)? `subtree`: the change takes what is
    // below the name too (a folder renamed or removed).
    Verdict judge(const leasehold::ResourceName &name, bool subtree) const;
    std::size_t size() const;

private:
    using Path = std::vector<std::string>;
    void insert(Lease lease);
    void erase(const std::string &leaseId);
    // Whether `lease` stands in the way; sets `ownCover` when it is self's and covers.
    bool blocks(const Lease &lease, const leasehold::ResourceName &name, bool subtree,
                bool &ownCover) const;

    mutable std::shared_mutex m_lock;
    std::string m_self;
    std::map<std::string, Lease> m_byId;
    std::multimap<Path, std::string> m_plain;      // a plain name's segments -> leaseId
    std::map<std::string, std::string> m_patterns; // leaseId -> leaseId (patterns are tested)
};

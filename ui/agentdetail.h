#pragma once

#include "snapshot.h"

#include <QString>

#include <deque>
#include <optional>
#include <vector>

class ConsoleState;

// What the console knows of one agent at one moment: how it is connected, its trust and how
// that moved, what it holds and what it waits for, and the release requests it made or that
// were made of it. A pure function of ConsoleState.
//
// Thread: the UI thread.
struct AgentDetail
{
    QString did;
    bool known = false; // in the frame's agents or trust at all
    double trust = 0;
    bool suspended = false;
    std::int64_t lastSeen = 0;
    int liveSessions = 0;
    QString via;  // "MCP, REST", or empty when not live
    int keys = 0; // minted for it and still valid
    std::uint64_t releases = 0;
    std::uint64_t expiries = 0;
    std::vector<leasehold::LeaseInfo> leases; // by resource
    std::vector<leasehold::WaiterInfo> waits; // by resource
    // Open release requests it made or that were made of it (as holder), oldest first.
    std::vector<leasehold::ReleaseRequestInfo> requests;
    std::int64_t at = 0;                                      // the frame's time, for ages
    std::deque<std::pair<std::int64_t, double>> trustHistory; // (time, score), oldest first

    static AgentDetail of(const ConsoleState &state, const QString &did);
};

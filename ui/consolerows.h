#pragma once

#include "consolestate.h"
#include "tablerow.h"

#include <vector>

// The console's tables: for each view its columns, and its rows built from the latest frame
// (and what ConsoleState remembers). Pure functions of their input, so each view is tested by
// feeding frames.
namespace consolerows {

// Column positions the levers read.
enum HolderColumn {
    HolderResource,
    HolderAgent,
    HolderMode,
    HolderToken,
    HolderGranted,
    HolderExpires,
    HolderTtl,
    HolderPins,
    HolderState,
    HolderLeaseId
};
enum AgentColumn {
    AgentDid,
    AgentLastSeen,
    AgentVia,
    AgentSessions,
    AgentLeases,
    AgentWaits,
    AgentTrust,
    AgentSuspended,
    AgentKeys
};

std::vector<TableColumn> holderColumns();
std::vector<TableRow> holderRows(const ConsoleState &state);

std::vector<TableColumn> queueColumns();
std::vector<TableRow> queueRows(const ConsoleState &state);

std::vector<TableColumn> deadlockColumns();
std::vector<TableRow> deadlockRows(const ConsoleState &state);

std::vector<TableColumn> trustColumns();
std::vector<TableRow> trustRows(const ConsoleState &state);

std::vector<TableColumn> pinColumns();
std::vector<TableRow> pinRows(const ConsoleState &state);

std::vector<TableColumn> agentColumns();
std::vector<TableRow> agentRows(const ConsoleState &state);

// The health check's findings (what `ctl doctor` prints), the worst first.
std::vector<TableColumn> healthColumns();
std::vector<TableRow> healthRows(const ConsoleState &state);

// Each table's row count, as its builder would make them, without building them (so a hidden
// table's count costs nothing): xCount(state) == xRows(state).size().
std::size_t holderCount(const ConsoleState &state);
std::size_t queueCount(const ConsoleState &state);
std::size_t deadlockCount(const ConsoleState &state);
std::size_t trustCount(const ConsoleState &state);
std::size_t pinCount(const ConsoleState &state);
std::size_t agentCount(const ConsoleState &state);
std::size_t healthCount(const ConsoleState &state);

} // namespace consolerows

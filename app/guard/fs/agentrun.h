#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>

// `leasehold run -- COMMAND [ARGS...]`: runs COMMAND (an agent, a shell, a script) in a mount
// namespace of its own where the workspace root is replaced, at the same path, by the
// filesystem gate's view of it, so every process the command starts goes through the gate and
// the real folder is not reachable by path from inside (docs/guard.md, "leasehold run").
//
// Three processes: this one (the supervisor: it makes the namespace, waits, forwards signals,
// and never touches the mount), the gate (`leasehold guard fs`, started with the real folder
// already open and told to announce its mount on a pipe; its own process group, so Ctrl-C at
// the terminal reaches the command alone) and the command. The exit status is the command's
// (128 + the signal that ended it). When the command ends the gate is stopped and releases
// what the run took; when the gate dies first, the command's changes fail from then on
// (ENOTCONN) and the supervisor releases the run's leases itself. The mount lives only in the
// namespace, so when the run's processes are gone nothing is left mounted anywhere.
//
// As root the namespace needs nothing more; as another user it is made inside a user
// namespace where the system allows one (and FUSE mounts in it), else the run stops with a
// message naming what is missing.
struct AgentRunSettings
{
    QString binary;          // this program, to start the gate with
    QString root;            // the folder to gate (canonical)
    QStringList command;     // what to run
    QStringList gateFlags;   // passed to `leasehold guard fs` (--ttl, --no-implicit, ...)
    QStringList environment; // NAME=VALUE for the gate (the instance, the key)
    int readyTimeoutMs = 15'000;
    // Gives back what the run took, when the gate died before it could (POST /release).
    std::function<void()> releaseRun;
};

// Runs it; returns the exit status to leave with (the command's, or 125 when the run could not
// be set up, after printing why).
int runAgent(const AgentRunSettings &settings);

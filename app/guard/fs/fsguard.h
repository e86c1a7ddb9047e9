#pragma once

#include "serviceclient.h"

#include <QString>

#include <cstdint>

// The filesystem gate as a process (`leasehold guard fs`, and the gate `leasehold run` starts):
// learns whom its key names, follows the instance's workspace leases (the watch stream, prefix
// fs:) into a LeaseView, and once the first snapshot is in, mounts GateFs with the LeaseGate
// policy and ImplicitLeases. It serves until SIGTERM/SIGINT/SIGHUP (or the death of the process
// that started it, when started with a ready descriptor), then unmounts and releases the
// run's leases. It makes itself undumpable, so an unprivileged agent cannot reach the real
// folder through /proc/<pid>/fd of the gate.
//
// Thread: the main thread runs Qt's loop (the watch, the service's answers); GateFs serves on
// threads of its own.
struct FsGuardSettings
{
    ServiceClient::Settings service; // via "fs"
    QString mountPoint;
    QString root;       // the real folder (opened before mounting, unless backingFd is given)
    int backingFd = -1; // the real folder, already open (O_PATH | O_DIRECTORY)
    int readyFd = -1;   // "ok\n" is written here once mounted, "error: ...\n" if it cannot be
    QString runDir;     // where refusals.jsonl is kept for `leasehold why`; empty: not kept
    bool implicit = true;
    std::int64_t ttlMs = 600'000;
    std::int64_t staleAfterMs = 5'000;
    int heartbeatMs = 2'000;
    int threads = 8;
    bool debug = false;
};

// Serves until stopped; the exit code: 0 after a clean stop, 3 the instance cannot be reached
// (or refused the key), 4 the mount failed.
int runFsGuard(const FsGuardSettings &settings);

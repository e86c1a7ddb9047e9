#pragma once

// A SQLite VFS that wraps the platform's own and fails on demand: the seam through which the
// store tests make the real SQLite see a full disk, an I/O error, a read-only file or a failed
// open, exactly when the test says, and then recover. Installed as the default VFS, so every
// connection the store opens (through QtSql, which uses the same system SQLite) goes through it.
// It can also slow every fsync down, for what must notice a slow disk.

#include <atomic>

namespace leasehold::test {

struct Faults
{
    std::atomic<int> writeError{0};  // a SQLite result code xWrite returns instead of writing
    std::atomic<int> syncError{0};   // ... xSync returns instead of syncing
    std::atomic<int> openError{0};   // ... xOpen returns for the main database file
    std::atomic<int> writes{0};      // xWrite calls that failed so far
    std::atomic<int> syncDelayMs{0}; // xSync waits this long first: a slow disk

    void clear()
    {
        writeError = 0;
        syncError = 0;
        openError = 0;
        syncDelayMs = 0;
    }
};

// Registers the VFS as the default (once per process) and returns its switches.
Faults &installFaultVfs();

} // namespace leasehold::test

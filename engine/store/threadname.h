#pragma once

namespace leasehold {

// Names the calling thread as `top -H`, `perf` and /proc/<pid>/task/*/comm show it (at most 15
// characters; longer is cut). The store's threads name themselves, so an operator can tell the
// writer from the archiver when one of them is busy or stuck.
void nameThisThread(const char *name);

} // namespace leasehold

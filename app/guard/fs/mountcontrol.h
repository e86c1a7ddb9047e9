#pragma once

#include <optional>
#include <string>
#include <vector>

// Finding the gate's own mount in /proc/self/mountinfo and taking it away again, without ever
// touching the mounted tree from the gate's process (a request from the gate to itself could
// wait on a worker that is waiting on it).
//
// Care matters because the gate is mounted over the very folder it serves: after our mount is
// gone, the same path names the real folder, which may itself be a mount (a bind mount, a
// volume). Nothing here unmounts a path unless the topmost mount on it is still ours.
//
// Thread-safety: free functions without state; any thread.
namespace leasehold::fsgate::detail {

struct MountEntry
{
    int id = 0;
    int parent = 0;
    unsigned major = 0;
    unsigned minor = 0;
    std::string mountPoint; // unescaped
    std::string fsType;
    std::string source;
};

std::vector<MountEntry> readMountInfo();
// The mount on top at `mountPoint` (absolute, canonical), if any.
std::optional<MountEntry> topMountAt(const std::string &mountPoint);

// Detaches the mount at `mountPoint` if the topmost one there is still device major:minor:
// umount2(MNT_DETACH) when privileged, else `fusermount3 -u -z`. False if it was not ours any
// more or could not be detached.
bool detachMount(const std::string &mountPoint, unsigned major, unsigned minor);

// Severs a FUSE connection (its number is the mount's minor) through the fusectl file system,
// when it is mounted and writable: every request then fails with ENOTCONN and the server's
// reads with ENODEV.
bool abortConnection(unsigned minor);

} // namespace leasehold::fsgate::detail

#include "leasestore.h"

namespace leasehold {

const char *StoreHealth::reasonName() const
{
    switch (problem) {
    case Problem::None:
        return "ok";
    case Problem::DiskFull:
        return "disk_full";
    case Problem::IoError:
        return "io_error";
    case Problem::ReadOnly:
        return "read_only";
    case Problem::Locked:
        return "locked";
    case Problem::CannotOpen:
        return "cannot_open";
    case Problem::Unresponsive:
        return "unresponsive";
    case Problem::EtcdUnavailable:
        return "etcd_unavailable";
    case Problem::NotLeading:
        return "not_leading";
    }
    return "io_error";
}

const char *StoreHealth::phrase() const
{
    switch (problem) {
    case Problem::None:
        return "the store is healthy";
    case Problem::DiskFull:
        return "the disk holding the state database is full";
    case Problem::IoError:
        return "the disk holding the state database reports I/O errors";
    case Problem::ReadOnly:
        return "the state database is read-only";
    case Problem::Locked:
        return "another process holds the state database locked";
    case Problem::CannotOpen:
        return "the state database cannot be opened";
    case Problem::Unresponsive:
        return "the disk has not confirmed a write in time";
    case Problem::EtcdUnavailable:
        return "etcd cannot be reached or has no quorum";
    case Problem::NotLeading:
        return "this instance no longer leads the cluster";
    }
    return "the store is failing";
}

} // namespace leasehold

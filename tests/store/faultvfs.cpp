#include "faultvfs.h"

#include <sqlite3.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace leasehold::test {

namespace {

Faults g_faults;
sqlite3_vfs *g_root = nullptr;
sqlite3_vfs g_vfs;

// Our file: the header SQLite sees, followed by the real VFS's file.
struct FaultFile
{
    sqlite3_file base;
    sqlite3_file *real;
};

sqlite3_file *real(sqlite3_file *f)
{
    return reinterpret_cast<FaultFile *>(f)->real;
}

int xClose(sqlite3_file *f)
{
    return real(f)->pMethods->xClose(real(f));
}
int xRead(sqlite3_file *f, void *buf, int n, sqlite3_int64 at)
{
    return real(f)->pMethods->xRead(real(f), buf, n, at);
}
int xWrite(sqlite3_file *f, const void *buf, int n, sqlite3_int64 at)
{
    if (const int rc = g_faults.writeError.load()) {
        ++g_faults.writes;
        return rc;
    }
    return real(f)->pMethods->xWrite(real(f), buf, n, at);
}
int xTruncate(sqlite3_file *f, sqlite3_int64 size)
{
    return real(f)->pMethods->xTruncate(real(f), size);
}
int xSync(sqlite3_file *f, int flags)
{
    if (const int rc = g_faults.syncError.load())
        return rc;
    if (const int ms = g_faults.syncDelayMs.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return real(f)->pMethods->xSync(real(f), flags);
}
int xFileSize(sqlite3_file *f, sqlite3_int64 *size)
{
    return real(f)->pMethods->xFileSize(real(f), size);
}
int xLock(sqlite3_file *f, int level)
{
    return real(f)->pMethods->xLock(real(f), level);
}
int xUnlock(sqlite3_file *f, int level)
{
    return real(f)->pMethods->xUnlock(real(f), level);
}
int xCheckReservedLock(sqlite3_file *f, int *out)
{
    return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
int xFileControl(sqlite3_file *f, int op, void *arg)
{
    return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int xSectorSize(sqlite3_file *f)
{
    return real(f)->pMethods->xSectorSize(real(f));
}
int xDeviceCharacteristics(sqlite3_file *f)
{
    return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
int xShmMap(sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
    return real(f)->pMethods->xShmMap(real(f), page, size, extend, out);
}
int xShmLock(sqlite3_file *f, int offset, int n, int flags)
{
    return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void xShmBarrier(sqlite3_file *f)
{
    real(f)->pMethods->xShmBarrier(real(f));
}
int xShmUnmap(sqlite3_file *f, int deleteFlag)
{
    return real(f)->pMethods->xShmUnmap(real(f), deleteFlag);
}
int xFetch(sqlite3_file *f, sqlite3_int64 at, int n, void **out)
{
    return real(f)->pMethods->xFetch(real(f), at, n, out);
}
int xUnfetch(sqlite3_file *f, sqlite3_int64 at, void *p)
{
    return real(f)->pMethods->xUnfetch(real(f), at, p);
}

const sqlite3_io_methods kMethods = {
    3,
    xClose,
    xRead,
    xWrite,
    xTruncate,
    xSync,
    xFileSize,
    xLock,
    xUnlock,
    xCheckReservedLock,
    xFileControl,
    xSectorSize,
    xDeviceCharacteristics,
    xShmMap,
    xShmLock,
    xShmBarrier,
    xShmUnmap,
    xFetch,
    xUnfetch,
};

int xOpen(sqlite3_vfs *, const char *name, sqlite3_file *file, int flags, int *outFlags)
{
    auto *f = reinterpret_cast<FaultFile *>(file);
    f->base.pMethods = nullptr;
    if ((flags & SQLITE_OPEN_MAIN_DB) != 0) {
        if (const int rc = g_faults.openError.load())
            return rc;
    }
    f->real = reinterpret_cast<sqlite3_file *>(f + 1);
    const int rc = g_root->xOpen(g_root, name, f->real, flags, outFlags);
    if (rc == SQLITE_OK && f->real->pMethods)
        f->base.pMethods = &kMethods;
    return rc;
}

} // namespace

Faults &installFaultVfs()
{
    if (!g_root) {
        g_root = sqlite3_vfs_find(nullptr);
        g_vfs = *g_root;
        g_vfs.zName = "leasehold-faults";
        g_vfs.szOsFile = int(sizeof(FaultFile)) + g_root->szOsFile;
        g_vfs.xOpen = xOpen;
        g_vfs.pNext = nullptr;
        sqlite3_vfs_register(&g_vfs, 1);
    }
    return g_faults;
}

} // namespace leasehold::test

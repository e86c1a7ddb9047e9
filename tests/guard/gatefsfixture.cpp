#include "gatefsfixture.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#ifndef GATEFS_HELPER
#error "GATEFS_HELPER: the path of tst_gatefs_gate"
#endif

namespace gatefstest {

const QStringList kDenied{"held.txt", "lockeddir", "tree/inner/held.txt", "link"};

bool isMounted(const QString &path)
{
    QFile info(QStringLiteral("/proc/self/mountinfo"));
    if (!info.open(QIODevice::ReadOnly))
        return false;
    // mountinfo escapes spaces as \040; the test's paths have none.
    const QByteArray needle = ' ' + QFile::encodeName(path) + ' ';
    return info.readAll().contains(needle);
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

bool Fixture::write(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

QPair<int, QByteArray> Fixture::sh(const QString &command, const QString &where)
{
    QProcess p;
    p.setWorkingDirectory(where);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("sh"), {QStringLiteral("-c"), command});
    if (!p.waitForFinished(kDeadlineMs))
        return {-1, "timed out"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAll()};
}

bool Fixture::startGate(Gate &gate, const QString &mount, QString *why, const QStringList &extra)
{
    QDir().mkpath(mount);
    QString reason;
    const bool ok = gate.start(m_backing, mount, m_log, m_bus, kDenied, &reason, extra);
    if (why)
        *why = reason;
    return ok;
}

bool Fixture::restartGate(const QStringList &extra, QString *why)
{
    if (!m_gate->stop()) {
        *why = QStringLiteral("the gate did not stop cleanly");
        return false;
    }
    return startGate(*m_gate, m_mount, why, extra);
}

QByteArray Fixture::protectedState() const
{
    QByteArray state;
    for (const char *rel : {"held.txt", "lockeddir/existing.txt", "tree/inner/held.txt"}) {
        struct stat st = {};
        const QByteArray path = QFile::encodeName(back(rel));
        if (::lstat(path.constData(), &st) != 0) {
            state += QByteArray(rel) + " missing\n";
            continue;
        }
        state += QByteArray(rel) + ' ' + QByteArray::number(st.st_mode, 8) + ' ' +
                 QByteArray::number(qint64(st.st_mtim.tv_sec)) + '.' +
                 QByteArray::number(qint64(st.st_mtim.tv_nsec)) + ' ' + readAll(back(rel)) + '\n';
    }
    for (const char *rel : {"link", "hard.txt", "moved.txt", "lockeddir/sub", "tree2"})
        state += QByteArray(rel) + (QFileInfo::exists(back(rel)) ? " exists\n" : " absent\n");
    return state;
}

bool Fixture::setUp(QString *why)
{
    m_dir = std::make_unique<QTemporaryDir>(QDir::tempPath() + "/tst_gatefs-XXXXXX");
    m_backing = m_dir->filePath("backing");
    m_mount = m_dir->filePath("mnt");
    m_log = m_dir->filePath("policy.log");
    m_bus = m_dir->filePath("bus");
    const bool files = write(back("held.txt"), "original\n") && write(back("free.txt"), "free\n") &&
                       write(back("lockeddir/existing.txt"), "locked\n") &&
                       write(back("tree/inner/held.txt"), "deep\n") &&
                       write(back("tree/inner/other.txt"), "other\n") &&
                       write(back("x1.txt"), "one\n") && write(back("x2.txt"), "two\n");
    if (!files) {
        *why = QStringLiteral("cannot write the backing files in ") + m_backing;
        return false;
    }
    m_gate = std::make_unique<Gate>();
    if (!startGate(*m_gate, m_mount, why)) {
        m_gate.reset();
        return false;
    }
    return true;
}

void Fixture::tearDown()
{
    if (m_gate)
        m_gate->stop();
    m_gate.reset();
    if (!m_mount.isEmpty() && isMounted(m_mount))
        QProcess::execute(QStringLiteral("fusermount3"), {"-u", "-z", m_mount});
    m_dir.reset();
}

QList<Event> Fixture::events() const
{
    QList<Event> out;
    QFile f(m_log);
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray &line : f.readAll().split('\n')) {
        const QList<QByteArray> p = line.split('\t');
        Event e;
        e.kind = p.value(0);
        if (e.kind == "closed" && p.size() == 2) {
            e.handle = p[1].toULongLong();
        } else if (p.size() == 10) {
            e.op = p[1];
            e.path = QByteArray::fromPercentEncoding(p[2]);
            e.target = QByteArray::fromPercentEncoding(p[3]);
            e.directory = p[4] == "1";
            e.handle = p[6].toULongLong();
            e.value = p[9].toInt();
        } else {
            continue;
        }
        out << e;
    }
    return out;
}

} // namespace gatefstest

namespace gatefstest {

namespace {

bool refused(long r)
{
    return r == -1 && errno == EACCES;
}

} // namespace

// Zero-open: a held file opens, even for writing (nothing changes at open), and then every way
// to change it through that descriptor is refused, having changed nothing, each asked of the
// policy as itself and with no handle. The very first open of the connection, the one the gate
// answers ENOSYS, truncates: the kernel must not skip that truncation (atomic_o_trunc) but ask.
void Fixture::everyWriteThroughAnOpenHeldFileIsRefused()
{
    const QByteArray held = QFile::encodeName(mnt("held.txt"));
    const QByteArray before = protectedState();
    errno = 0;
    QCOMPARE(::open(held.constData(), O_WRONLY | O_TRUNC), -1);
    QCOMPARE(errno, EACCES);
    const int fd = ::open(held.constData(), O_RDWR);
    const int src = ::open(QFile::encodeName(mnt("free.txt")).constData(), O_RDONLY);
    QVERIFY(fd >= 0 && src >= 0);
    struct stat st = {};
    QCOMPARE(::fstat(fd, &st), 0); // getattr with fh 0
    QCOMPARE(st.st_size, off_t(9));
    char buf[16] = {};
    QCOMPARE(::pread(fd, buf, sizeof buf, 0), ssize_t(9));
    QVERIFY(refused(::write(fd, "X", 1)));
    QVERIFY(refused(::pwrite(fd, "X", 1, 4)));
    QVERIFY(refused(::ftruncate(fd, 1)));
    QVERIFY(refused(::fallocate(fd, 0, 0, 4096)));
    QVERIFY(refused(::futimens(fd, nullptr)));
    QVERIFY(refused(::fchmod(fd, 0600)));
    loff_t in = 0, out = 0;
    QVERIFY(refused(::copy_file_range(src, &in, fd, &out, 4, 0)));
    // A shared mapping changes the kernel's cache before anyone can be asked: its write-back is
    // refused, and the refused bytes do not stay visible through the gate.
    void *map = ::mmap(nullptr, 9, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    QVERIFY(map != MAP_FAILED);
    std::memcpy(map, "ZZZ", 3);
    QVERIFY(refused(::msync(map, 9, MS_SYNC)));
    ::munmap(map, 9);
    ::close(fd);
    ::close(src);
    QCOMPARE(protectedState(), before);
    QTRY_COMPARE_WITH_TIMEOUT(readAll(mnt("held.txt")), QByteArray("original\n"), kDeadlineMs);
    QList<QByteArray> ops;
    for (const Event &e : events()) {
        if (e.kind != "admit" || e.path != "held.txt")
            continue;
        QCOMPARE(e.value, EACCES);
        QCOMPARE(e.handle, quint64(0));
        ops << e.op;
    }
    QCOMPARE(ops.value(0), QByteArray("truncate")); // the open's O_TRUNC, as a setattr
    QVERIFY2(!ops.contains("open"), ops.join(' '));
    QVERIFY2(ops.count("write") >= 5 && ops.contains("setattr"), ops.join(' '));
}

// Zero-open, a free file: what is written through a descriptor the kernel opened without asking
// lands as it would through a handle: at its offset, appends at the backing file's real end
// (grown outside meanwhile), truncations, allocations, copies and a shared mapping; fsync and
// SEEK_DATA reach the backing file. Each asked of the policy with no handle; open never.
void Fixture::writesThroughOpenFilesLandAsThroughHandles()
{
    const QByteArray path = QFile::encodeName(mnt("free.txt"));
    int fd = ::open(path.constData(), O_RDWR);
    QVERIFY(fd >= 0);
    QCOMPARE(::pwrite(fd, "FR", 2, 0), ssize_t(2));
    QCOMPARE(readAll(back("free.txt")), QByteArray("FRee\n"));
    QCOMPARE(::ftruncate(fd, 3), 0);
    QCOMPARE(readAll(back("free.txt")), QByteArray("FRe"));
    QCOMPARE(::fallocate(fd, 0, 0, 8192), 0);
    QCOMPARE(QFileInfo(back("free.txt")).size(), qint64(8192));
    QCOMPARE(::ftruncate(fd, 3), 0);
    struct stat st = {};
    QCOMPARE(::fstat(fd, &st), 0);
    QCOMPARE(st.st_size, off_t(3));
    QCOMPARE(::lseek(fd, 0, SEEK_DATA), off_t(0));
    QCOMPARE(::fsync(fd), 0);
    void *map = ::mmap(nullptr, 3, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    QVERIFY(map != MAP_FAILED);
    std::memcpy(map, "fre", 3);
    QCOMPARE(::msync(map, 3, MS_SYNC), 0);
    ::munmap(map, 3);
    ::close(fd);
    QCOMPARE(readAll(back("free.txt")), QByteArray("fre"));

    fd = ::open(path.constData(), O_WRONLY | O_APPEND);
    QVERIFY(fd >= 0);
    QFile outside(back("free.txt"));
    QVERIFY(outside.open(QIODevice::Append) && outside.write("+outside") == 8);
    outside.close();
    QCOMPARE(::write(fd, "!", 1), ssize_t(1)); // the kernel thinks the file ends at 3
    ::close(fd);
    QCOMPARE(readAll(back("free.txt")), QByteArray("fre+outside!"));

    const int src = ::open(QFile::encodeName(mnt("x1.txt")).constData(), O_RDONLY);
    fd = ::open(path.constData(), O_WRONLY);
    QVERIFY(src >= 0 && fd >= 0);
    loff_t in = 0, out = 0;
    QCOMPARE(::copy_file_range(src, &in, fd, &out, 4, 0), ssize_t(4));
    ::close(src);
    ::close(fd);
    QCOMPARE(readAll(back("free.txt")), QByteArray("one\noutside!"));

    QList<QByteArray> ops;
    for (const Event &e : events()) {
        QVERIFY2(e.kind != "closed", "no handle, so nothing is closed");
        if (e.kind == "admit" && e.path == "free.txt") {
            QCOMPARE(e.value, 0);
            QCOMPARE(e.handle, quint64(0));
            ops << e.op;
        }
    }
    QVERIFY2(!ops.contains("open") && ops.count("truncate") == 2 && ops.count("write") >= 5,
             ops.join(' '));
}

void Fixture::zeroOpenAsksWritesNotOpens()
{
    // Opening for writing changes nothing: not asked. The first write is, with no handle.
    const int fd = ::open(QFile::encodeName(mnt("free.txt")).constData(), O_WRONLY | O_APPEND);
    QVERIFY(fd >= 0);
    QVERIFY(events().isEmpty());
    QVERIFY(::write(fd, "+", 1) == 1);
    const int made =
        ::open(QFile::encodeName(mnt("made.txt")).constData(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    QVERIFY(made >= 0);
    QVERIFY(::write(made, "m", 1) == 1);
    ::close(made);
    ::close(fd);
    QCOMPARE(readAll(back("free.txt")), QByteArray("free\n+"));
    QStringList seen;
    for (const Event &e : events()) {
        seen << QString::fromUtf8(e.kind + ' ' + e.op + ' ' + e.path + ' ' +
                                  QByteArray::number(e.handle));
    }
    // A created file has no handle either: the kernel sends no release in zero-open mode.
    QCOMPARE(seen, QStringList({"admit write free.txt 0", "done write free.txt 0",
                                "admit create made.txt 0", "done create made.txt 0",
                                "admit write made.txt 0", "done write made.txt 0"}));
}

// Contents changed outside every gate reach reads, from a new descriptor and from one kept open
// since before: told by the folder's watch at once, or without one once the attribute timeout
// (1 s) ran out; either way within the 3 s waited here.
void Fixture::outsideChangesReachReads()
{
    const int fd = ::open(QFile::encodeName(mnt("free.txt")).constData(), O_RDONLY);
    QVERIFY(fd >= 0);
    QCOMPARE(readAll(mnt("free.txt")), QByteArray("free\n")); // now in the kernel's cache
    QVERIFY(write(back("free.txt"), "FREE\n"));               // same size, new mtime
    QTRY_COMPARE_WITH_TIMEOUT(readAll(mnt("free.txt")), QByteArray("FREE\n"), 3000);
    char buf[8] = {};
    QCOMPARE(::pread(fd, buf, sizeof buf, 0), ssize_t(5));
    QCOMPARE(QByteArray(buf), QByteArray("FREE\n"));
    ::close(fd);
}

} // namespace gatefstest

// The filesystem gate's backing watch (app/guard/fs/backingwatch.h), mounted for real: changes
// made directly in the backing folder, outside every gate, reach the view through the mount at
// once, although the kernel is given long timeouts (30 s) where a watch sees every change. Each
// case primes the kernel's caches just before the change and polls for at most 500 ms: with
// the short (1 s) timeouts and no invalidation it would still see what it cached. Needs root
// and /dev/fuse; skipped, saying why, where either is missing.

#include "gatefsfixture.h"

#include <QElapsedTimer>

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gatefstest;

class TstGateWatch : public Fixture
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup() { tearDown(); }

    void outsideChangesReachTheViewAtOnce();
    void longTimeoutsAreInForceWhereWatched();
    void aFileWithTwoLinksKeepsTheShortTimeout();
    void withoutWatchesTheShortTimeoutsHold();
    void watchesGoWithTheirFolders();

private:
    struct stat statOf(const QString &path, bool *ok = nullptr) const
    {
        struct stat st = {};
        const bool found = ::lstat(QFile::encodeName(path).constData(), &st) == 0;
        if (ok)
            *ok = found;
        return st;
    }
    QStringList list(const QString &rel) const
    {
        return QDir(mnt(rel)).entryList(QDir::NoDotAndDotDot | QDir::AllEntries, QDir::Name);
    }
    // Every change primeAndChange() made, as seen through the mount.
    bool changesVisible() const;
    void primeAndChange();
    // The watches the gate's process holds (its inotify descriptors' fdinfo).
    int watches() const;
    // `rel` grows to `bytes` through a hard link outside the backing tree: no watch hears it.
    bool growUnseen(const QString &rel, const QByteArray &bytes);

    QString m_skip;
};

void TstGateWatch::initTestCase()
{
    if (::geteuid() != 0)
        m_skip = QStringLiteral("the gate mounts with allow_other: needs root");
    else if (::access("/dev/fuse", R_OK | W_OK) != 0)
        m_skip = QStringLiteral("/dev/fuse is missing or not usable");
    QString why;
    if (m_skip.isEmpty() && !setUp(&why)) {
        tearDown();
        if (!why.startsWith(QStringLiteral("error: cannot mount")))
            QFAIL(qPrintable("the gate did not start: " + why));
        m_skip = QStringLiteral("cannot mount a FUSE file system here: ") + why;
    }
    tearDown();
    if (!m_skip.isEmpty())
        qInfo("tst_gatewatch skipped: %s", qPrintable(m_skip));
}

void TstGateWatch::init()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QString why;
    if (!setUp(&why))
        QFAIL(qPrintable("the gate did not start: " + why));
}

void TstGateWatch::primeAndChange()
{
    // Cached through the mount: a negative entry, names, a page, a mode, two listings.
    QVERIFY(!QFileInfo::exists(mnt("new.txt")));
    QVERIFY(QFileInfo::exists(mnt("x1.txt")) && QFileInfo::exists(mnt("x2.txt")));
    QCOMPARE(readAll(mnt("free.txt")), QByteArray("free\n"));
    QCOMPARE(statOf(mnt("held.txt")).st_mode & 07777, mode_t(0644));
    QVERIFY(list(QString()).contains("x1.txt"));
    QVERIFY(!list("tree/inner").contains("deep.txt"));

    QVERIFY(write(back("new.txt"), "new\n"));
    QVERIFY(QFile::remove(back("x1.txt")));
    QVERIFY(QFile::rename(back("x2.txt"), back("y2.txt")));
    QVERIFY(write(back("free.txt"), "FREE\n")); // same size
    QCOMPARE(::chmod(QFile::encodeName(back("held.txt")).constData(), 0600), 0);
    QVERIFY(write(back("tree/inner/deep.txt"), "deep\n"));
}

bool TstGateWatch::changesVisible() const
{
    const QStringList top = list(QString());
    return QFileInfo::exists(mnt("new.txt")) && !QFileInfo::exists(mnt("x1.txt")) &&
           !QFileInfo::exists(mnt("x2.txt")) && readAll(mnt("y2.txt")) == "two\n" &&
           readAll(mnt("free.txt")) == "FREE\n" &&
           (statOf(mnt("held.txt")).st_mode & 07777) == 0600 && top.contains("new.txt") &&
           top.contains("y2.txt") && !top.contains("x1.txt") &&
           list("tree/inner").contains("deep.txt");
}

int TstGateWatch::watches() const
{
    int count = 0;
    const QString fdinfo = QStringLiteral("/proc/%1/fdinfo").arg(m_gate->pid());
    for (const QString &fd : QDir(fdinfo).entryList(QDir::Files))
        count += int(readAll(fdinfo + '/' + fd).count("inotify wd:"));
    return count;
}

bool TstGateWatch::growUnseen(const QString &rel, const QByteArray &bytes)
{
    const QString other = m_dir->filePath("elsewhere/" + QFileInfo(rel).fileName());
    QDir().mkpath(QFileInfo(other).absolutePath());
    if (!QFileInfo::exists(other) &&
        ::link(QFile::encodeName(back(rel)).constData(), QFile::encodeName(other).constData()))
        return false;
    QFile f(other);
    return f.open(QIODevice::Append) && f.write(bytes) == bytes.size();
}

// Create, delete, rename, a same-size rewrite, a chmod and a create one folder down: all seen
// through the mount within 500 ms of the change, the kernel's caches primed just before.
void TstGateWatch::outsideChangesReachTheViewAtOnce()
{
    QElapsedTimer primed;
    primed.start();
    primeAndChange();
    QTRY_VERIFY_WITH_TIMEOUT(changesVisible(), 500);
    QVERIFY2(primed.elapsed() < 900, "the short timeouts could have run out: too slow to tell");
}

// The long timeouts are what the kernel was given: a change no watch can hear (through a hard
// link made outside the backing tree, after the kernel cached the file with one link) stays
// unseen well past the short timeout.
void TstGateWatch::longTimeoutsAreInForceWhereWatched()
{
    // Made before the gate starts: no event of its making may drop what is cached next.
    QVERIFY(write(back("solo.txt"), "solo\n"));
    QString why;
    QVERIFY2(restartGate({}, &why), qPrintable(why));
    QCOMPARE(statOf(mnt("solo.txt")).st_size, off_t(5));
    QCOMPARE(statOf(mnt("solo.txt")).st_nlink, nlink_t(1));
    QVERIFY(growUnseen("solo.txt", "grown\n"));
    QTest::qWait(1500); // past the short timeouts: nothing may have asked the gate again
    QCOMPARE(statOf(mnt("solo.txt")).st_size, off_t(5));
    // A change the watch hears drops it at once.
    QCOMPARE(::chmod(QFile::encodeName(back("solo.txt")).constData(), 0600), 0);
    QTRY_COMPARE_WITH_TIMEOUT(statOf(mnt("solo.txt")).st_size, off_t(11), 500);
}

// A file with a second name elsewhere keeps the short attribute timeout: a change through that
// name is seen within about a second.
void TstGateWatch::aFileWithTwoLinksKeepsTheShortTimeout()
{
    QVERIFY(write(back("twice.txt"), "two\n"));
    QVERIFY(growUnseen("twice.txt", QByteArray()));
    QCOMPARE(statOf(mnt("twice.txt")).st_nlink, nlink_t(2));
    QVERIFY(growUnseen("twice.txt", "more\n"));
    QElapsedTimer changed;
    changed.start();
    QTRY_COMPARE_WITH_TIMEOUT(statOf(mnt("twice.txt")).st_size, off_t(9), 3000);
    QVERIFY2(changed.elapsed() < 1800, qPrintable(QString::number(changed.elapsed())));
}

// Watches capped at 0 (what a full fs.inotify.max_user_watches looks like): the kernel is given
// the short timeouts, and outside changes still reach the view within about a second.
void TstGateWatch::withoutWatchesTheShortTimeoutsHold()
{
    QString why;
    QVERIFY2(restartGate({"--max-watches", "0"}, &why), qPrintable(why));
    QCOMPARE(watches(), 0);
    QElapsedTimer changed;
    changed.start();
    primeAndChange();
    QVERIFY(!changesVisible()); // cached, and nothing tells the kernel
    QTRY_VERIFY_WITH_TIMEOUT(changesVisible(), 3000);
    QVERIFY2(changed.elapsed() < 1800, qPrintable(QString::number(changed.elapsed())));
    QVERIFY(write(back("solo.txt"), "solo\n"));
    QCOMPARE(statOf(mnt("solo.txt")).st_size, off_t(5));
    QVERIFY(growUnseen("solo.txt", "grown\n"));
    QTRY_COMPARE_WITH_TIMEOUT(statOf(mnt("solo.txt")).st_size, off_t(11), 3000);
}

// A folder's watch goes when the kernel forgets it or it is removed outside: none is left
// behind.
void TstGateWatch::watchesGoWithTheirFolders()
{
    QTRY_VERIFY_WITH_TIMEOUT(watches() >= 1, 2000); // the root
    const int before = watches();
    QVERIFY(QDir().mkpath(mnt("w1/w2")));
    QVERIFY(QFileInfo(mnt("w1/w2")).isDir());
    QCOMPARE(watches(), before + 2);
    QVERIFY(QDir(mnt("w1")).removeRecursively());
    QTRY_COMPARE_WITH_TIMEOUT(watches(), before, kDeadlineMs); // forgotten by the kernel
    QVERIFY(QDir().mkpath(back("o1")));
    // Held open through the mount: the root's watch hears of the create and may drop the name
    // from the kernel's cache after our lookup, and an unreferenced inode would then be
    // forgotten (its watch with it) before the count is read.
    const int held = ::open(QFile::encodeName(mnt("o1")).constData(), O_RDONLY | O_DIRECTORY);
    QVERIFY(held >= 0);
    QTRY_COMPARE_WITH_TIMEOUT(watches(), before + 1, kDeadlineMs);
    ::close(held);
    QVERIFY(QDir(back("o1")).removeRecursively());
    QTRY_COMPARE_WITH_TIMEOUT(watches(), before, kDeadlineMs);
    QVERIFY(!QFileInfo::exists(mnt("o1")));
}

QTEST_GUILESS_MAIN(TstGateWatch)
#include "tst_gatewatch.moc"

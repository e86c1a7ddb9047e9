// The filesystem gate (app/guard/fs) mounted for real: each case mounts a gate on a temporary
// folder backed by another, in its own process (tst_gatefs_gate, with a policy that refuses a
// few paths and logs every call), and this process runs the shell commands agents run. Needs
// root and /dev/fuse; skipped, saying why, where either is missing or mounting is not allowed.

#include "gatefsfixture.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gatefstest;

class TstGateFs : public Fixture
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void refusedShellChangesLeaveTheBackingAlone_data();
    void refusedShellChangesLeaveTheBackingAlone();
    void allowedShellChangesReachTheBacking_data();
    void allowedShellChangesReachTheBacking();
    void exchangeAndNoReplaceAreHonoured();
    void folderRenameIsAskedAsADirectory();
    void pathsFollowFolderRenames();
    void oddNamesHardLinksAndDeletedFiles();
    void closedFiresWhenAWriteHandleIsReleased();
    // clang-format off
    // Zero-open's own cases (gatefsfixture.cpp).
    void zeroOpenAsksWritesNotOpens() { Fixture::zeroOpenAsksWritesNotOpens(); }
    void everyWriteThroughAnOpenHeldFileIsRefused() { Fixture::everyWriteThroughAnOpenHeldFileIsRefused(); }
    void writesThroughOpenFilesLandAsThroughHandles() { Fixture::writesThroughOpenFilesLandAsThroughHandles(); }
    void outsideChangesReachReads() { Fixture::outsideChangesReachReads(); }
    // clang-format on
    void twoGatesSeeEachOthersChangesAtOnce();
    void hugeDirectoriesListCompletely();
    void descriptorsDoNotLeak();
    void stopUnmounts();
    void aKilledGateLeavesNoMount();

private:
    QString m_skip;
};

void TstGateFs::initTestCase()
{
    if (::geteuid() != 0)
        m_skip = QStringLiteral(
            "the gate mounts with allow_other and raises its file limit: needs root");
    else if (::access("/dev/fuse", R_OK | W_OK) != 0)
        m_skip = QStringLiteral("/dev/fuse is missing or not usable");
    // A first mount tells an environment that forbids mounting from a broken gate.
    QString why;
    if (m_skip.isEmpty() && !setUp(&why)) {
        cleanup();
        // Only the mount itself failing is the environment's doing; anything else is the gate's.
        if (!why.startsWith(QStringLiteral("error: cannot mount")))
            QFAIL(qPrintable("the gate did not start: " + why));
        m_skip = QStringLiteral("cannot mount a FUSE file system here: ") + why;
    }
    cleanup();
    if (!m_skip.isEmpty())
        qInfo("tst_gatefs skipped: %s", qPrintable(m_skip));
}

void TstGateFs::init()
{
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QString why;
    if (!setUp(&why))
        QFAIL(qPrintable("the gate did not start: " + why));
}

void TstGateFs::cleanup()
{
    tearDown();
}

// Every row twice: zero-open (the default), and "[handles]", zeroOpen off.
template<typename... Columns> void bothModes(const char *tag, Columns... columns)
{
    QTestData &zeroOpen = QTest::newRow(tag);
    ((zeroOpen << columns), ...) << false;
    QTestData &handles = QTest::newRow(qPrintable(QString::fromUtf8(tag) + " [handles]"));
    ((handles << columns), ...) << true;
}

void TstGateFs::refusedShellChangesLeaveTheBackingAlone_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QByteArray>("op");        // what the policy refused; empty: not checked
    QTest::addColumn<QByteArray>("handlesOp"); // the same with zeroOpen off
    QTest::addColumn<bool>("handles");
    using B = QByteArray;
    using S = QString;
    bothModes("sed -i", S("sed -i s/original/changed/ held.txt"), B("rename"), B("rename"));
    bothModes("echo >", S("echo new > held.txt"), B("truncate"), B("truncate"));
    // Zero-open refuses the write, not the open: bash says why, dash's echo says "I/O error".
    bothModes("echo >>", S("bash -c 'echo more >> held.txt'"), B("write"), B("open"));
    // `|| exit`: bash goes on after a failed exec, and fd 3 may be one the test inherited.
    bothModes("exec 3<>", S("bash -c 'exec 3<> held.txt || exit 1; echo x >&3'"), B("write"),
              B("open"));
    bothModes("dd notrunc", S("dd if=free.txt of=held.txt conv=notrunc"), B("write"), B("open"));
    bothModes("python open w", S("python3 -c \"open('held.txt','w')\""), B("truncate"),
              B("truncate"));
    bothModes("mv tmp held", S("echo x > tmp.txt && mv tmp.txt held.txt"), B("rename"),
              B("rename"));
    bothModes("mv held elsewhere", S("mv held.txt moved.txt"), B("rename"), B("rename"));
    bothModes("rm", S("rm -f held.txt"), B("unlink"), B("unlink"));
    bothModes("touch", S("touch held.txt"), B("setattr"), B("open"));
    bothModes("chmod", S("chmod 600 held.txt"), B("setattr"), B("setattr"));
    bothModes("truncate", S("truncate -s 0 held.txt"), B("truncate"), B("open"));
    bothModes("cp over", S("cp free.txt held.txt"), B("truncate"), B("truncate"));
    bothModes("ln -s", S("ln -s free.txt link"), B("symlink"), B("symlink"));
    bothModes("ln -sf over", S("ln -sf free.txt held.txt"), B(), B());
    bothModes("ln hard", S("ln held.txt hard.txt"), B("link"), B("link"));
    bothModes("mkdir in refused folder", S("mkdir lockeddir/sub"), B("mkdir"), B("mkdir"));
    bothModes("rm -rf folder with held", S("rm -rf tree"), B("unlink"), B("unlink"));
}

void TstGateFs::refusedShellChangesLeaveTheBackingAlone()
{
    QFETCH(QString, command);
    QFETCH(QByteArray, op);
    QFETCH(QByteArray, handlesOp);
    QFETCH(bool, handles);
    QString why;
    if (handles) {
        QVERIFY2(restartGate(handleMode(), &why), qPrintable(why));
        op = handlesOp;
    }
    const QByteArray before = protectedState();
    const auto [code, output] = sh(command, m_mount);
    QVERIFY2(code != 0, output.constData());
    QVERIFY2(output.contains("Permission denied"), output.constData());
    QCOMPARE(protectedState(), before);
    bool refused = false;
    for (const Event &e : events())
        refused =
            refused || (e.kind == "admit" && e.value == EACCES && (op.isEmpty() || e.op == op));
    QVERIFY2(refused, "the policy was not asked, or did not refuse");
}

void TstGateFs::allowedShellChangesReachTheBacking_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("check"); // run in the backing folder, must succeed
    QTest::addColumn<bool>("handles");
    using S = QString;
    bothModes("sed -i", S("sed -i s/free/sedded/ free.txt"), S("grep -qx sedded free.txt"));
    bothModes("echo >", S("echo new > free.txt"), S("printf 'new\\n' | cmp - free.txt"));
    bothModes("echo >>", S("echo more >> free.txt"),
              S("test \"$(cat free.txt)\" = \"$(printf 'free\\nmore')\""));
    bothModes("python open w", S("python3 -c \"open('free.txt','w').write('py')\""),
              S("test \"$(cat free.txt)\" = py"));
    bothModes("mv tmp over", S("echo t > tmp.txt && mv tmp.txt free.txt"),
              S("grep -qx t free.txt && ! test -e tmp.txt"));
    bothModes("mv away", S("mv free.txt moved.txt"), S("test -f moved.txt && ! test -e free.txt"));
    bothModes("rm", S("rm free.txt"), S("! test -e free.txt"));
    bothModes("touch new", S("touch fresh.txt"), S("test -f fresh.txt"));
    bothModes("chmod", S("chmod 640 free.txt"), S("test \"$(stat -c %a free.txt)\" = 640"));
    bothModes("truncate", S("truncate -s 2 free.txt"), S("test \"$(stat -c %s free.txt)\" = 2"));
    bothModes("ln -s", S("ln -s free.txt alias"), S("test \"$(readlink alias)\" = free.txt"));
    bothModes("ln hard", S("ln free.txt hard2.txt"), S("test \"$(stat -c %h free.txt)\" = 2"));
    bothModes("mkdir -p", S("mkdir -p d1/d2/d3"), S("test -d d1/d2/d3"));
    bothModes("mv folder", S("mkdir d && echo z > d/f && mv d e"),
              S("grep -qx z e/f && ! test -e d"));
    bothModes("rm -rf folder", S("rm -rf tree/inner/other.txt x1.txt"), S("! test -e x1.txt"));
    bothModes("mkfifo", S("mkfifo pipe"), S("test -p pipe"));
}

void TstGateFs::allowedShellChangesReachTheBacking()
{
    QFETCH(QString, command);
    QFETCH(QString, check);
    QFETCH(bool, handles);
    QString reason;
    if (handles)
        QVERIFY2(restartGate(handleMode(), &reason), qPrintable(reason));
    const auto [code, output] = sh(command, m_mount);
    QVERIFY2(code == 0, output.constData());
    const auto [checked, why] = sh(check, m_backing);
    QVERIFY2(checked == 0, qPrintable(check + ": " + QString::fromUtf8(why)));
    // And the gate itself shows it.
    const auto [seen, through] = sh(check, m_mount);
    QVERIFY2(seen == 0,
             qPrintable("through the gate: " + check + ": " + QString::fromUtf8(through)));
}

void TstGateFs::exchangeAndNoReplaceAreHonoured()
{
    const QByteArray held = QFile::encodeName(mnt("held.txt"));
    const QByteArray freeFile = QFile::encodeName(mnt("free.txt"));
    const QByteArray x1 = QFile::encodeName(mnt("x1.txt"));
    const QByteArray x2 = QFile::encodeName(mnt("x2.txt"));
    errno = 0;
    QCOMPARE(
        ::renameat2(AT_FDCWD, held.constData(), AT_FDCWD, freeFile.constData(), RENAME_EXCHANGE),
        -1);
    QCOMPARE(errno, EACCES);
    QCOMPARE(readAll(back("held.txt")), QByteArray("original\n"));
    QCOMPARE(readAll(back("free.txt")), QByteArray("free\n"));
    bool sawExchange = false;
    for (const Event &e : events())
        sawExchange = sawExchange || (e.kind == "admit" && e.op == "exchange" && e.value == EACCES);
    QVERIFY(sawExchange);

    QCOMPARE(::renameat2(AT_FDCWD, x1.constData(), AT_FDCWD, x2.constData(), RENAME_EXCHANGE), 0);
    QCOMPARE(readAll(back("x1.txt")), QByteArray("two\n"));
    QCOMPARE(readAll(back("x2.txt")), QByteArray("one\n"));
    QCOMPARE(readAll(mnt("x1.txt")), QByteArray("two\n"));

    errno = 0;
    QCOMPARE(
        ::renameat2(AT_FDCWD, freeFile.constData(), AT_FDCWD, x1.constData(), RENAME_NOREPLACE),
        -1);
    QCOMPARE(errno, EEXIST);
    QCOMPARE(readAll(back("x1.txt")), QByteArray("two\n"));
    QVERIFY(QFileInfo::exists(back("free.txt")));
}

void TstGateFs::folderRenameIsAskedAsADirectory()
{
    const auto [code, output] = sh(QStringLiteral("mv tree tree2"), m_mount);
    QVERIFY(code != 0);
    QVERIFY2(output.contains("Permission denied"), output.constData());
    QVERIFY(QFileInfo::exists(back("tree/inner/held.txt")));
    QVERIFY(!QFileInfo::exists(back("tree2")));
    bool asked = false;
    for (const Event &e : events())
        asked = asked || (e.kind == "admit" && e.op == "rename" && e.path == "tree" &&
                          e.target == "tree2" && e.directory && e.value == EACCES);
    QVERIFY(asked);
}

void TstGateFs::pathsFollowFolderRenames()
{
    QVERIFY(QDir().mkpath(mnt("a/b")));
    const int fd =
        ::open(QFile::encodeName(mnt("a/b/f.txt")).constData(), O_WRONLY | O_CREAT, 0644);
    QVERIFY(fd >= 0);
    QVERIFY(::write(fd, "1", 1) == 1);
    QCOMPARE(
        ::rename(QFile::encodeName(mnt("a")).constData(), QFile::encodeName(mnt("z")).constData()),
        0);
    QVERIFY(::write(fd, "2", 1) == 1);
    ::close(fd);
    QVERIFY(write(mnt("z/b/g.txt"), "g"));
    QCOMPARE(readAll(back("z/b/f.txt")), QByteArray("12"));

    QList<QByteArray> writes, creates;
    for (const Event &e : events()) {
        if (e.kind == "admit" && e.op == "write")
            writes << e.path;
        if (e.kind == "admit" && e.op == "create")
            creates << e.path;
    }
    QCOMPARE(writes.value(0), QByteArray("a/b/f.txt"));
    QCOMPARE(writes.value(1), QByteArray("z/b/f.txt"));
    QVERIFY2(creates.contains("a/b/f.txt") && creates.contains("z/b/g.txt"), creates.join(' '));
}

void TstGateFs::oddNamesHardLinksAndDeletedFiles()
{
    // Bytes a name may hold: newline, tab, '%', a byte that is not UTF-8.
    const QByteArray odd = QByteArray("odd\n\t%\xff name");
    const QByteArray oddPath = QFile::encodeName(m_mount) + '/' + odd;
    int fd = ::open(oddPath.constData(), O_WRONLY | O_CREAT, 0644);
    QVERIFY(fd >= 0);
    ::close(fd);
    bool named = false;
    for (const Event &e : events())
        named = named || (e.kind == "admit" && e.op == "create" && e.path == odd);
    QVERIFY(named);
    QCOMPARE(::unlink(oddPath.constData()), 0); // QTemporaryDir cannot remove what is not UTF-8

    // A hard link whose first name goes: the file is named by the link that remains.
    QVERIFY(write(mnt("first.txt"), "h"));
    QCOMPARE(::link(QFile::encodeName(mnt("first.txt")).constData(),
                    QFile::encodeName(mnt("second.txt")).constData()),
             0);
    QCOMPARE(::unlink(QFile::encodeName(mnt("first.txt")).constData()), 0);
    fd = ::open(QFile::encodeName(mnt("second.txt")).constData(), O_WRONLY | O_APPEND);
    QVERIFY(fd >= 0);
    QVERIFY(::write(fd, "i", 1) == 1);
    ::close(fd);
    QCOMPARE(readAll(back("second.txt")), QByteArray("hi"));
    QByteArray lastOpen; // zero-open asks the write
    for (const Event &e : events())
        if (e.kind == "admit" && e.op == "write")
            lastOpen = e.path;
    QCOMPARE(lastOpen, QByteArray("second.txt"));

    // Deleted while open: still readable and writable through the handle.
    fd = ::open(QFile::encodeName(mnt("doomed.txt")).constData(), O_RDWR | O_CREAT, 0644);
    QVERIFY(fd >= 0);
    QCOMPARE(::unlink(QFile::encodeName(mnt("doomed.txt")).constData()), 0);
    QVERIFY(::pwrite(fd, "alive", 5, 0) == 5);
    char buf[8] = {};
    QVERIFY(::pread(fd, buf, 5, 0) == 5);
    QCOMPARE(QByteArray(buf), QByteArray("alive"));
    struct stat st = {};
    QCOMPARE(::fstat(fd, &st), 0);
    QCOMPARE(st.st_nlink, nlink_t(0));
    ::close(fd);
    QVERIFY(!QFileInfo::exists(back("doomed.txt")));
}

void TstGateFs::closedFiresWhenAWriteHandleIsReleased()
{
    QString why;
    QVERIFY2(restartGate(handleMode(), &why), qPrintable(why)); // zero-open has no handles
    QVERIFY(readAll(mnt("free.txt")) == "free\n"); // read-only: neither asked nor closed
    const int fd = ::open(QFile::encodeName(mnt("free.txt")).constData(), O_WRONLY | O_APPEND);
    QVERIFY(fd >= 0);
    quint64 handle = 0;
    for (const Event &e : events())
        if (e.kind == "admit" && e.op == "open" && e.path == "free.txt")
            handle = e.handle;
    QVERIFY(handle != 0);
    auto closedSeen = [&] {
        for (const Event &e : events())
            if (e.kind == "closed" && e.handle == handle)
                return true;
        return false;
    };
    QVERIFY(!closedSeen());
    ::close(fd);
    QTRY_VERIFY_WITH_TIMEOUT(closedSeen(), kDeadlineMs);
    int closedCount = 0;
    for (const Event &e : events())
        closedCount += e.kind == "closed";
    QCOMPARE(closedCount, 1);
}

void TstGateFs::twoGatesSeeEachOthersChangesAtOnce()
{
    const QString other = m_dir->filePath("mnt2");
    Gate second;
    QString why;
    QVERIFY2(startGate(second, other, &why), qPrintable(why));
    auto at = [&](const QString &mount, const QString &rel) {
        return QFile::encodeName(mount + '/' + rel);
    };
    auto put = [&](const QString &mount, const QString &rel, const QByteArray &bytes) {
        const int fd = ::open(at(mount, rel).constData(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const bool ok =
            fd >= 0 && ::write(fd, bytes.constData(), size_t(bytes.size())) == bytes.size();
        if (fd >= 0)
            ::close(fd);
        return ok;
    };
    // A reader that keeps the file open through the second gate all along.
    QVERIFY(put(m_mount, "shared.txt", "start"));
    const int held = ::open(at(other, "shared.txt").constData(), O_RDONLY);
    QVERIFY(held >= 0);
    for (int i = 0; i < 300; ++i) {
        const QString writer = i % 4 == 3 ? other : m_mount;
        const QString reader = writer == m_mount ? other : m_mount;
        // Same length every time: only the contents (and mtime) tell the versions apart.
        const QByteArray bytes = QByteArray::number(i).rightJustified(8, '0');
        QVERIFY(put(writer, "shared.txt", bytes));
        struct stat st = {};
        QCOMPARE(::stat(at(reader, "shared.txt").constData(), &st), 0);
        QCOMPARE(qint64(st.st_size), qint64(bytes.size()));
        QCOMPARE(readAll(reader + "/shared.txt"), bytes);
        if (reader == other) {
            char buf[16] = {};
            QCOMPARE(::pread(held, buf, sizeof buf, 0), ssize_t(bytes.size()));
            QCOMPARE(QByteArray(buf), bytes);
        }
        if (i % 10 == 0) {
            // Names: a negative entry cached by the reader must not hide a new file...
            const QString name = QStringLiteral("new%1.txt").arg(i);
            QVERIFY(::access(at(reader, name).constData(), F_OK) != 0);
            const QStringList listed = QDir(reader).entryList(QDir::Files); // cached listing
            QVERIFY(!listed.contains(name));
            QVERIFY(put(writer, name, "n"));
            QVERIFY2(QDir(reader).entryList(QDir::Files).contains(name), qPrintable(name));
            QCOMPARE(::access(at(reader, name).constData(), F_OK), 0);
            // ...nor a positive one keep a renamed or removed one.
            const QString renamed = QStringLiteral("renamed%1.txt").arg(i);
            QCOMPARE(::rename(at(writer, name).constData(), at(writer, renamed).constData()), 0);
            QVERIFY(::access(at(reader, name).constData(), F_OK) != 0);
            QCOMPARE(readAll(reader + '/' + renamed), QByteArray("n"));
            QCOMPARE(::unlink(at(writer, renamed).constData()), 0);
            QVERIFY(::access(at(reader, renamed).constData(), F_OK) != 0);
        }
    }
    ::close(held);
    QVERIFY(second.stop());
}

void TstGateFs::hugeDirectoriesListCompletely()
{
    // Far more inodes than the gate may keep descriptors for: the cold ones are parked and
    // reopened by name, and nothing fails with EMFILE.
    const int budget = 300;
    QVERIFY(m_gate->stop());
    QString why;
    QVERIFY2(startGate(*m_gate, m_mount, &why, {"--fd-budget", QString::number(budget)}),
             qPrintable(why));
    // A file deleted while open has no name to be reopened by once parked: it is never parked.
    const int doomed =
        ::open(QFile::encodeName(mnt("doomed.txt")).constData(), O_RDWR | O_CREAT, 0644);
    QVERIFY(doomed >= 0 && ::write(doomed, "kept", 4) == 4);
    QCOMPARE(::unlink(QFile::encodeName(mnt("doomed.txt")).constData()), 0);
    const int count = 5000;
    for (int i = 0; i < count; ++i)
        QVERIFY(write(back(QStringLiteral("big/file-%1-with-a-longish-name.txt").arg(i)), "x"));
    const auto [code, output] = sh(QStringLiteral("ls -f big | grep -c with-a-longish"), m_mount);
    QCOMPARE(code, 0);
    QCOMPARE(output.trimmed().toInt(), count);
    const auto [found, listing] = sh(QStringLiteral("find big -type f -size -2c | wc -l"), m_mount);
    QCOMPARE(found, 0);
    QCOMPARE(listing.trimmed().toInt(), count);
    QVERIFY2(m_gate->openFds() < budget + 40, qPrintable(QString::number(m_gate->openFds())));
    char kept[8] = {};
    QCOMPARE(::pread(doomed, kept, sizeof kept, 0), ssize_t(4));
    QCOMPARE(::pwrite(doomed, "!", 1, 4), ssize_t(1));
    ::close(doomed);
    // Parked long ago, used again: written, read, renamed, through their names.
    const auto [again, out] =
        sh(QStringLiteral(
               "for i in 0 1 2 3 4; do echo y >> big/file-$i-with-a-longish-name.txt; done && "
               "cat big/file-0-with-a-longish-name.txt && mv big/file-1-with-a-longish-name.txt "
               "big/moved && "
               "chmod 600 big/file-2-with-a-longish-name.txt && stat -c %a "
               "big/file-2-with-a-longish-name.txt"),
           m_mount);
    QVERIFY2(again == 0, out.constData());
    QCOMPARE(out, QByteArray("xy\n600\n"));
    QCOMPARE(readAll(back("big/moved")), QByteArray("xy\n"));
    bool named = false;
    for (const Event &e : events())
        named = named || (e.kind == "admit" && e.op == "setattr" &&
                          e.path == "big/file-2-with-a-longish-name.txt");
    QVERIFY(named);
    // Everything went through the gate, and an rm -rf of it all too.
    const auto [removed, because] = sh(QStringLiteral("rm -rf big"), m_mount);
    QVERIFY2(removed == 0, because.constData());
    QVERIFY(!QFileInfo::exists(back("big")));
}

void TstGateFs::descriptorsDoNotLeak()
{
    const int before = m_gate->openFds();
    const QString script = QStringLiteral(
        "mkdir -p leak && for i in $(seq 200); do echo $i > leak/f$i; cat leak/f$i > /dev/null; "
        "mv leak/f$i leak/g$i; done && ls -l leak > /dev/null && rm -rf leak");
    for (int round = 0; round < 2; ++round) {
        const auto [code, output] = sh(script, m_mount);
        QVERIFY2(code == 0, output.constData());
    }
    // Deleted files are forgotten by the kernel as soon as nothing uses them.
    QTRY_VERIFY_WITH_TIMEOUT(m_gate->openFds() <= before + 4, kDeadlineMs);
}

void TstGateFs::stopUnmounts()
{
    QVERIFY(isMounted(m_mount));
    // A process sitting in the mount must not keep the gate from stopping.
    QProcess sitter;
    sitter.setWorkingDirectory(m_mount);
    sitter.start(QStringLiteral("sleep"), {QStringLiteral("30")});
    QVERIFY(sitter.waitForStarted());
    QVERIFY(m_gate->stop());
    QVERIFY(!isMounted(m_mount));
    sitter.kill();
    sitter.waitForFinished();
    QCOMPARE(readAll(back("held.txt")), QByteArray("original\n"));
}

void TstGateFs::aKilledGateLeavesNoMount()
{
    QVERIFY(isMounted(m_mount));
    m_gate->kill9();
    QTRY_VERIFY_WITH_TIMEOUT(!isMounted(m_mount), kDeadlineMs);
}

QTEST_GUILESS_MAIN(TstGateFs)
#include "tst_gatefs.moc"

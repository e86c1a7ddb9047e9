// `leasehold run` end to end, as root with /dev/fuse (skipped, saying why, elsewhere): the real
// binary runs shell commands as agent A over a git repository whose src/a.txt agent B holds,
// against a service on 127.0.0.1 port 0. Every way a program changes a file is refused with
// the bytes unchanged and the refusal in the ledger; A's own changes take implicit leases that
// end with its run; killing the gate or the command leaves no mount and no lease; a service
// that goes away makes changes fail while reads go on.

#include "servicetest.h"

#include <QDirIterator>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>

#include <csignal>
#include <unistd.h>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

bool writeFile(const QString &path, const QByteArray &text)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

// Whether any mount of this namespace is a FUSE mount at `path`.
bool mountedAt(const QString &path)
{
    const QByteArray info = readFile(QStringLiteral("/proc/self/mountinfo"));
    for (const QByteArray &line : info.split('\n'))
        if (line.contains(" " + path.toUtf8() + " ") && line.contains("fuse"))
            return true;
    return false;
}

// The pid of the gate serving `root`, found by its command line.
qint64 gatePid(const QString &root)
{
    QDirIterator it(QStringLiteral("/proc"), QDir::Dirs | QDir::NoDotAndDotDot);
    while (it.hasNext()) {
        const QString dir = it.next();
        const QByteArray cmd = readFile(dir + QStringLiteral("/cmdline"));
        if (cmd.contains("guard") && cmd.contains(QByteArray("--mount") + '\0' + root.toUtf8()))
            return QFileInfo(dir).fileName().toLongLong();
    }
    return 0;
}

} // namespace

class TstRun : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void everyWayToChangeAHeldFileIsRefused_data();
    void everyWayToChangeAHeldFileIsRefused();
    void ownChangesTakeImplicitLeasesThatEndWithTheRun();
    void realFolderIsReachedOnlyThroughTheGate();
    void killingTheGateOrTheCommandLeavesNothing_data();
    void killingTheGateOrTheCommandLeavesNothing();
    void aServiceGoneRefusesChangesReadsGoOn();

private:
    // Starts `script` under `leasehold run` as did:agent:a; the event loop keeps serving.
    QProcess *start(const QString &script, const QStringList &flags = {})
    {
        auto *p = new QProcess(this);
        p->setWorkingDirectory(m_root);
        p->setProcessChannelMode(QProcess::SeparateChannels);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("MARK"), m_marksDir->path());
        p->setProcessEnvironment(env);
        QStringList args = {QStringLiteral("run"), QStringLiteral("--url"),
                            QStringLiteral("http://127.0.0.1:%1").arg(s->port),
                            QStringLiteral("--agent"), QStringLiteral("did:agent:a")};
        args << flags << QStringLiteral("--") << QStringLiteral("sh") << QStringLiteral("-c")
             << script;
        p->start(QStringLiteral(LEASEHOLD_BINARY), args);
        return p;
    }
    // Waits, serving, for `p` to end; its exit code.
    int finish(QProcess *p, int ms = 30'000)
    {
        if (p->state() != QProcess::NotRunning) {
            QEventLoop loop;
            connect(p, &QProcess::finished, &loop, &QEventLoop::quit);
            QTimer::singleShot(ms, &loop, &QEventLoop::quit);
            loop.exec();
        }
        m_err = p->readAllStandardError();
        m_out = p->readAllStandardOutput();
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished();
            return -1;
        }
        return p->exitStatus() == QProcess::NormalExit ? p->exitCode() : 128;
    }
    // Waits, serving, for the script to leave mark `name` in $MARK.
    bool marked(const QString &name, int ms = 15'000)
    {
        QElapsedTimer t;
        t.start();
        while (!QFile::exists(m_marksDir->filePath(name)) && t.elapsed() < ms)
            QTest::qWait(5);
        return QFile::exists(m_marksDir->filePath(name));
    }
    bool git(const QStringList &args)
    {
        QProcess p;
        p.setWorkingDirectory(m_root);
        p.start(QStringLiteral("git"), args);
        return p.waitForFinished(10'000) && p.exitCode() == 0;
    }
    std::vector<LeaseInfo> leasesOf(const std::string &agent)
    {
        std::vector<LeaseInfo> out;
        for (const LeaseInfo &l : s->host->engine().snapshot().leases)
            if (l.holder == agent)
                out.push_back(l);
        return out;
    }
    std::string acquire(const std::string &agent, const std::string &resource)
    {
        auto name = std::get<ResourceName>(s->host->parser().parse(resource));
        const AcquireResult r = s->host->run([&](LeaseEngine &e) {
            return e.acquire({agent, {name}, Mode::Write, 600'000, 0});
        });
        if (const auto *g = std::get_if<Grant>(&r))
            return g->leases.front().leaseId;
        return std::get<Refusal>(r).holder;
    }

    std::unique_ptr<ServiceFixture> s;
    QTemporaryDir m_dir;
    std::unique_ptr<QTemporaryDir> m_marksDir; // a fresh one for every test
    QString m_root;
    QByteArray m_out, m_err;
};

void TstRun::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("leasehold run needs root here (a user namespace is the other way, not tested)");
    if (!QFileInfo::exists(QStringLiteral("/dev/fuse")))
        QSKIP("no /dev/fuse on this machine");
}

void TstRun::init()
{
    s = std::make_unique<ServiceFixture>(true);
    QVERIFY(s->port != 0);
    m_marksDir = std::make_unique<QTemporaryDir>();
    m_root = QDir(m_dir.path()).canonicalPath() + QStringLiteral("/repo-") +
             QString::number(QRandomGenerator::global()->generate());
    QVERIFY(writeFile(m_root + QStringLiteral("/src/a.txt"), "hello\n"));
    QVERIFY(writeFile(m_root + QStringLiteral("/src/b.txt"), "b\n"));
    QVERIFY(git({"init", "-q"}));
    QVERIFY(git({"add", "."}));
    QVERIFY(git({"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one"}));
    QVERIFY(!acquire("did:agent:b", "src/a.txt").empty());
}

void TstRun::cleanup()
{
    if (s)
        s->host->engine().checkInvariants();
    QVERIFY2(!mountedAt(m_root), "no gate is left mounted");
    s.reset();
}

void TstRun::everyWayToChangeAHeldFileIsRefused_data()
{
    QTest::addColumn<QString>("command");
    QTest::newRow("sed -i") << "sed -i s/hello/bye/ src/a.txt";
    QTest::newRow("echo >") << "echo x > src/a.txt";
    QTest::newRow(">>") << "echo x >> src/a.txt";
    QTest::newRow("python open w") << "python3 -c \"open('src/a.txt', 'w')\"";
    QTest::newRow("mv onto it") << "echo x > /tmp/lh-run-$$ && mv /tmp/lh-run-$$ src/a.txt";
    QTest::newRow("mv it away") << "mv src/a.txt src/c.txt";
    QTest::newRow("rm") << "rm -f src/a.txt";
    QTest::newRow("touch") << "touch src/a.txt";
    QTest::newRow("chmod") << "chmod 600 src/a.txt";
    QTest::newRow("truncate") << "truncate -s 0 src/a.txt";
    QTest::newRow("ln -s over it") << "ln -sf b.txt src/a.txt";
    QTest::newRow("hard link to it") << "ln src/a.txt src/hard";
    QTest::newRow("git checkout") << "git checkout -- src/a.txt";
    QTest::newRow("tee") << "echo x | tee src/a.txt";
}

void TstRun::everyWayToChangeAHeldFileIsRefused()
{
    QFETCH(QString, command);
    // git checkout has something to undo: the working copy differs from what is committed.
    QVERIFY(writeFile(m_root + QStringLiteral("/src/a.txt"), "B's work in progress\n"));
    const QByteArray before = readFile(m_root + QStringLiteral("/src/a.txt"));
    const std::uint64_t seq = s->host->engine().lastSeq();
    QProcess *p = start(command);
    QVERIFY2(finish(p) != 0, m_out + m_err);
    QVERIFY2(m_err.contains("ermission denied") || m_err.contains("EACCES") ||
                 m_err.contains("rror"),
             m_err.constData());
    QCOMPARE(readFile(m_root + QStringLiteral("/src/a.txt")), before);
    QVERIFY(!QFile::exists(m_root + QStringLiteral("/src/hard")));
    // The refusal reached the ledger, with the gate and the process that tried.
    auto refused = [&] {
        for (const LedgerEvent &e : s->host->ledger(seq, 1000))
            if (e.kind == EventKind::Refused && e.resource == "fs:src/a.txt" &&
                e.facts.via == "fs" && e.facts.pid > 0 && !e.facts.command.empty() &&
                e.facts.holder == "did:agent:b" && e.actorDid == "did:agent:a")
                return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(refused(), 10'000);
    QVERIFY(leasesOf("did:agent:a").empty()); // the run's leases went with it
}

void TstRun::ownChangesTakeImplicitLeasesThatEndWithTheRun()
{
    QProcess *p = start(QStringLiteral("echo mine > src/b.txt && sed -i s/mine/ours/ src/b.txt && "
                                       "touch \"$MARK/written\" && "
                                       "while [ ! -e \"$MARK/done\" ]; do sleep 0.05; done"));
    QVERIFY2(marked(QStringLiteral("written")), m_err.constData());
    // The first change took a lease; the sed's temporary file took none that outlived it.
    QTRY_VERIFY_WITH_TIMEOUT(leasesOf("did:agent:a").size() == 1, 10'000);
    QCOMPARE(leasesOf("did:agent:a").front().resource, std::string("fs:src/b.txt"));
    QCOMPARE(acquire("did:agent:b", "src/b.txt"), std::string("did:agent:a"));
    QVERIFY(writeFile(m_marksDir->filePath(QStringLiteral("done")), ""));
    QCOMPARE(finish(p), 0);
    QCOMPARE(readFile(m_root + QStringLiteral("/src/b.txt")), QByteArray("ours\n"));
    QVERIFY(leasesOf("did:agent:a").empty());
    QVERIFY(!acquire("did:agent:b", "src/b.txt").empty());
}

void TstRun::realFolderIsReachedOnlyThroughTheGate()
{
    // By its absolute path, from outside the root, through .. : the same gated view; and the
    // root is a FUSE mount inside the run, and not outside it.
    const QString script =
        QStringLiteral("grep -q \" %1 .*fuse\" /proc/self/mountinfo && touch \"$MARK/mounted\"; "
                       "cd / && echo x > %1/src/a.txt; echo $? > \"$MARK/absolute\"; "
                       "cd %1/src && echo x > ../src/./a.txt; echo $? > \"$MARK/dotdot\"; "
                       "cat %1/src/a.txt > \"$MARK/read\"")
            .arg(m_root);
    QProcess *p = start(script);
    QCOMPARE(finish(p), 0);
    QVERIFY(QFile::exists(m_marksDir->filePath(QStringLiteral("mounted"))));
    QVERIFY(!mountedAt(m_root));
    QCOMPARE(readFile(m_marksDir->filePath(QStringLiteral("absolute"))).trimmed(), QByteArray("2"));
    QCOMPARE(readFile(m_marksDir->filePath(QStringLiteral("dotdot"))).trimmed(), QByteArray("2"));
    QCOMPARE(readFile(m_marksDir->filePath(QStringLiteral("read"))), QByteArray("hello\n"));
    QCOMPARE(readFile(m_root + QStringLiteral("/src/a.txt")), QByteArray("hello\n"));
}

void TstRun::killingTheGateOrTheCommandLeavesNothing_data()
{
    QTest::addColumn<bool>("killGate");
    QTest::newRow("the command") << false;
    QTest::newRow("the gate") << true;
}

void TstRun::killingTheGateOrTheCommandLeavesNothing()
{
    QFETCH(bool, killGate);
    QProcess *p = start(QStringLiteral("echo mine > src/b.txt && echo $$ > \"$MARK/pid\" && "
                                       "while [ ! -e \"$MARK/killed\" ]; do sleep 0.05; done; "
                                       "echo again > src/b.txt; echo $? > \"$MARK/after\""));
    QVERIFY2(marked(QStringLiteral("pid")), m_err.constData());
    QTRY_VERIFY2_WITH_TIMEOUT(
        leasesOf("did:agent:a").size() == 1,
        qPrintable(QStringLiteral("%1 leases").arg(leasesOf("did:agent:a").size())), 10'000);
    const qint64 victim = killGate
                              ? gatePid(m_root)
                              : readFile(m_marksDir->filePath(QStringLiteral("pid"))).toLongLong();
    QVERIFY(victim > 0);
    QCOMPARE(::kill(pid_t(victim), SIGKILL), 0);
    QVERIFY(writeFile(m_marksDir->filePath(QStringLiteral("killed")), ""));
    const int code = finish(p);
    if (killGate) {
        // The command went on, and its change failed: no unguarded write.
        QCOMPARE(code, 0);
        QVERIFY(readFile(m_marksDir->filePath(QStringLiteral("after"))).trimmed() != "0");
        QVERIFY2(m_err.contains("the gate stopped"), m_err.constData());
        QCOMPARE(readFile(m_root + QStringLiteral("/src/b.txt")), QByteArray("mine\n"));
    } else {
        QCOMPARE(code, 128 + SIGKILL);
    }
    QVERIFY(leasesOf("did:agent:a").empty());
    QVERIFY(!mountedAt(m_root));
    QCOMPARE(gatePid(m_root), 0);
}

void TstRun::aServiceGoneRefusesChangesReadsGoOn()
{
    QProcess *p = start(
        QStringLiteral("touch \"$MARK/started\"; while [ ! -e \"$MARK/gone\" ]; do sleep 0.05; "
                       "done; "
                       // until the gate gives up on the service (--stale-after 1): a bound
                       "for i in $(seq 100); do echo x > src/new.txt 2>/dev/null || break; "
                       "rm -f src/new.txt 2>/dev/null; sleep 0.1; done; "
                       "echo x > src/new.txt; echo $? > \"$MARK/write\"; "
                       "cat src/a.txt > \"$MARK/read\""),
        {QStringLiteral("--stale-after"), QStringLiteral("1")});
    QVERIFY2(marked(QStringLiteral("started")), m_err.constData());
    s->front.reset(); // every connection closes: the watch stream with them
    QVERIFY(writeFile(m_marksDir->filePath(QStringLiteral("gone")), ""));
    QCOMPARE(finish(p), 0);
    QCOMPARE(readFile(m_marksDir->filePath(QStringLiteral("write"))).trimmed(), QByteArray("2"));
    QCOMPARE(readFile(m_marksDir->filePath(QStringLiteral("read"))), QByteArray("hello\n"));
}

QTEST_GUILESS_MAIN(TstRun)
#include "tst_run.moc"

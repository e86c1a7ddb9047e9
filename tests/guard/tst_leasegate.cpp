// The filesystem gate's policy without a mount: LeaseView judges a change as the engine judges a
// write (the name, a folder above it, a pattern; below it only for a folder that moves or goes),
// LeaseGate refuses with EACCES and logs why, asks for implicit leases after a change, moves
// them with renames, takes none inside .git, and fails closed once its view goes stale.

#include "leasegate.h"

#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <thread>

using namespace leasehold;
using namespace leasehold::fsgate;

namespace {

LeaseView::Lease lease(const std::string &id, const std::string &name, const std::string &holder,
                       const std::string &mode = "write")
{
    return {id, std::get<ResourceName>(ResourceParser().parse(name)), holder, mode, 1, 1000, 9000};
}

struct RecordingService : GateService
{
    void changed(const std::string &name, std::uint64_t handle, bool covered) override
    {
        calls.push_back("changed " + name + (handle ? " h" + std::to_string(handle) : "") +
                        (covered ? " covered" : ""));
    }
    void removed(const std::string &name) override { calls.push_back("removed " + name); }
    void closed(std::uint64_t handle) override
    {
        calls.push_back("closed " + std::to_string(handle));
    }
    void refused(const Refusal &r) override { calls.push_back("refused " + r.resource); }
    std::vector<std::string> calls;
};

Change change(ChangeOp op, const std::string &path, const std::string &target = {},
              bool directory = false)
{
    Change c;
    c.op = op;
    c.path = path;
    c.target = target;
    c.directory = directory;
    c.pid = 42;
    c.command = "sed";
    return c;
}

} // namespace

class TstLeaseGate : public QObject
{
    Q_OBJECT

private slots:
    void judgesAsTheEngineJudgesAWrite_data();
    void judgesAsTheEngineJudgesAWrite();
    void ownLeasesLetItThrough();
    void refusalsAreLoggedAndSentOn();
    void implicitLeasesFollowTheChanges();
    void nothingImplicitInsideGitOrForFolders();
    void staleViewRefusesEveryChange();
    void viewFollowsGrantsAndEnds();
};

void TstLeaseGate::judgesAsTheEngineJudgesAWrite_data()
{
    QTest::addColumn<QString>("held");
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("subtree");
    QTest::addColumn<bool>("blocked");
    QTest::newRow("the file") << "fs:src/a.ts"
                              << "write"
                              << "src/a.ts" << false << true;
    QTest::newRow("a read lease blocks a write") << "fs:src/a.ts"
                                                 << "read"
                                                 << "src/a.ts" << false << true;
    QTest::newRow("a folder above") << "fs:src"
                                    << "write"
                                    << "src/a.ts" << false << true;
    QTest::newRow("the root") << "fs:."
                              << "write"
                              << "src/a.ts" << false << true;
    QTest::newRow("a sibling") << "fs:src/b.ts"
                               << "write"
                               << "src/a.ts" << false << false;
    QTest::newRow("a file below a folder that goes") << "fs:src/x/y.ts"
                                                     << "write"
                                                     << "src" << true << true;
    QTest::newRow("a name that only starts the same") << "fs:src2/y.ts"
                                                      << "write"
                                                      << "src" << true << false;
    QTest::newRow("a pattern matching it") << "fs:src/**/*.ts"
                                           << "write"
                                           << "src/a/b.ts" << false << true;
    QTest::newRow("a pattern and a file it does not match") << "fs:src/**/*.ts"
                                                            << "write"
                                                            << "src/a/b.js" << false << false;
    QTest::newRow("a pattern below a folder that goes") << "fs:src/**/*.ts"
                                                        << "write"
                                                        << "src/a" << true << true;
    QTest::newRow("another scheme") << "lock:src/a.ts"
                                    << "write"
                                    << "src/a.ts" << false << false;
}

void TstLeaseGate::judgesAsTheEngineJudgesAWrite()
{
    QFETCH(QString, held);
    QFETCH(QString, mode);
    QFETCH(QString, path);
    QFETCH(bool, subtree);
    QFETCH(bool, blocked);
    LeaseView view("did:agent:a");
    view.granted(lease("ls_1", held.toStdString(), "did:agent:b", mode.toStdString()));
    const LeaseView::Verdict v = view.judge(LeaseGate::nameOf(path.toStdString()), subtree);
    QCOMPARE(bool(v.blocker), blocked);
    if (blocked)
        QCOMPARE(v.blocker->holder, std::string("did:agent:b"));
}

void TstLeaseGate::ownLeasesLetItThrough()
{
    LeaseView view("did:agent:a");
    view.granted(lease("ls_1", "fs:src", "did:agent:a"));
    view.granted(lease("ls_2", "fs:docs/a.md", "did:agent:a", "read"));
    const auto mine = view.judge(LeaseGate::nameOf("src/a.ts"), false);
    QVERIFY(!mine.blocker);
    QVERIFY(mine.ownCover);
    const auto read = view.judge(LeaseGate::nameOf("docs/a.md"), false);
    QVERIFY(!read.blocker);
    QVERIFY(!read.ownCover); // a read lease of its own does not cover a write
    QVERIFY(!view.judge(LeaseGate::nameOf("other.txt"), false).ownCover);
}

void TstLeaseGate::refusalsAreLoggedAndSentOn()
{
    QTemporaryDir dir;
    LeaseView view("did:agent:a");
    view.granted(lease("ls_1", "fs:src/a.ts", "did:agent:b"));
    RecordingService service;
    const std::string logPath = dir.filePath(QStringLiteral("refusals.jsonl")).toStdString();
    RefusalLog log(logPath);
    LeaseGate gate(view, service, log, {});
    QCOMPARE(gate.admit(change(ChangeOp::Rename, "src/tmp", "src/a.ts")), EACCES);
    QCOMPARE(gate.admit(change(ChangeOp::Rename, "src/a.ts", "src/b.ts")), EACCES);
    QCOMPARE(gate.admit(change(ChangeOp::Rmdir, "src", {}, true)), EACCES);
    QCOMPARE(gate.admit(change(ChangeOp::Link, "src/a.ts", "src/hard")), EACCES);
    QCOMPARE(gate.admit(change(ChangeOp::Create, "src/c.ts")), 0);
    // The same refusal again at once (a program retrying in a loop): refused, logged once.
    QCOMPARE(gate.admit(change(ChangeOp::Link, "src/a.ts", "src/hard")), EACCES);
    const std::vector<Refusal> logged = RefusalLog::read(logPath);
    QCOMPARE(logged.size(), 4u);
    QCOMPARE(logged[0].op, std::string("rename"));
    QCOMPARE(logged[0].path, std::string("src/a.ts"));
    QCOMPARE(logged[0].holder, std::string("did:agent:b"));
    QCOMPARE(logged[0].pid, 42);
    QCOMPARE(logged[0].command, std::string("sed"));
    QCOMPARE(logged[2].path, std::string("src"));
    QCOMPARE(logged[2].heldResource, std::string("fs:src/a.ts"));
    QCOMPARE(service.calls.size(), 4u);
    QCOMPARE(service.calls[0], std::string("refused fs:src/a.ts"));
}

void TstLeaseGate::implicitLeasesFollowTheChanges()
{
    LeaseView view("did:agent:a");
    RecordingService service;
    RefusalLog log("");
    LeaseGate gate(view, service, log, {});
    Change create = change(ChangeOp::Create, "src/sedX1");
    create.handle = 7;
    QCOMPARE(gate.admit(create), 0);
    gate.done(create, 0);
    gate.done(change(ChangeOp::Rename, "src/sedX1", "src/a.ts"), 0); // an editor's rename
    gate.done(change(ChangeOp::Unlink, "src/gone"), 0);
    gate.done(change(ChangeOp::Create, "src/failed"), EEXIST); // nothing changed: nothing taken
    gate.closed(7);
    view.granted(lease("ls_9", "fs:src/own.ts", "did:agent:a"));
    gate.done(change(ChangeOp::Open, "src/own.ts"), 0);
    const std::vector<std::string> expected = {"changed fs:src/sedX1 h7",
                                               "removed fs:src/sedX1",
                                               "changed fs:src/a.ts",
                                               "removed fs:src/gone",
                                               "closed 7",
                                               "changed fs:src/own.ts covered"};
    QCOMPARE(service.calls, expected);
}

void TstLeaseGate::nothingImplicitInsideGitOrForFolders()
{
    LeaseView view("did:agent:a");
    RecordingService service;
    RefusalLog log("");
    LeaseGate gate(view, service, log, {});
    gate.done(change(ChangeOp::Create, ".git/index.lock"), 0);
    gate.done(change(ChangeOp::Rename, ".git/index.lock", ".git/index"), 0);
    gate.done(change(ChangeOp::Create, "sub/.git/HEAD"), 0);
    gate.done(change(ChangeOp::Mkdir, "build"), 0);
    gate.done(change(ChangeOp::SetAttr, "build", {}, true), 0);
    for (const std::string &c : service.calls)
        QVERIFY2(c.rfind("changed", 0) != 0, c.c_str());
    // Judged like any name, though: an explicit lease on .git/index still stands.
    view.granted(lease("ls_1", "fs:.git/index", "did:agent:b"));
    QCOMPARE(gate.admit(change(ChangeOp::Rename, ".git/index.lock", ".git/index")), EACCES);
}

void TstLeaseGate::staleViewRefusesEveryChange()
{
    QTemporaryDir dir;
    LeaseView view("did:agent:a");
    RecordingService service;
    const std::string logPath = dir.filePath(QStringLiteral("refusals.jsonl")).toStdString();
    RefusalLog log(logPath);
    LeaseGate::Options options;
    options.staleAfterMs = 20;
    LeaseGate gate(view, service, log, options);
    gate.setFresh(false);
    QCOMPARE(gate.admit(change(ChangeOp::Create, "a.txt")), 0); // within the bound
    QTRY_COMPARE(gate.admit(change(ChangeOp::Create, "a.txt")), EACCES);
    QCOMPARE(RefusalLog::read(logPath).back().reason, std::string("unreachable"));
    QVERIFY(service.calls.empty()); // the instance is not there to tell
    gate.setFresh(true);
    QCOMPARE(gate.admit(change(ChangeOp::Create, "a.txt")), 0);
}

void TstLeaseGate::viewFollowsGrantsAndEnds()
{
    LeaseView view("did:agent:a");
    view.replace({lease("ls_1", "fs:src/a", "did:agent:b"), lease("ls_2", "lock:x", "did:agent:b"),
                  lease("ls_3", "fs:src/*.ts", "did:agent:b")});
    QCOMPARE(view.size(), 2u); // workspace names only
    QVERIFY(view.judge(LeaseGate::nameOf("src/a"), false).blocker);
    view.ended("ls_1");
    QVERIFY(!view.judge(LeaseGate::nameOf("src/a"), false).blocker);
    QVERIFY(view.judge(LeaseGate::nameOf("src/b.ts"), false).blocker);
    view.ended("ls_3");
    QVERIFY(!view.judge(LeaseGate::nameOf("src/b.ts"), false).blocker);
    // Renewed: the same id, replaced in place.
    view.granted(lease("ls_4", "fs:src/c", "did:agent:b"));
    view.granted(lease("ls_4", "fs:src/c", "did:agent:b"));
    QCOMPARE(view.size(), 1u);
    // Readers and a writer at once (a worker judges while the watch applies).
    std::thread writer([&] {
        for (int i = 0; i < 2000; ++i)
            view.granted(
                lease("ls_w" + std::to_string(i % 50), "fs:w/" + std::to_string(i), "did:agent:b"));
    });
    for (int i = 0; i < 2000; ++i)
        view.judge(LeaseGate::nameOf("w/" + std::to_string(i)), i % 2 == 0);
    writer.join();
    QCOMPARE(view.size(), 51u);
}

QTEST_GUILESS_MAIN(TstLeaseGate)
#include "tst_leasegate.moc"

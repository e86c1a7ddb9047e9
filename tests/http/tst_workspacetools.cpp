// The guarded workspace tools over real MCP sessions on loopback HTTP, against a temporary
// workspace: containment, leases, strict mode, the revision fence, pins, atomic writes, limits,
// the ledger, and two agents racing one edit.

#include "mcptest.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSemaphore>
#include <QTemporaryDir>

#include <sys/stat.h>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstWorkspaceTools : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void toolsArePublishedWithAWorkspace();
    void pathsCannotLeaveTheRoot_data();
    void pathsCannotLeaveTheRoot();
    void linksInsideResolveToTheirRealPath();
    void aColonInAFolderNameNamesAFile();
    void soloAgentNeverSeesTheLayer();
    void strictWhileAnotherAgentIsLive();
    void heldPathIsRefusedNamingTheHolder();
    void patternLeasesCoverWhatTheyMatch();
    void fenceRefusesStaleAndBlindWrites();
    void pinHoldsAnExpiryUntilTheWriteLands();
    void writeIsAtomicAndKeepsTheMode();
    void editNeedsOneExactMatch();
    void readLimitsAndBinary();
    void moveAndDeleteAreGuarded();
    void everyMutationIsInTheLedger();
    void twoAgentsRaceOneEdit();
    void aStalledWriteDoesNotDelayAnotherAgent();

private:
    QString file(const QString &relative) const { return ws->path() + QLatin1Char('/') + relative; }
    // Whether the file was written: QVERIFY(put(...)).
    [[nodiscard]] bool put(const QString &relative, const QByteArray &content) const
    {
        QDir().mkpath(QFileInfo(file(relative)).absolutePath());
        QFile f(file(relative));
        const bool written = f.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
                             f.write(content) == content.size() && f.flush();
        if (!written)
            QTest::qFail(qPrintable(QStringLiteral("cannot write %1").arg(relative)), __FILE__,
                         __LINE__);
        return written;
    }
    QByteArray contentOf(const QString &relative) const
    {
        QFile f(file(relative));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    static std::string text(const json &result) { return result["content"][0]["text"]; }

    std::unique_ptr<QTemporaryDir> ws;
    std::unique_ptr<QTemporaryDir> outside;
    std::unique_ptr<ServiceFixture> s;
    std::unique_ptr<McpClient> a; // did:agent:a, initialized
    std::unique_ptr<McpClient> b; // did:agent:b, not initialized: a works solo until b connects
};

void TstWorkspaceTools::init()
{
    ws = std::make_unique<QTemporaryDir>();
    outside = std::make_unique<QTemporaryDir>();
    QVERIFY(ws->isValid() && outside->isValid());
    s = std::make_unique<ServiceFixture>(false, ws->path());
    QVERIFY(s->port != 0);
    a = std::make_unique<McpClient>(*s, kKeyA);
    b = std::make_unique<McpClient>(*s, kKeyB);
    QCOMPARE(a->initialize().status, 200);
}

void TstWorkspaceTools::cleanup()
{
    s->host->engine().checkInvariants();
    a.reset();
    b.reset();
    s.reset();
}

void TstWorkspaceTools::toolsArePublishedWithAWorkspace()
{
    QStringList names;
    const json listed = a->rpc("tools/list").body["result"]["tools"];
    for (const json &t : listed)
        names << QString::fromStdString(t["name"]);
    for (const char *name : {"fs_read", "fs_stat", "fs_list", "fs_write", "fs_edit", "fs_mkdir",
                             "fs_move", "fs_delete", "lock_acquire"})
        QVERIFY2(names.contains(QLatin1String(name)), name);
    ServiceFixture bare;
    McpClient c(bare, kKeyA);
    QCOMPARE(c.initialize().status, 200);
    const json tools = c.rpc("tools/list").body["result"]["tools"];
    for (const json &t : tools)
        QVERIFY(t["name"].get<std::string>().rfind("fs_", 0) != 0);
}

void TstWorkspaceTools::pathsCannotLeaveTheRoot_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("reason");
    QTest::newRow("dot-dot") << "../escape.txt"
                             << "escapes_root";
    QTest::newRow("deep dot-dot") << "src/../../escape.txt"
                                  << "escapes_root";
    QTest::newRow("absolute") << "/etc/passwd"
                              << "escapes_root";
    QTest::newRow("link to outside") << "out/secret.txt"
                                     << "escapes_root";
    QTest::newRow("link to outside, as a file") << "out"
                                                << "escapes_root";
    QTest::newRow("link loop") << "loop/x.txt"
                               << "escapes_root";
    QTest::newRow("fifo") << "pipe"
                          << "special_file";
}

void TstWorkspaceTools::pathsCannotLeaveTheRoot()
{
    QFETCH(QString, path);
    QFETCH(QString, reason);
    QFile secret(outside->path() + QStringLiteral("/secret.txt"));
    QVERIFY(secret.open(QIODevice::WriteOnly));
    secret.write("outside");
    secret.close();
    QVERIFY(QFile::link(outside->path(), file(QStringLiteral("out"))));
    QVERIFY(QFile::link(file(QStringLiteral("loop2")), file(QStringLiteral("loop"))));
    QVERIFY(QFile::link(file(QStringLiteral("loop")), file(QStringLiteral("loop2"))));
    QCOMPARE(::mkfifo(QFile::encodeName(file(QStringLiteral("pipe"))).constData(), 0600), 0);

    for (const char *tool : {"fs_read", "fs_write", "fs_stat", "fs_delete"}) {
        const json r = a->tool(tool, {{"path", path.toStdString()}, {"content", "x"}});
        QVERIFY2(r.value("isError", false), tool);
        JCOMPARE(r["structuredContent"]["reason"], reason.toStdString());
    }
    QCOMPARE(QFile(outside->path() + QStringLiteral("/secret.txt")).size(), 7);
    QVERIFY(!QFile::exists(ws->path() + QStringLiteral("/../escape.txt")));
}

void TstWorkspaceTools::linksInsideResolveToTheirRealPath()
{
    QVERIFY(put(QStringLiteral("src/app.cpp"), "int main() {}\n"));
    QVERIFY(QFile::link(file(QStringLiteral("src")), file(QStringLiteral("alias"))));
    QCOMPARE(b->initialize().status, 200);
    b->tool("lock_acquire", {{"paths", {"src"}}});
    // a goes through the link: the lease on the real folder still stops it.
    a->tool("lock_acquire", {{"paths", {"alias"}}, {"wait", 0}});
    const json r = a->tool("fs_write", {{"path", "alias/app.cpp"}, {"content", "x"}});
    JCOMPARE(r["structuredContent"]["reason"], "lease_held");
    JCOMPARE(r["structuredContent"]["resource"], "fs:src/app.cpp");
    JCOMPARE(r["structuredContent"]["holder"], "did:agent:b");
    QCOMPARE(contentOf(QStringLiteral("src/app.cpp")), QByteArray("int main() {}\n"));
    const json read = a->tool("fs_read", {{"path", "alias/app.cpp"}});
    JCOMPARE(read["structuredContent"]["path"], "src/app.cpp");
}

void TstWorkspaceTools::aColonInAFolderNameNamesAFile()
{
    // A folder called "lock:" is a folder: every spelling of a path through it names the file,
    // never the lock lock:x, so a lease on the file stops a write however the path is written.
    QVERIFY(put(QStringLiteral("lock:/x"), "v1\n"));
    QCOMPARE(b->initialize().status, 200);
    QVERIFY(!b->tool("lock_acquire", {{"paths", {"fs:lock:/x"}}}).value("isError", false));
    for (const char *path : {"lock:/x", "src/../lock:/x"}) {
        const json r = a->tool("fs_write", {{"path", path}, {"content", "v2\n"}});
        JCOMPARE(r["structuredContent"]["reason"], "lease_held");
        JCOMPARE(r["structuredContent"]["resource"], "fs:lock:/x");
        JCOMPARE(r["structuredContent"]["holder"], "did:agent:b");
    }
    QCOMPARE(contentOf(QStringLiteral("lock:/x")), QByteArray("v1\n"));
    const json read = a->tool("fs_read", {{"path", "src/../lock:/x"}});
    JCOMPARE(read["structuredContent"]["path"], "lock:/x");
    // What looks like a named resource is a file of that name too, here one that is not there.
    JCOMPARE(a->tool("fs_read", {{"path", "lock:deploy"}})["structuredContent"]["reason"],
             "not_found");
}

void TstWorkspaceTools::soloAgentNeverSeesTheLayer()
{
    QCOMPARE(s->front->mcp().sessions().liveAgents(), 1);
    const json created = a->tool("fs_write", {{"path", "notes/todo.md"}, {"content", "- one\n"}});
    QVERIFY2(!created.contains("isError"), text(created).c_str());
    JCOMPARE(created["structuredContent"]["path"], "notes/todo.md");
    QCOMPARE(contentOf(QStringLiteral("notes/todo.md")), QByteArray("- one\n"));
    const json edited = a->tool(
        "fs_edit", {{"path", "notes/todo.md"}, {"old_string", "one"}, {"new_string", "two"}});
    QVERIFY2(!edited.contains("isError"), text(edited).c_str());
    QCOMPARE(contentOf(QStringLiteral("notes/todo.md")), QByteArray("- two\n"));
    QCOMPARE(s->host->engine().leaseCount(), 0u);
}

void TstWorkspaceTools::strictWhileAnotherAgentIsLive()
{
    QCOMPARE(b->initialize().status, 200);
    QCOMPARE(s->front->mcp().sessions().liveAgents(), 2);
    json r = a->tool("fs_write", {{"path", "src/new.cpp"}, {"content", "x"}});
    JCOMPARE(r["structuredContent"]["reason"], "lock_required");
    QVERIFY2(text(r).find("another agent is live; lock_acquire first: call lock_acquire with "
                          "paths [\"src/new.cpp\"]") == 0,
             text(r).c_str());
    QVERIFY(!QFile::exists(file(QStringLiteral("src/new.cpp"))));

    a->tool("lock_acquire", {{"paths", {"src"}}}); // a folder lease covers what is under it
    r = a->tool("fs_write", {{"path", "src/new.cpp"}, {"content", "x"}});
    QVERIFY2(!r.contains("isError"), text(r).c_str());

    QCOMPARE(ServiceFixture::finish(b->send("DELETE", {})).status, 204); // b leaves
    a->tool("lock_release");
    r = a->tool("fs_write", {{"path", "src/other.cpp"}, {"content", "y"}});
    QVERIFY2(!r.contains("isError"), text(r).c_str()); // solo again: no lease needed
}

void TstWorkspaceTools::heldPathIsRefusedNamingTheHolder()
{
    QVERIFY(put(QStringLiteral("src/app.cpp"), "v1\n"));
    QCOMPARE(b->initialize().status, 200);
    b->tool("lock_acquire", {{"paths", {"src"}}});
    s->clock.advance(7'000);
    a->tool("fs_read", {{"path", "src/app.cpp"}});
    const json r =
        a->tool("fs_edit", {{"path", "src/app.cpp"}, {"old_string", "v1"}, {"new_string", "v2"}});
    JCOMPARE(r["isError"], true);
    JCOMPARE(r["structuredContent"]["holder"], "did:agent:b");
    JCOMPARE(r["structuredContent"]["heldForMs"], 7'000);
    QVERIFY2(text(r).find("Your fs_edit changed nothing: fs:src/app.cpp is held by did:agent:b "
                          "through fs:src (for 7 s, expires in 4 min 53 s).") == 0,
             text(r).c_str());
    QCOMPARE(contentOf(QStringLiteral("src/app.cpp")), QByteArray("v1\n"));
    // Deleting the folder above is refused too; so is anything below a held file's folder.
    JCOMPARE(
        a->tool("fs_delete", {{"path", "src"}, {"recursive", true}})["structuredContent"]["reason"],
        "lease_held");
}

void TstWorkspaceTools::patternLeasesCoverWhatTheyMatch()
{
    QVERIFY(put(QStringLiteral("src/app.cpp"), "v1\n"));
    QVERIFY(put(QStringLiteral("src/a*b.cpp"), "star\n")); // a file whose name has a '*'
    QCOMPARE(b->initialize().status, 200);                 // strict: two agents are live
    a->tool("lock_acquire", {{"paths", {"src/*.cpp"}}});
    // a's pattern covers what it matches, the file called "a*b.cpp" among them.
    for (const char *path : {"src/app.cpp", "src/new.cpp", "src/a*b.cpp"}) {
        a->tool("fs_read", {{"path", path}}); // no blind overwrite of what exists
        const json r = a->tool("fs_write", {{"path", path}, {"content", "mine\n"}});
        QVERIFY2(!r.contains("isError"), text(r).c_str());
    }
    QCOMPARE(contentOf(QStringLiteral("src/a*b.cpp")), QByteArray("mine\n"));
    JCOMPARE(a->tool("fs_write",
                     {{"path", "src/app.h"}, {"content", "x"}})["structuredContent"]["reason"],
             "lock_required");
    // b is refused through the pattern, and the file with a '*' is named as one file.
    json r = b->tool("fs_write", {{"path", "src/a*b.cpp"}, {"content", "theirs"}});
    JCOMPARE(r["structuredContent"]["reason"], "lease_held");
    JCOMPARE(r["structuredContent"]["resource"], "fs:src/a\\*b.cpp");
    JCOMPARE(r["structuredContent"]["heldResource"], "fs:src/*.cpp");
    QCOMPARE(contentOf(QStringLiteral("src/a*b.cpp")), QByteArray("mine\n"));
    // A workspace tool's path is taken literally: "src/*.cpp" is one (missing) file, not a glob.
    r = a->tool("fs_delete", {{"path", "src/*.cpp"}});
    JCOMPARE(r["structuredContent"]["reason"], "not_found");
    QVERIFY(QFile::exists(file(QStringLiteral("src/app.cpp"))));
}

void TstWorkspaceTools::fenceRefusesStaleAndBlindWrites()
{
    QVERIFY(put(QStringLiteral("f.txt"), "base\n"));
    QVERIFY(put(QStringLiteral("g.txt"), "never read\n"));
    const std::string seen =
        a->tool("fs_read", {{"path", "f.txt"}})["structuredContent"]["revision"];
    QCOMPARE(QString::fromStdString(seen).left(10), QStringLiteral("sha256-v1:"));
    QVERIFY(put(QStringLiteral("f.txt"), "changed by someone else\n"));

    json r =
        a->tool("fs_edit", {{"path", "f.txt"}, {"old_string", "someone"}, {"new_string", "x"}});
    JCOMPARE(r["structuredContent"]["reason"], "stale_write");
    QVERIFY2(text(r).find("f.txt changed since you last read it") == 0, text(r).c_str());
    QCOMPARE(contentOf(QStringLiteral("f.txt")), QByteArray("changed by someone else\n"));

    r = a->tool("fs_write", {{"path", "g.txt"}, {"content", "clobber"}});
    JCOMPARE(r["structuredContent"]["reason"], "stale_write");
    QVERIFY2(text(r).find("g.txt exists but you have not read it") == 0, text(r).c_str());

    a->tool("fs_stat", {{"path", "f.txt"}}); // stat observes too
    r = a->tool("fs_edit",
                {{"path", "f.txt"}, {"old_string", "someone else"}, {"new_string", "me"}});
    QVERIFY2(!r.contains("isError"), text(r).c_str());
    // Its own write advanced what a remembers: a second edit needs no new read.
    r = a->tool("fs_edit", {{"path", "f.txt"}, {"old_string", "me"}, {"new_string", "a"}});
    QVERIFY2(!r.contains("isError"), text(r).c_str());
    QCOMPARE(contentOf(QStringLiteral("f.txt")), QByteArray("changed by a\n"));
    // Another agent's memory is its own: b never read f.txt.
    QCOMPARE(b->initialize().status, 200);
    b->tool("lock_acquire", {{"paths", {"f.txt"}}});
    JCOMPARE(
        b->tool("fs_write", {{"path", "f.txt"}, {"content", "b"}})["structuredContent"]["reason"],
        "stale_write");
}

void TstWorkspaceTools::pinHoldsAnExpiryUntilTheWriteLands()
{
    QVERIFY(put(QStringLiteral("f.txt"), "v1\n"));
    a->tool("lock_acquire", {{"paths", {"f.txt"}}, {"ttl", 2}});
    a->tool("fs_read", {{"path", "f.txt"}});
    bool checked = false;
    s->front->mcp().workspace()->setBeforeChange([&] {
        // The lease falls due while the write is landing: its expiry waits for the pin.
        s->clock.advance(5'000);
        s->host->tick();
        const AcquireResult other = s->host->run([](LeaseEngine &e) {
            return e.acquire({"did:agent:b",
                              {std::get<ResourceName>(ResourceParser().parse("f.txt"))},
                              Mode::Write,
                              std::nullopt,
                              0});
        });
        QVERIFY(std::holds_alternative<Refusal>(other));
        QCOMPARE(s->host->engine().leaseCount(), 1u);
        checked = true;
    });
    const json r = a->tool("fs_write", {{"path", "f.txt"}, {"content", "v2\n"}});
    QVERIFY(checked);
    QVERIFY2(!r.contains("isError"), text(r).c_str());
    QCOMPARE(s->host->engine().leaseCount(), 0u); // the pending expiry completed after the write
    const AgentView view = s->host->engine().agentView("did:agent:a");
    QCOMPARE(view.trust, -5.0);
    std::vector<std::string> kinds;
    for (const LedgerEvent &e : s->host->ledger(0, 100))
        kinds.emplace_back(eventKindName(e.kind));
    const auto at = [&](const char *kind) {
        return std::find(kinds.begin(), kinds.end(), kind) - kinds.begin();
    };
    QVERIFY(at("workspace.mutation") < at("coordination.lease.expired"));
    QVERIFY(at("coordination.lease.pinned") < at("workspace.mutation"));
}

void TstWorkspaceTools::writeIsAtomicAndKeepsTheMode()
{
    QVERIFY(put(QStringLiteral("run.sh"), "#!/bin/sh\necho old\n"));
    QVERIFY(QFile::setPermissions(file(QStringLiteral("run.sh")),
                                  QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                      QFile::ReadGroup));
    a->tool("fs_read", {{"path", "run.sh"}});
    const json r = a->tool("fs_write", {{"path", "run.sh"}, {"content", "#!/bin/sh\necho new\n"}});
    QVERIFY2(!r.contains("isError"), text(r).c_str());
    QCOMPARE(contentOf(QStringLiteral("run.sh")), QByteArray("#!/bin/sh\necho new\n"));
    struct stat st;
    QCOMPARE(::stat(QFile::encodeName(file(QStringLiteral("run.sh"))).constData(), &st), 0);
    QCOMPARE(int(st.st_mode & 0777), 0740);
    // No temporary file is left beside it.
    QCOMPARE(QDir(ws->path()).entryList(QDir::Files | QDir::Hidden), QStringList{"run.sh"});
    JCOMPARE(r["structuredContent"]["revision"], WorkspaceFs::revisionOf("#!/bin/sh\necho new\n"));
}

void TstWorkspaceTools::editNeedsOneExactMatch()
{
    QVERIFY(put(QStringLiteral("f.txt"), "x = 1\nx = 1\ny = 2\n"));
    a->tool("fs_read", {{"path", "f.txt"}});
    json r = a->tool("fs_edit", {{"path", "f.txt"}, {"old_string", "z = 3"}, {"new_string", "q"}});
    JCOMPARE(r["structuredContent"]["reason"], "no_match");
    r = a->tool("fs_edit", {{"path", "f.txt"}, {"old_string", "x = 1"}, {"new_string", "x = 5"}});
    JCOMPARE(r["structuredContent"]["reason"], "ambiguous");
    QVERIFY2(text(r).find("occurs 2 times") != std::string::npos, text(r).c_str());
    r = a->tool("fs_edit", {{"path", "f.txt"},
                            {"old_string", "x = 1"},
                            {"new_string", "x = 5"},
                            {"replace_all", true}});
    QVERIFY2(!r.contains("isError"), text(r).c_str());
    QCOMPARE(contentOf(QStringLiteral("f.txt")), QByteArray("x = 5\nx = 5\ny = 2\n"));
    QVERIFY(put(QStringLiteral("bin.dat"), QByteArray("\x00\x01\x02", 3)));
    a->tool("fs_read", {{"path", "bin.dat"}, {"encoding", "base64"}});
    r = a->tool("fs_edit", {{"path", "bin.dat"}, {"old_string", "a"}, {"new_string", "b"}});
    JCOMPARE(r["structuredContent"]["reason"], "binary");
}

void TstWorkspaceTools::readLimitsAndBinary()
{
    QVERIFY(put(QStringLiteral("big.txt"), QByteArray(9 * 1024 * 1024, 'a') + "\nlast line\n"));
    json r = a->tool("fs_read", {{"path", "big.txt"}});
    JCOMPARE(r["structuredContent"]["reason"], "too_large");
    QVERIFY2(text(r).find("offset and limit") != std::string::npos, text(r).c_str());
    r = a->tool("fs_read", {{"path", "big.txt"}, {"offset", 2}, {"limit", 1}});
    JCOMPARE(r["structuredContent"]["content"], "last line\n");
    JCOMPARE(r["structuredContent"]["totalLines"], 3);

    QVERIFY(put(QStringLiteral("bin.dat"), QByteArray("\x00\xff", 2)));
    JCOMPARE(a->tool("fs_read", {{"path", "bin.dat"}})["structuredContent"]["reason"], "binary");
    JCOMPARE(a->tool("fs_read",
                     {{"path", "bin.dat"}, {"encoding", "base64"}})["structuredContent"]["content"],
             "AP8=");
    JCOMPARE(a->tool("fs_read", {{"path", "nope.txt"}})["structuredContent"]["reason"],
             "not_found");
    const json listed = a->tool("fs_list", json::object())["structuredContent"];
    QCOMPARE(listed["entries"].size(), 2u);
    JCOMPARE(listed["entries"][0]["path"], "big.txt");
    JCOMPARE(listed["entries"][1]["path"], "bin.dat");
}

void TstWorkspaceTools::moveAndDeleteAreGuarded()
{
    QVERIFY(put(QStringLiteral("src/a.cpp"), "a\n"));
    QVERIFY(put(QStringLiteral("dst/keep.txt"), "k\n"));
    QCOMPARE(b->initialize().status, 200);
    b->tool("lock_acquire", {{"paths", {"dst"}}});
    a->tool("lock_acquire", {{"paths", {"src"}}});
    a->tool("fs_read", {{"path", "src/a.cpp"}});
    json r = a->tool("fs_move", {{"from", "src/a.cpp"}, {"to", "dst/a.cpp"}});
    JCOMPARE(r["structuredContent"]["holder"], "did:agent:b"); // both ends count
    QVERIFY(QFile::exists(file(QStringLiteral("src/a.cpp"))));
    b->tool("lock_release");
    r = a->tool("fs_move", {{"from", "src/a.cpp"}, {"to", "dst/a.cpp"}});
    JCOMPARE(r["structuredContent"]["reason"], "lock_required"); // a holds src, not dst
    a->tool("lock_release");
    a->tool("lock_acquire", {{"paths", {"src", "dst"}}});
    r = a->tool("fs_move", {{"from", "src/a.cpp"}, {"to", "dst/a.cpp"}});
    QVERIFY2(!r.contains("isError"), text(r).c_str());
    QCOMPARE(contentOf(QStringLiteral("dst/a.cpp")), QByteArray("a\n"));
    r = a->tool("fs_delete", {{"path", "dst"}});
    JCOMPARE(r["structuredContent"]["reason"], "not_empty");
    r = a->tool("fs_delete", {{"path", "dst"}, {"recursive", true}});
    QVERIFY2(!r.contains("isError"), text(r).c_str());
    QVERIFY(!QFile::exists(file(QStringLiteral("dst"))));
    r = a->tool("fs_mkdir", {{"path", "dst/deep/er"}});
    JCOMPARE(r["structuredContent"]["created"], true);
    QVERIFY(QFileInfo(file(QStringLiteral("dst/deep/er"))).isDir());
}

void TstWorkspaceTools::everyMutationIsInTheLedger()
{
    a->tool("fs_write", {{"path", "f.txt"}, {"content", "one"}});
    a->tool("fs_edit", {{"path", "f.txt"}, {"old_string", "one"}, {"new_string", "two"}});
    std::vector<LedgerEvent> mutations;
    for (const LedgerEvent &e : s->host->ledger(0, 100))
        if (e.kind == EventKind::WorkspaceMutation)
            mutations.push_back(e);
    QCOMPARE(mutations.size(), 2u);
    QCOMPARE(mutations[0].actorDid, std::string("did:agent:a"));
    QCOMPARE(mutations[0].resource, std::string("fs:f.txt"));
    QCOMPARE(mutations[0].reason, std::string("fs_write"));
    QCOMPARE(mutations[0].facts.before, std::string());
    QCOMPARE(mutations[0].facts.after, WorkspaceFs::revisionOf("one"));
    QCOMPARE(mutations[1].facts.before, WorkspaceFs::revisionOf("one"));
    QCOMPARE(mutations[1].facts.after, WorkspaceFs::revisionOf("two"));
}

void TstWorkspaceTools::twoAgentsRaceOneEdit()
{
    QVERIFY(put(QStringLiteral("shared.cpp"), "int value = 1;\n"));
    QCOMPARE(b->initialize().status, 200);
    a->tool("fs_read", {{"path", "shared.cpp"}});
    b->tool("fs_read", {{"path", "shared.cpp"}});
    // Both try to lock and change the same line at the same moment.
    const json lock = {{"name", "lock_acquire"},
                       {"arguments", {{"paths", {"shared.cpp"}}, {"wait", 0}}}};
    QNetworkReply *lockA = a->start("tools/call", lock, 11);
    QNetworkReply *lockB = b->start("tools/call", lock, 12);
    const json gotA = ServiceFixture::finish(lockA).body["result"];
    const json gotB = ServiceFixture::finish(lockB).body["result"];
    QCOMPARE(gotA.value("isError", false) + gotB.value("isError", false), 1);
    McpClient &winner = gotA.value("isError", false) ? *b : *a;
    McpClient &loser = gotA.value("isError", false) ? *a : *b;
    const std::string winnerDid = &winner == a.get() ? "did:agent:a" : "did:agent:b";
    auto edit = [](const char *to) {
        return json{{"name", "fs_edit"},
                    {"arguments",
                     {{"path", "shared.cpp"}, {"old_string", "value = 1"}, {"new_string", to}}}};
    };
    QNetworkReply *editW = winner.start("tools/call", edit("value = 2"), 13);
    QNetworkReply *editL = loser.start("tools/call", edit("value = 3"), 14);
    const json won = ServiceFixture::finish(editW).body["result"];
    const json lost = ServiceFixture::finish(editL).body["result"];
    QVERIFY2(!won.contains("isError"), won.dump().c_str());
    JCOMPARE(lost["structuredContent"]["reason"], "lease_held");
    JCOMPARE(lost["structuredContent"]["holder"], winnerDid);
    // The loser waits its turn, and is then told the file changed under it.
    winner.tool("lock_release");
    loser.tool("lock_acquire", {{"paths", {"shared.cpp"}}});
    const json stale = loser.tool("fs_edit", edit("value = 3")["arguments"]);
    JCOMPARE(stale["structuredContent"]["reason"], "stale_write");
    QCOMPARE(contentOf(QStringLiteral("shared.cpp")), QByteArray("int value = 2;\n"));
}

void TstWorkspaceTools::aStalledWriteDoesNotDelayAnotherAgent()
{
    // A write whose disk hangs: the worker stops inside the change, with its pins held, until
    // the test lets it go - as long as a slow disk would keep it.
    QSemaphore entered, go;
    s->front->mcp().workspace()->setDuringChange([&] {
        entered.release();
        go.acquire();
    });
    struct Release
    {
        QSemaphore &go;
        ~Release() { go.release(100); } // never leave the worker stuck, even on failure
    } release{go};
    QNetworkReply *write = a->start(
        "tools/call",
        {{"name", "fs_write"}, {"arguments", {{"path", "slow.txt"}, {"content", "x"}}}}, 9);
    QTRY_VERIFY_WITH_TIMEOUT(entered.available() == 1, 5000);

    // Meanwhile another agent is served by the engine thread at once.
    QElapsedTimer took;
    took.start();
    const HttpResult lease = s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB);
    const qint64 ms = took.elapsed();
    QCOMPARE(lease.status, 200);
    QVERIFY2(ms < 100, qPrintable(QStringLiteral("%1 ms").arg(ms)));
    QVERIFY(!write->isFinished());

    go.release();
    const HttpResult written = ServiceFixture::finish(write);
    JCOMPARE(written.body["result"]["structuredContent"]["ok"], true);
    QCOMPARE(contentOf("slow.txt"), QByteArray("x"));
}

QTEST_MAIN(TstWorkspaceTools)
#include "tst_workspacetools.moc"

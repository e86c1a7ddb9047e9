// The guarded workspace tools over real MCP sessions on loopback HTTP, against a temporary
// workspace: what they publish, containment, leases, strict mode, moves and deletes, the ledger.

#include "workspacefixture.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstWorkspaceTools : public QObject, WorkspaceFixture
{
    Q_OBJECT

private slots:
    void init() { start(); }
    void cleanup() { stop(); }
    void toolsArePublishedWithAWorkspace();
    void pathsCannotLeaveTheRoot_data();
    void pathsCannotLeaveTheRoot();
    void linksInsideResolveToTheirRealPath();
    void aColonInAFolderNameNamesAFile();
    void soloAgentNeverSeesTheLayer();
    void strictWhileAnotherAgentIsLive();
    void heldPathIsRefusedNamingTheHolder();
    void patternLeasesCoverWhatTheyMatch();
    void moveAndDeleteAreGuarded();
    void everyMutationIsInTheLedger();
};

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

QTEST_MAIN(TstWorkspaceTools)
#include "tst_workspacetools.moc"

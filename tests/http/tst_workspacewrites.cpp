// How the workspace tools write, over real MCP sessions on loopback HTTP: the revision fence,
// pins, atomic writes, exact edits, read limits, and two agents racing one edit.

#include "workspacefixture.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstWorkspaceWrites : public QObject, WorkspaceFixture
{
    Q_OBJECT

private slots:
    void init() { start(); }
    void cleanup() { stop(); }
    void fenceRefusesStaleAndBlindWrites();
    void pinHoldsAnExpiryUntilTheWriteLands();
    void writeIsAtomicAndKeepsTheMode();
    void editNeedsOneExactMatch();
    void readLimitsAndBinary();
    void twoAgentsRaceOneEdit();
    void aStalledWriteDoesNotDelayAnotherAgent();
};

void TstWorkspaceWrites::fenceRefusesStaleAndBlindWrites()
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

void TstWorkspaceWrites::pinHoldsAnExpiryUntilTheWriteLands()
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

void TstWorkspaceWrites::writeIsAtomicAndKeepsTheMode()
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

void TstWorkspaceWrites::editNeedsOneExactMatch()
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

void TstWorkspaceWrites::readLimitsAndBinary()
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

void TstWorkspaceWrites::twoAgentsRaceOneEdit()
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

void TstWorkspaceWrites::aStalledWriteDoesNotDelayAnotherAgent()
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

QTEST_MAIN(TstWorkspaceWrites)
#include "tst_workspacewrites.moc"

// Pattern leases (`src/**/*.ts`) over the surfaces that take a resource: REST /lease, /check,
// /wait and /ledger, and the MCP lock_* and coordination_* tools in both eras, over real
// sockets and a manual clock. The exact overlap rule itself is tested on the automata
// (tst_pathpattern) and against a brute-force model (tst_leasemodel).

#include "mcptest.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstPatterns : public QObject
{
    Q_OBJECT

private slots:
    void init() { s = std::make_unique<ServiceFixture>(); }
    void cleanup()
    {
        s->host->engine().checkInvariants();
        s.reset();
    }

    void restGrantsAndRefusesThroughAPattern();
    void malformedPatternsNameTheProblem_data();
    void malformedPatternsNameTheProblem();
    void aWaiterQueuesBehindAPatternHolder();
    void aCycleThroughAPatternIsADeadlock();
    void checkCountsAPatternAsCover();
    void mcpToolsTakePatterns();

private:
    std::unique_ptr<ServiceFixture> s;
};

void TstPatterns::restGrantsAndRefusesThroughAPattern()
{
    const HttpResult granted = s->post("/lease", {{"resource", "src/**/*.ts"}}, kKeyA);
    QCOMPARE(granted.status, 200);
    JCOMPARE(granted.body["lease"]["resource"], "fs:src/**/*.ts");
    s->clock.advance(2'000);
    // A write it matches, the folder above it, a name below a match, a name that may be a
    // folder holding a match (src/a.js/x.ts): refused, naming it.
    for (const char *name : {"src/a/b.ts", "src", "src/a.ts/x", "fs:.", "src/a.js"}) {
        const HttpResult no = s->post("/lease", {{"resource", name}}, kKeyB);
        QVERIFY2(no.status == 409, name);
        JCOMPARE(no.body["reason"], "lease_held");
        JCOMPARE(no.body["holder"], "did:agent:a");
        JCOMPARE(no.body["heldResource"], "fs:src/**/*.ts");
    }
    // What it does not match is free, and so is a pattern no name matches along with it.
    for (const char *name : {"docs/a.ts", "src/**/*.js", "docs/*.ts", "lock:src/a.ts"}) {
        const HttpResult r = s->post("/lease", {{"resource", name}}, kKeyB);
        QVERIFY2(r.status == 200, r.raw.constData());
    }
    // Without `**`, a pattern reaches one depth: src/a.js is free beside lib/*.ts.
    QCOMPARE(s->post("/lease", {{"resource", "lib/*.ts"}}, kKeyA).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "lib/a.js"}}, kKeyB).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "lib/a.ts"}}, kKeyB).status, 409);
    // Reads share with reads, also through patterns.
    QCOMPARE(s->post("/lease", {{"resource", "docs/*.md"}, {"mode", "read"}}, kKeyA).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "docs/a.md"}, {"mode", "read"}}, kKeyB).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "docs/a.md"}}, kKeyB).status, 409);
    // An escaped metacharacter is a plain name: the file called `*.ts`, which the pattern matches.
    const HttpResult literal = s->post("/lease", {{"resource", "src/\\*.ts"}}, kKeyB);
    QCOMPARE(literal.status, 409);
    JCOMPARE(literal.body["resource"], "fs:src/\\*.ts");
    // The holders and the ledger show the pattern as written; a pattern filter on the ledger
    // selects that pattern's own events.
    const HttpResult status = s->get(QString(RestApi::kBase) + "/status", kKeyA);
    bool shown = false;
    for (const json &l : status.body["leases"])
        shown = shown || l["resource"] == "fs:src/**/*.ts";
    QVERIFY(shown);
    const HttpResult ledger =
        s->get(QString(RestApi::kBase) + "/ledger?resource=src/**/*.ts", kKeyA);
    QCOMPARE(ledger.status, 200);
    QVERIFY(!ledger.body["events"].empty());
    for (const json &e : ledger.body["events"])
        JCOMPARE(e["resource"], "fs:src/**/*.ts");
}

void TstPatterns::malformedPatternsNameTheProblem_data()
{
    QTest::addColumn<QString>("resource");
    QTest::addColumn<QString>("problem");
    QTest::newRow("unbalanced [") << "src/[ab/*.ts"
                                  << "segment 2: unbalanced '[' in \"[ab\"";
    QTest::newRow("empty class") << "src/[z-a].ts"
                                 << "segment 2: the class in \"[z-a].ts\" matches no character";
    QString deep;
    for (int i = 0; i < 65; ++i)
        deep += QStringLiteral("*/");
    QTest::newRow("65 segments") << deep + "x"
                                 << "a pattern has at most 64 segments";
    QTest::newRow("too many elements")
        << QStringLiteral("?").repeated(600) << "a pattern is at most 512";
}

void TstPatterns::malformedPatternsNameTheProblem()
{
    QFETCH(QString, resource);
    QFETCH(QString, problem);
    const HttpResult r = s->post("/lease", {{"resource", resource.toStdString()}}, kKeyA);
    QCOMPARE(r.status, 400);
    JCOMPARE(r.body["reason"], "invalid_request");
    const std::string error = r.body["error"];
    QVERIFY2(error.find("resource") == 0, error.c_str());
    QVERIFY2(error.find(problem.toStdString()) != std::string::npos, error.c_str());
    QCOMPARE(s->host->engine().leaseCount(), 0u);
}

void TstPatterns::aWaiterQueuesBehindAPatternHolder()
{
    QCOMPARE(s->post("/lease", {{"resource", "src/*.ts"}}, kKeyA).status, 200);
    QNetworkReply *waiting = s->send("POST", QString(RestApi::kBase) + "/lease",
                                     R"({"resource":"src/a.ts","waitMs":20000})", kKeyB);
    QTRY_COMPARE(s->host->engine().parkedCount(), 1u);
    // The queue on the file shows the waiter and the pattern it waits for.
    const HttpResult queue = s->get(QString(RestApi::kBase) + "/wait?resource=src/a.ts", kKeyA);
    QCOMPARE(queue.body["waiters"].size(), 1u);
    JCOMPARE(queue.body["waiters"][0]["holder"], "did:agent:a");
    // A later pattern that meets the waiter's name queues behind it (FIFO), not past it, even
    // for the holder; one that does not is granted.
    const HttpResult later = s->post("/lease", {{"resource", "src/?.ts"}}, kKeyA);
    QCOMPARE(later.status, 409);
    JCOMPARE(later.body["reason"], "deadlock"); // b waits for what a holds
    JCOMPARE(later.body["waitingOn"], "fs:src/a.ts");
    QCOMPARE(s->post("/lease", {{"resource", "src/??.ts"}}, kKeyA).status, 200);
    QVERIFY(!waiting->isFinished());
    QCOMPARE(s->post("/release", {{"resource", "src/*.ts"}}, kKeyA).status, 200);
    const HttpResult granted = ServiceFixture::finish(waiting);
    QCOMPARE(granted.status, 200);
    JCOMPARE(granted.body["lease"]["resource"], "fs:src/a.ts");
    JCOMPARE(granted.body["lease"]["holder"], "did:agent:b");
}

void TstPatterns::aCycleThroughAPatternIsADeadlock()
{
    QCOMPARE(s->post("/lease", {{"resource", "src/*/x.ts"}}, kKeyA).status, 200);
    QCOMPARE(s->post("/lease", {{"resource", "lock:release"}}, kKeyB).status, 200);
    JCOMPARE(s->post("/lease", {{"resource", "lock:release"}}, kKeyA).body["reason"], "lease_held");
    // b wants a pattern that meets a's only through the name src/a/x.ts.
    const HttpResult r = s->post("/lease", {{"resource", "src/a/*.ts"}}, kKeyB);
    QCOMPARE(r.status, 409);
    JCOMPARE(r.body["reason"], "deadlock");
    JCOMPARE(r.body["holder"], "did:agent:a");
    const json cycle = {{{"agent", "did:agent:b"}, {"resource", "fs:src/a/*.ts"}},
                        {{"agent", "did:agent:a"}, {"resource", "lock:release"}}};
    JCOMPARE(r.body["cycle"], cycle);
    // Patterns that share no name are no cycle.
    QCOMPARE(s->post("/lease", {{"resource", "src/b/*.js"}}, kKeyB).status, 200);
}

void TstPatterns::checkCountsAPatternAsCover()
{
    QCOMPARE(s->post("/lease", {{"resource", "src/**/*.cpp"}}, kKeyA).status, 200);
    auto check = [&](const json &body, const QByteArray &key) {
        return s->post("/check", body, key);
    };
    const HttpResult mine = check({{"resources", {"src/a/b.cpp", "docs/b.h"}}}, kKeyA);
    QCOMPARE(mine.status, 200);
    JCOMPARE(mine.body["covered"][0]["resource"], "fs:src/a/b.cpp");
    JCOMPARE(mine.body["uncovered"], json({"fs:docs/b.h"}));
    const HttpResult theirs = check({{"resource", "src/a/b.cpp"}}, kKeyB);
    QCOMPARE(theirs.status, 409);
    JCOMPARE(theirs.body["heldResource"], "fs:src/**/*.cpp");
    QCOMPARE(check({{"resource", "docs/b.h"}}, kKeyB).status, 200);
}

void TstPatterns::mcpToolsTakePatterns()
{
    for (const bool modern : {false, true}) {
        s = std::make_unique<ServiceFixture>();
        McpClient a(*s, kKeyA, modern), b(*s, kKeyB, modern);
        QCOMPARE(a.initialize().status, 200);
        QCOMPARE(b.initialize().status, 200);
        const json granted = a.tool("lock_acquire", {{"paths", {"tests/**"}}, {"wait", 0}});

        QVERIFY2(granted.contains("structuredContent"), granted.dump().c_str());
        JCOMPARE(granted["structuredContent"]["leases"][0]["resource"], "fs:tests/**");
        const json refused = b.tool("lock_acquire", {{"paths", {"tests/unit/a.cpp"}}, {"wait", 0}});

        JCOMPARE(refused["isError"], true);
        JCOMPARE(refused["structuredContent"]["heldResource"], "fs:tests/**");
        const std::string text = refused["content"][0]["text"];
        QVERIFY2(text.find("fs:tests/unit/a.cpp is held by did:agent:a through fs:tests/**") == 0,
                 text.c_str());
        const json bad = a.tool("lock_acquire", {{"paths", {"src/[x"}}, {"wait", 0}});
        JCOMPARE(bad["isError"], true);
        const std::string why = bad["content"][0]["text"];
        QVERIFY2(why.find("unbalanced '['") != std::string::npos, why.c_str());
        const json released = a.tool("lock_release", {{"paths", {"tests/**"}}});
        QCOMPARE(released["structuredContent"]["released"].size(), 1u);
        // coordination_* takes a pattern as its resource (in 2026 it travels in a header too).
        auto coordinate = [&](McpClient &c, const std::string &resource) {
            Headers header;
            if (modern)
                header.emplace_back("Mcp-Param-Resource", QByteArray::fromStdString(resource));
            json params = {{"name", "coordination_lease_acquire"}};
            params["arguments"] = {{"resource", resource}};
            return c.rpc("tools/call", params, 2, header).body["result"];
        };
        const json ci = coordinate(b, "lock:ci/*");
        JCOMPARE(ci["structuredContent"]["lease"]["resource"], "lock:ci/*");
        const json clash = coordinate(a, "lock:ci/linux");
        JCOMPARE(clash["structuredContent"]["reason"], "lease_held");
        JCOMPARE(clash["structuredContent"]["heldResource"], "lock:ci/*");
        JCOMPARE(coordinate(a, "lock:cd/linux")["structuredContent"]["lease"]["resource"],
                 "lock:cd/linux");
        s->host->engine().checkInvariants();
    }
}

QTEST_GUILESS_MAIN(TstPatterns)
#include "tst_patterns.moc"

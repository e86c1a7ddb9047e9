// The MCP lease tools over real loopback HTTP: catalogue, grants, refusals written for a model,
// parked waits (granted, timed out, cancelled by notification, by DELETE, by a vanished
// client), hold-and-wait, deadlock, aliases and open-mode identity.

#include "mcptest.h"

#include <QRegularExpression>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstMcpTools : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void catalogueIsWrittenForModels();
    void grantAndRefusalNamingTheHolder();
    void waitIsGrantedOnRelease();
    void waitEndsAtItsDeadlineWithTheHolder();
    void cancelledNotificationEndsTheWait();
    void endingTheSessionEndsItsWaits();
    void clientThatLeavesTakesNothing();
    void holdersMayNotWait();
    void deadlockRefusalTeachesTheWayOut();
    void statusAndBareRelease();
    void coordinationToolsAndAliases();
    void badArgumentsAreToolErrorsNamingTheField();
    void openModeIdentity();

private:
    // Starts lock_acquire for `client` and returns once the engine holds it parked.
    QNetworkReply *park(McpClient &client, const json &arguments, int id)
    {
        return startParked(*s, client, arguments, id);
    }

    std::unique_ptr<ServiceFixture> s;
    std::unique_ptr<McpClient> clientA; // did:agent:a, initialized
    std::unique_ptr<McpClient> clientB; // did:agent:b, initialized
};

void TstMcpTools::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
    clientA = std::make_unique<McpClient>(*s, kKeyA);
    clientB = std::make_unique<McpClient>(*s, kKeyB);
    QCOMPARE(clientA->initialize().status, 200);
    QCOMPARE(clientB->initialize().status, 200);
}

void TstMcpTools::cleanup()
{
    s->host->engine().checkInvariants();
    clientA.reset();
    clientB.reset();
    s.reset();
}

void TstMcpTools::catalogueIsWrittenForModels()
{
    McpClient &a = *clientA;
    const json tools = a.rpc("tools/list").body["result"]["tools"];
    QStringList names;
    for (const json &t : tools) {
        const QString name = QString::fromStdString(t["name"]);
        names << name;
        QVERIFY(QRegularExpression(QStringLiteral("^[A-Za-z0-9_-]{1,64}$")).match(name).hasMatch());
        JCOMPARE(t["inputSchema"]["type"], "object");
        JCOMPARE(t["outputSchema"]["type"], "object");
        QVERIFY2(t["description"].get<std::string>().size() > 150, qPrintable(name));
        QVERIFY2(!t["inputSchema"]["properties"].contains("actorDid"), "keyed: no actorDid");
    }
    QCOMPARE(names, (QStringList{"lock_acquire", "lock_release", "lock_status",
                                 "coordination_lease_acquire", "coordination_lease_release",
                                 "coordination_wait"}));
    const std::string acquire = tools[0]["description"];
    for (const char *teaches : {"wait", "lock_release", "deadlock", "holds"})
        QVERIFY2(acquire.find(teaches) != std::string::npos, teaches);
    JCOMPARE(tools[0]["inputSchema"]["required"], json({"paths"}));
}

void TstMcpTools::grantAndRefusalNamingTheHolder()
{
    McpClient &a = *clientA, &b = *clientB;
    const json granted = a.tool("lock_acquire", {{"paths", {"src/app.cpp"}}, {"wait", 0}});
    QVERIFY(!granted.contains("isError"));
    const json lease = granted["structuredContent"]["leases"][0];
    JCOMPARE(lease["holder"], "did:agent:a");
    JCOMPARE(lease["resource"], "fs:src/app.cpp");
    JCOMPARE(lease["ttlMs"], 300'000); // the lock_* default
    JCOMPARE(json::parse(granted["content"][0]["text"].get<std::string>()),
             granted["structuredContent"]);

    s->clock.advance(42'000);
    const json refused = b.tool("lock_acquire", {{"paths", {"src"}}, {"wait", 0}});
    JCOMPARE(refused["isError"], true);
    const json why = refused["structuredContent"];
    JCOMPARE(why["reason"], "lease_held");
    JCOMPARE(why["holder"], "did:agent:a");
    JCOMPARE(why["heldForMs"], 42'000);
    JCOMPARE(why["resource"], "fs:src");
    JCOMPARE(why["heldResource"], "fs:src/app.cpp");
    QVERIFY(why["retryAfterSeconds"].get<int>() >= 1);
    const std::string text = refused["content"][0]["text"];
    QVERIFY2(text.find("fs:src is held by did:agent:a through fs:src/app.cpp (for 42 s, expires in "
                       "4 min 18 s).") == 0,
             text.c_str());
    QVERIFY2(text.find("call lock_acquire again, or work on something else") != std::string::npos,
             text.c_str());
    JCOMPARE(json::parse(refused["content"][1]["text"].get<std::string>()), why);
}

void TstMcpTools::waitIsGrantedOnRelease()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"src/app.cpp"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"src/app.cpp"}}}, 5); // default wait: it parks
    QVERIFY(!waiting->isFinished());
    s->clock.advance(3'000);
    const json released = a.tool("lock_release", {{"paths", {"src/app.cpp"}}});
    QCOMPARE(released["structuredContent"]["released"].size(), 1u);
    const HttpResult r = ServiceFixture::finish(waiting);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body["id"], 5);
    JCOMPARE(r.body["result"]["structuredContent"]["leases"][0]["holder"], "did:agent:b");
    JCOMPARE(r.body["result"]["structuredContent"]["waitedMs"], 3'000);
}

void TstMcpTools::waitEndsAtItsDeadlineWithTheHolder()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"lock:deploy/production"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"lock:deploy/production"}}, {"wait", 500}}, 6);
    s->clock.advance(89'999);
    s->host->tick();
    QCOMPARE(s->host->engine().parkedCount(), 1u); // the wait is capped at 90 s, not 500
    s->clock.advance(1);
    s->host->tick();
    const HttpResult r = ServiceFixture::finish(waiting);
    const json result = r.body["result"];
    JCOMPARE(result["isError"], true);
    JCOMPARE(result["structuredContent"]["holder"], "did:agent:a");
    JCOMPARE(result["structuredContent"]["waitedMs"], 90'000);
    const std::string text = result["content"][0]["text"];
    QVERIFY2(text.find("You waited 1 min 30 s.") != std::string::npos, text.c_str());
}

void TstMcpTools::cancelledNotificationEndsTheWait()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"docs"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"docs/a.md"}}}, 77);
    // A cancellation for another request id changes nothing.
    QCOMPARE(b.post({{"jsonrpc", "2.0"},
                     {"method", "notifications/cancelled"},
                     {"params", {{"requestId", 78}}}})
                 .status,
             202);
    QCOMPARE(s->host->engine().parkedCount(), 1u);
    QCOMPARE(b.post({{"jsonrpc", "2.0"},
                     {"method", "notifications/cancelled"},
                     {"params", {{"requestId", 77}, {"reason", "user stopped"}}}})
                 .status,
             202);
    QCOMPARE(s->host->engine().parkedCount(), 0u);
    const HttpResult r = ServiceFixture::finish(waiting);
    JCOMPARE(r.body["result"]["structuredContent"]["cancelled"], true);
    a.tool("lock_release");
    QCOMPARE(s->host->engine().leaseCount(), 0u); // b took nothing
}

void TstMcpTools::endingTheSessionEndsItsWaits()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"x"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"x"}}}, 1);
    QCOMPARE(ServiceFixture::finish(b.send("DELETE", {})).status, 204);
    QCOMPARE(s->host->engine().parkedCount(), 0u);
    JCOMPARE(ServiceFixture::finish(waiting).body["result"]["structuredContent"]["cancelled"],
             true);
}

void TstMcpTools::clientThatLeavesTakesNothing()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"x"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"x"}}}, 1);
    waiting->abort();
    waiting->deleteLater();
    QTRY_COMPARE(s->host->engine().parkedCount(), 0u);
    a.tool("lock_release");
    QCOMPARE(s->host->engine().leaseCount(), 0u);
    JCOMPARE(b.tool("lock_status")["structuredContent"]["held"], json::array());
}

void TstMcpTools::holdersMayNotWait()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"y"}}});
    b.tool("lock_acquire", {{"paths", {"x"}}});
    const json refused = b.tool("lock_acquire", {{"paths", {"y"}}, {"wait", 60}});
    QCOMPARE(s->host->engine().parkedCount(), 0u); // answered at once
    JCOMPARE(refused["isError"], true);
    const std::string text = refused["content"][0]["text"];
    QVERIFY2(text.find("You hold leases, so you may not wait: call lock_release") !=
                 std::string::npos,
             text.c_str());
}

void TstMcpTools::deadlockRefusalTeachesTheWayOut()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"x"}}});
    b.tool("lock_acquire", {{"paths", {"y"}}});
    JCOMPARE(a.tool("lock_acquire", {{"paths", {"y"}}, {"wait", 0}})["structuredContent"]["reason"],
             "lease_held"); // a now wants y
    const json refused = b.tool("lock_acquire", {{"paths", {"x"}}, {"wait", 0}});
    JCOMPARE(refused["structuredContent"]["reason"], "deadlock");
    JCOMPARE(refused["structuredContent"]["cycle"],
             json::parse(R"([{"agent":"did:agent:b","resource":"fs:x"},
                             {"agent":"did:agent:a","resource":"fs:y"}])"));
    const std::string text = refused["content"][0]["text"];
    QVERIFY2(text.find("Call lock_release without arguments (it lets go of everything you hold), "
                       "then lock_acquire with everything you need") != std::string::npos,
             text.c_str());
}

void TstMcpTools::statusAndBareRelease()
{
    McpClient &a = *clientA, &b = *clientB;
    a.tool("lock_acquire", {{"paths", {"src/a.cpp", "src/b.cpp"}}, {"ttl", 60}});
    b.tool("lock_acquire", {{"paths", {"src/a.cpp"}}, {"wait", 0}});
    s->clock.advance(10'000);
    const json mine = a.tool("lock_status")["structuredContent"];
    QCOMPARE(mine["held"].size(), 2u);
    JCOMPARE(mine["held"][0]["expiresInMs"], 50'000);
    JCOMPARE(mine["liveAgents"], 2);
    const json theirs = b.tool("lock_status")["structuredContent"];
    JCOMPARE(theirs["held"], json::array());
    JCOMPARE(theirs["waiting"][0]["resource"], "fs:src/a.cpp");
    JCOMPARE(theirs["waiting"][0]["holder"], "did:agent:a");
    JCOMPARE(theirs["waiting"][0]["kind"], "want");

    const json released = a.tool("lock_release")["structuredContent"];
    QCOMPARE(released["released"].size(), 2u);
    JCOMPARE(released["trust"], 1.0); // +0.5 per release
    const json again = a.tool("lock_release", {{"paths", {"src/a.cpp"}}});
    JCOMPARE(again["isError"], true);
    JCOMPARE(again["structuredContent"]["reason"], "not_held");
}

void TstMcpTools::coordinationToolsAndAliases()
{
    McpClient &a = *clientA, &b = *clientB;
    const json got = a.tool("coordination.lease.acquire", {{"resource", "lock:deploy/production"}});
    const json lease = got["structuredContent"]["lease"];
    JCOMPARE(lease["ttlMs"], 30'000); // the coordination surface's default
    const json refused = b.tool("coordination_lease_acquire", {{"resource", "lock:deploy"}});
    JCOMPARE(refused["structuredContent"]["holder"], "did:agent:a");
    QVERIFY(refused["structuredContent"]["stampede"]["waitMs"].get<int>() > 0);
    const json queue = a.tool("coordination.wait", {{"resource", "lock:deploy"}});
    JCOMPARE(queue["structuredContent"]["waiters"][0]["actorDid"], "did:agent:b");
    JCOMPARE(b.tool("coordination_lease_release",
                    {{"resource", "lock:deploy/production"},
                     {"actorDid", "did:agent:a"}})["structuredContent"]["reason"],
             "actor_mismatch");
    const json stale = a.tool("coordination_lease_release",
                              {{"resource", "lock:deploy/production"}, {"leaseId", "ls_old"}});
    JCOMPARE(stale["structuredContent"]["reason"], "stale_lease");
    const json done = a.tool("coordination.lease.release", {{"resource", "lock:deploy/production"},
                                                            {"leaseId", lease["leaseId"]}});
    JCOMPARE(done["structuredContent"]["released"][0]["leaseId"], lease["leaseId"]);
}

void TstMcpTools::badArgumentsAreToolErrorsNamingTheField()
{
    McpClient &a = *clientA;
    const std::pair<json, const char *> cases[] = {
        {json::object(), "paths is required"},
        {{{"paths", "src/a.cpp"}}, "paths must be"},
        {{{"paths", json::array()}}, "paths"},
        {{{"paths", {"../../etc/passwd"}}}, "paths[0]"},
        {{{"paths", {"a"}}, {"ttl", "long"}}, "ttl must be an integer"},
        {{{"paths", {"a"}}, {"wait", -1}}, "wait must be from 0"},
        {{{"paths", {"a"}}, {"mode", "exclusive"}}, "mode must be read, write or delete"},
    };
    for (const auto &[arguments, expected] : cases) {
        const json r = a.tool("lock_acquire", arguments);
        QVERIFY2(r.value("isError", false), arguments.dump().c_str());
        const std::string text = r["content"][0]["text"];
        QVERIFY2(text.find(expected) != std::string::npos, (text + " / " + expected).c_str());
    }
    QCOMPARE(s->host->engine().leaseCount(), 0u);
}

void TstMcpTools::openModeIdentity()
{
    clientA.reset();
    clientB.reset();
    s = std::make_unique<ServiceFixture>(true);
    McpClient named(*s, {});
    QCOMPARE(named.initialize("2025-11-25", {{"X-Agent-Id", "did:agent:n"}}).status, 200);
    JCOMPARE(
        named.tool("lock_acquire", {{"paths", {"p"}}})["structuredContent"]["leases"][0]["holder"],
        "did:agent:n");
    const json tools = named.rpc("tools/list").body["result"]["tools"];
    QVERIFY(tools[0]["inputSchema"]["properties"].contains("actorDid"));

    McpClient anonymous(*s, {});
    QCOMPARE(anonymous.initialize().status, 200);
    const json unnamed = anonymous.tool("lock_status");
    JCOMPARE(unnamed["isError"], true);
    QVERIFY(unnamed["content"][0]["text"].get<std::string>().find("actorDid") != std::string::npos);
    JCOMPARE(anonymous.tool("lock_status",
                            {{"actorDid", "did:agent:m"}})["structuredContent"]["actorDid"],
             "did:agent:m");
    QCOMPARE(s->front->mcp().sessions().liveAgents(), 2); // bound by its first call
    JCOMPARE(anonymous.tool("lock_release",
                            {{"actorDid", "did:agent:n"}})["structuredContent"]["reason"],
             "actor_mismatch");
    QCOMPARE(s->host->engine().leaseCount(), 1u);
    McpClient liar(*s, kKeyA);
    QCOMPARE(liar.initialize("2025-11-25", {{"X-Agent-Id", "did:agent:b"}}).status, 403);
}

QTEST_MAIN(TstMcpTools)
#include "tst_mcptools.moc"

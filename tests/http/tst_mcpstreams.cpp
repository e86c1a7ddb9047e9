// Long calls in both MCP eras over real loopback HTTP: a 2026-07-28 and a 2025 client waiting
// for each other in one engine, progress notifications on a parked call's event stream (and a
// plain JSON answer without them), cancellation without a session, by notification or by
// closing the stream, and subscriptions/listen for resource updates.

#include "mcptest.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstMcpStreams : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void bothErasContendInOneEngine();
    void parkedCallStreamsProgress_data();
    void parkedCallStreamsProgress();
    void withoutProgressTokenTheAnswerIsJson();
    void cancelledWithoutASession();
    void closingTheStreamCancels();
    void listenStreamsResourceUpdates();

private:
    QNetworkReply *park(McpClient &client, const json &arguments, int id, json meta = json())
    {
        return startParked(*s, client, arguments, id, std::move(meta));
    }

    std::unique_ptr<ServiceFixture> s;
};

void TstMcpStreams::init()
{
    // Progress every 20 ms of real time, so a test sees several without waiting long.
    s = std::make_unique<ServiceFixture>(false, QString(), 20);
    QVERIFY(s->port != 0);
}

void TstMcpStreams::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstMcpStreams::bothErasContendInOneEngine()
{
    McpClient modern(*s, kKeyA, true);
    McpClient legacy(*s, kKeyB);
    QCOMPARE(legacy.initialize().status, 200);
    modern.tool("lock_acquire", {{"paths", {"src/shared.ts"}}});
    json refused = legacy.tool("lock_acquire", {{"paths", {"src/shared.ts"}}, {"wait", 0}});
    JCOMPARE(refused["isError"], true);
    JCOMPARE(refused["structuredContent"]["holder"], "did:agent:a");
    QNetworkReply *waiting = park(legacy, {{"paths", {"src/shared.ts"}}}, 4);
    s->clock.advance(2'000);
    modern.tool("lock_release");
    HttpResult r = ServiceFixture::finish(waiting);
    JCOMPARE(r.body["result"]["structuredContent"]["leases"][0]["holder"], "did:agent:b");
    JCOMPARE(r.body["result"]["structuredContent"]["waitedMs"], 2'000);

    // And the other way round: the modern client waits for the legacy one.
    waiting = park(modern, {{"paths", {"src/shared.ts"}}}, 5);
    s->clock.advance(1'000);
    legacy.tool("lock_release");
    r = ServiceFixture::finish(waiting);
    JCOMPARE(r.body["id"], 5);
    JCOMPARE(r.body["result"]["resultType"], "complete");
    JCOMPARE(r.body["result"]["structuredContent"]["leases"][0]["holder"], "did:agent:a");
    QCOMPARE(s->front->mcp().sessions().size(), 1u); // the legacy session only
}

void TstMcpStreams::parkedCallStreamsProgress_data()
{
    QTest::addColumn<bool>("modern");
    QTest::newRow("2026-07-28") << true;
    QTest::newRow("2025-11-25") << false;
}

void TstMcpStreams::parkedCallStreamsProgress()
{
    QFETCH(bool, modern);
    McpClient a(*s, kKeyA);
    McpClient b(*s, kKeyB, modern);
    QCOMPARE(a.initialize().status, 200);
    QCOMPARE(b.initialize().status, 200);
    a.tool("lock_acquire", {{"paths", {"lock:deploy/production"}}});
    EventReader stream(park(b, {{"paths", {"lock:deploy/production"}}, {"wait", 60}}, 12,
                            {{"progressToken", "wait-12"}}));
    // The first notification goes out as the call parks, and says whom it waits for.
    QVERIFY(stream.waitFor(1));
    QVERIFY(stream.contentType().startsWith("text/event-stream"));
    json first = stream.events[0];
    JCOMPARE(first["method"], "notifications/progress");
    JCOMPARE(first["params"]["progressToken"], "wait-12");
    JCOMPARE(first["params"]["total"], 60'000);
    const std::string message = first["params"]["message"];
    QVERIFY2(message.find("lock:deploy/production") != std::string::npos &&
                 message.find("did:agent:a") != std::string::npos,
             message.c_str());
    // Then one per interval while it waits, each further on.
    s->clock.advance(30'000);
    // One sent just before the clock moved may still be on its way: the next ones say 30 s.
    bool later = false;
    for (std::size_t n = stream.events.size() + 1; !later && stream.waitFor(n); ++n)
        later = stream.events.back()["params"]["progress"].get<double>() >= 30'000;
    QVERIFY(later);
    for (std::size_t i = 1; i < stream.events.size(); ++i)
        QVERIFY(stream.events[i]["params"]["progress"] >
                stream.events[i - 1]["params"]["progress"]);
    // The answer is the stream's last event, and nothing follows it.
    a.tool("lock_release");
    QVERIFY(stream.waitForEnd());
    QCOMPARE(stream.status(), 200);
    json last = stream.events.back();
    JCOMPARE(last["id"], 12);
    JCOMPARE(last["result"]["structuredContent"]["leases"][0]["holder"], "did:agent:b");
    for (std::size_t i = 0; i + 1 < stream.events.size(); ++i)
        JCOMPARE(stream.events[i]["method"], "notifications/progress");
    if (modern)
        JCOMPARE(last["result"]["resultType"], "complete");
    // The connection is still good for the next request.
    QCOMPARE(b.rpc("tools/list").status, 200);
}

void TstMcpStreams::withoutProgressTokenTheAnswerIsJson()
{
    McpClient a(*s, kKeyA, true);
    McpClient b(*s, kKeyB, true);
    a.tool("lock_acquire", {{"paths", {"x"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"x"}}}, 3);
    a.tool("lock_release");
    HttpResult r = ServiceFixture::finish(waiting);
    QVERIFY(r.header("Content-Type").startsWith("application/json"));
    JCOMPARE(r.body["result"]["structuredContent"]["leases"][0]["holder"], "did:agent:b");
}

void TstMcpStreams::cancelledWithoutASession()
{
    McpClient a(*s, kKeyA, true);
    McpClient b(*s, kKeyB, true);
    a.tool("lock_acquire", {{"paths", {"docs"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"docs/a.md"}}}, 77);
    json cancel = {{"jsonrpc", "2.0"},
                   {"method", "notifications/cancelled"},
                   {"params", {{"requestId", 77}, {"reason", "user stopped"}}}};
    // Another agent cannot cancel it, nor can another request id.
    QCOMPARE(a.post(cancel).status, 202);
    json other = cancel;
    other["params"]["requestId"] = 78;
    QCOMPARE(b.post(other).status, 202);
    QCOMPARE(s->host->engine().parkedCount(), 1u);
    QCOMPARE(b.post(cancel).status, 202);
    QCOMPARE(s->host->engine().parkedCount(), 0u);
    HttpResult r = ServiceFixture::finish(waiting);
    JCOMPARE(r.body["result"]["structuredContent"]["cancelled"], true);
    a.tool("lock_release");
    QCOMPARE(s->host->engine().leaseCount(), 0u); // b took nothing
    QCOMPARE(s->front->mcp().sessions().size(), 0u);
}

void TstMcpStreams::closingTheStreamCancels()
{
    McpClient a(*s, kKeyA, true);
    McpClient b(*s, kKeyB, true);
    a.tool("lock_acquire", {{"paths", {"x"}}});
    QNetworkReply *waiting = park(b, {{"paths", {"x"}}}, 1, {{"progressToken", 1}});
    EventReader stream(waiting);
    QVERIFY(stream.waitFor(1));
    waiting->abort();
    waiting->deleteLater();
    QTRY_COMPARE(s->host->engine().parkedCount(), 0u);
    a.tool("lock_release");
    QCOMPARE(s->host->engine().leaseCount(), 0u);
    JCOMPARE(b.tool("lock_status")["structuredContent"]["held"], json::array());
}

void TstMcpStreams::listenStreamsResourceUpdates()
{
    McpClient watcher(*s, kKeyA, true);
    McpClient agent(*s, kKeyB, true);
    QNetworkReply *reply =
        watcher.start("subscriptions/listen",
                      {{"notifications",
                        {{"resourceSubscriptions", {"leasehold://status", "file:///etc/passwd"}},
                         {"toolsListChanged", true}}}},
                      42);
    EventReader stream(reply);
    QVERIFY(stream.waitFor(1));
    QVERIFY(stream.contentType().startsWith("text/event-stream"));
    // First the acknowledgement: what is honoured, tagged with the listen request's id.
    json ack = stream.events[0];
    JCOMPARE(ack["method"], "notifications/subscriptions/acknowledged");
    JCOMPARE(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 42);
    JCOMPARE(ack["params"]["notifications"],
             json({{"resourceSubscriptions", {"leasehold://status"}}}));
    QCOMPARE(s->front->mcp().subscriptions().listeners(), 1u);
    // A change of state: one update for the URI, tagged the same way.
    agent.tool("lock_acquire", {{"paths", {"src/a.ts"}}});
    agent.tool("lock_release");
    QVERIFY(stream.waitFor(2));
    json update = stream.events[1];
    JCOMPARE(update["method"], "notifications/resources/updated");
    JCOMPARE(update["params"]["uri"], "leasehold://status");
    JCOMPARE(update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 42);
    QVERIFY(!reply->isFinished()); // the stream stays open
    // Closing it ends the listener.
    reply->abort();
    reply->deleteLater();
    QTRY_COMPARE(s->front->mcp().subscriptions().listeners(), 0u);

    // Without an event stream there is nothing to listen on.
    HttpResult plain = watcher.rpc("subscriptions/listen", {{"notifications", json::object()}}, 43,
                                   {{"Accept", "application/json"}});
    QCOMPARE(plain.status, 400);
    JCOMPARE(plain.body["id"], 43);
}

QTEST_MAIN(TstMcpStreams)
#include "tst_mcpstreams.moc"

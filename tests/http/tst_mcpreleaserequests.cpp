// MCP: the holder of a lease hears of a release request on its next call as a
// notifications/message (level warning, data.type release_requested) ahead of the answer on
// the answer's event stream, once per request (again when it falls overdue), and sees it in
// lock_status.

#include "mcptest.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstMcpReleaseRequests : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void theHolderIsNotifiedOnItsNextCallAndSeesItInStatus();
    void aClientThatReadsNoStreamStillSeesItInStatus();

private:
    std::string raise(McpClient &holder, int deadlineSeconds = 0);
    std::unique_ptr<ServiceFixture> s;
};

void TstMcpReleaseRequests::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstMcpReleaseRequests::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

std::string TstMcpReleaseRequests::raise(McpClient &holder, int deadlineSeconds)
{
    if (holder.initialize().status != 200)
        return {};
    const json held = holder.tool("lock_acquire", {{"paths", {"lock:deploy/production"}}});
    if (held.value("isError", false) || !held.contains("structuredContent"))
        return {};
    if (s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status != 409)
        return {};
    json body = {{"resource", "lock:deploy/production"}, {"reason", "hotfix"}};
    if (deadlineSeconds > 0)
        body["deadlineSeconds"] = deadlineSeconds;
    return s->post("/release-request", body, kKeyB).body.value("requestId", std::string());
}

void TstMcpReleaseRequests::theHolderIsNotifiedOnItsNextCallAndSeesItInStatus()
{
    McpClient a(*s, kKeyA);
    const std::string id = raise(a, 60);
    QVERIFY(!id.empty());
    EventReader stream(
        a.start("tools/call", {{"name", "lock_status"}, {"arguments", json::object()}}, 7));
    QVERIFY(stream.waitForEnd());
    QVERIFY(stream.contentType().startsWith("text/event-stream"));
    QCOMPARE(stream.events.size(), std::size_t(2));
    const json &notice = stream.events[0];
    JCOMPARE(notice["method"], "notifications/message");
    JCOMPARE(notice["params"]["level"], "warning");
    JCOMPARE(notice["params"]["logger"], "leasehold");
    JCOMPARE(notice["params"]["data"]["type"], "release_requested");
    JCOMPARE(notice["params"]["data"]["requestId"], id);
    JCOMPARE(notice["params"]["data"]["requester"], "did:agent:b");
    QVERIFY(!notice.contains("id"));
    const json &answer = stream.events[1];
    JCOMPARE(answer["id"], 7);
    const json &status = answer["result"]["structuredContent"];
    JCOMPARE(status["releaseRequests"][0]["requestId"], id);
    JCOMPARE(status["releaseRequests"][0]["resource"], "lock:deploy/production");

    // Told once: the next call is a plain answer, still listing it in lock_status.
    const json again = a.tool("lock_status");
    JCOMPARE(again["structuredContent"]["releaseRequests"][0]["requestId"], id);

    // Overdue: told again.
    s->clock.advance(60'000);
    s->host->tick();
    EventReader late(
        a.start("tools/call", {{"name", "lock_status"}, {"arguments", json::object()}}, 8));
    QVERIFY(late.waitForEnd());
    QCOMPARE(late.events.size(), std::size_t(2));
    JCOMPARE(late.events[0]["params"]["data"]["overdue"], true);

    // Releasing answers it: lock_status lists nothing more.
    QVERIFY(!a.tool("lock_release").value("isError", false));
    QVERIFY(!a.tool("lock_status")["structuredContent"].contains("releaseRequests"));
}

void TstMcpReleaseRequests::aClientThatReadsNoStreamStillSeesItInStatus()
{
    McpClient a(*s, kKeyA);
    const std::string id = raise(a);
    QVERIFY(!id.empty());
    const HttpResult r = ServiceFixture::finish(
        a.start("tools/call", {{"name", "lock_status"}, {"arguments", json::object()}}, 3,
                {{"Accept", "application/json"}}));
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body["result"]["structuredContent"]["releaseRequests"][0]["requestId"], id);
}

QTEST_MAIN(TstMcpReleaseRequests)
#include "tst_mcpreleaserequests.moc"

// MCP 2026-07-28 beside the 2025 versions, over real loopback HTTP: requests without a session
// validated against their _meta and headers (standard and Mcp-Param-*), server/discover,
// removed methods, results with resultType, serverInfo and caching hints, and the agent without
// a session. tst_mcpstreams covers waits, progress, cancellation and subscriptions.

#include "mcprequestmeta.h"
#include "mcptest.h"

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

Q_DECLARE_METATYPE(leasehold::test::Headers)

namespace {

const char *kVersion = "io.modelcontextprotocol/protocolVersion";
const char *kCapabilities = "io.modelcontextprotocol/clientCapabilities";

bool mentions(json body, const std::string &text)
{
    return body["error"]["message"].get<std::string>().find(text) != std::string::npos;
}

} // namespace

class TstMcpModern : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void headerValues_data();
    void headerValues();
    void discoverAnswersWhatTheHandshakeDid();
    void metaIsRequired_data();
    void metaIsRequired();
    void headersMustMirrorTheBody_data();
    void headersMustMirrorTheBody();
    void removedAndUnknownMethodsAre404_data();
    void removedAndUnknownMethodsAre404();
    void resultsCarryTypeIdentityAndCachingHints();
    void getAndDeleteAre405();
    void theKeyIsTheAgentWithoutASession();
    void openModeNamesTheAgentPerRequest();

private:
    std::unique_ptr<ServiceFixture> s;
};

void TstMcpModern::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstMcpModern::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstMcpModern::headerValues_data()
{
    QTest::addColumn<QByteArray>("raw");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<QString>("value");
    QTest::newRow("plain") << QByteArray("lock_acquire") << true << "lock_acquire";
    QTest::newRow("optional whitespace")
        << QByteArray(" \tlock_acquire  ") << true << "lock_acquire";
    QTest::newRow("base64") << QByteArray("=?base64?SGVsbG8sIOS4lueVjA==?=") << true
                            << QString::fromUtf8("Hello, 世界");
    QTest::newRow("base64 of the sentinel itself")
        << QByteArray("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=") << true << "=?base64?literal?=";
    QTest::newRow("base64 with a bad character")
        << QByteArray("=?base64?SGV*bG8=?=") << false << "";
    QTest::newRow("base64 with bad padding") << QByteArray("=?base64?SGVsbG8?=") << false << "";
    QTest::newRow("a control character") << QByteArray("a\x01"
                                                       "b")
                                         << false << "";
    QTest::newRow("not ASCII") << QByteArray("caf\xc3\xa9") << false << "";
    QTest::newRow("sentinel markers are case-sensitive")
        << QByteArray("=?BASE64?SGk=?=") << true << "=?BASE64?SGk=?=";
}

void TstMcpModern::headerValues()
{
    QFETCH(QByteArray, raw);
    QFETCH(bool, valid);
    QFETCH(QString, value);
    std::string problem;
    const std::optional<std::string> decoded = mcpmeta::headerValue(raw, &problem);
    QCOMPARE(decoded.has_value(), valid);
    if (valid)
        QCOMPARE(QString::fromStdString(*decoded), value);
    else
        QVERIFY(!problem.empty());
}

void TstMcpModern::discoverAnswersWhatTheHandshakeDid()
{
    McpClient a(*s, kKeyA, true);
    HttpResult r = a.rpc("server/discover", json::object(), 7);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body["id"], 7);
    json &result = r.body["result"];
    JCOMPARE(result["supportedVersions"],
             json({"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
    for (const char *capability : {"tools", "resources", "prompts"})
        QVERIFY2(result["capabilities"].contains(capability), capability);
    QVERIFY(!result["capabilities"].contains("logging")); // deprecated; not offered in 2026
    QVERIFY(result["instructions"].get<std::string>().find("lock_acquire") != std::string::npos);
    JCOMPARE(result["resultType"], "complete");
    JCOMPARE(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "leasehold");
    JCOMPARE(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "test");
    JCOMPARE(result["ttlMs"], 300'000);
    JCOMPARE(result["cacheScope"], "public");
    QVERIFY(r.header("Mcp-Session-Id").isEmpty());
    QCOMPARE(s->front->mcp().sessions().size(), 0u); // nothing lingers after the answer
}

void TstMcpModern::metaIsRequired_data()
{
    QTest::addColumn<QByteArray>("params"); // JSON
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("names");
    QTest::newRow("no _meta") << QByteArray("{}") << 400 << "params._meta";
    QTest::newRow("_meta not an object") << QByteArray(R"({"_meta": []})") << 400 << "_meta";
    QTest::newRow("no protocolVersion")
        << QByteArray(R"({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}})") << 400
        << kVersion;
    QTest::newRow("protocolVersion not a string")
        << QByteArray(R"({"_meta": {"io.modelcontextprotocol/protocolVersion": 2026,
                                    "io.modelcontextprotocol/clientCapabilities": {}}})")
        << 400 << kVersion;
    QTest::newRow("no clientCapabilities")
        << QByteArray(R"({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})")
        << 400 << kCapabilities;
    QTest::newRow("clientCapabilities not an object")
        << QByteArray(R"({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                    "io.modelcontextprotocol/clientCapabilities": []}})")
        << 400 << kCapabilities;
    QTest::newRow("clientInfo not an object")
        << QByteArray(R"({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                    "io.modelcontextprotocol/clientCapabilities": {},
                                    "io.modelcontextprotocol/clientInfo": "me"}})")
        << 400 << "clientInfo";
    QTest::newRow("clientInfo is optional")
        << QByteArray(R"({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                    "io.modelcontextprotocol/clientCapabilities": {}}})")
        << 200 << "";
}

void TstMcpModern::metaIsRequired()
{
    QFETCH(QByteArray, params);
    QFETCH(int, status);
    QFETCH(QString, names);
    McpClient a(*s, kKeyA, true);
    // Sent as is: the client's own _meta is not added.
    HttpResult r = a.post({{"jsonrpc", "2.0"},
                           {"id", "m-1"},
                           {"method", "server/discover"},
                           {"params", json::parse(params.toStdString())}});
    QCOMPARE(r.status, status);
    JCOMPARE(r.body["id"], "m-1");
    if (status == 400) {
        JCOMPARE(r.body["error"]["code"], -32602);
        QVERIFY2(mentions(r.body, names.toStdString()), r.raw.constData());
    }
}

void TstMcpModern::headersMustMirrorTheBody_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<QByteArray>("params"); // JSON, _meta added
    QTest::addColumn<Headers>("headers");   // replacing the client's own
    QTest::addColumn<int>("status");
    QTest::addColumn<int>("code"); // 0: a result
    const QByteArray call = R"({"name": "lock_status", "arguments": {}})";
    const QByteArray read = R"({"uri": "leasehold://queue"})";
    QTest::newRow("as sent") << "tools/call" << call << Headers{} << 200 << 0;
    QTest::newRow("Mcp-Method differs") << "tools/list" << QByteArray("{}")
                                        << Headers{{"Mcp-Method", "prompts/list"}} << 400 << -32020;
    QTest::newRow("Mcp-Method missing") << "tools/list" << QByteArray("{}")
                                        << Headers{{"Mcp-Method", QByteArray()}} << 400 << -32020;
    QTest::newRow("Mcp-Method values are case-sensitive")
        << "tools/list" << QByteArray("{}") << Headers{{"Mcp-Method", "TOOLS/LIST"}} << 400
        << -32020;
    QTest::newRow("header names are not")
        << "tools/list" << QByteArray("{}")
        << Headers{{"Mcp-Method", QByteArray()}, {"MCP-METHOD", "tools/list"}} << 200 << 0;
    QTest::newRow("Mcp-Name differs")
        << "tools/call" << call << Headers{{"Mcp-Name", "lock_acquire"}} << 400 << -32020;
    QTest::newRow("Mcp-Name missing")
        << "tools/call" << call << Headers{{"Mcp-Name", QByteArray()}} << 400 << -32020;
    QTest::newRow("Mcp-Name with whitespace around it")
        << "tools/call" << call << Headers{{"Mcp-Name", "  lock_status \t"}} << 200 << 0;
    QTest::newRow("Mcp-Name in Base64")
        << "tools/call" << call << Headers{{"Mcp-Name", "=?base64?bG9ja19zdGF0dXM=?="}} << 200 << 0;
    QTest::newRow("Mcp-Name in broken Base64")
        << "tools/call" << call << Headers{{"Mcp-Name", "=?base64?bG9ja19zdGF0dXM?="}} << 400
        << -32020;
    QTest::newRow("Mcp-Name of resources/read is the uri")
        << "resources/read" << read << Headers{{"Mcp-Name", "leasehold://status"}} << 400 << -32020;
    QTest::newRow("MCP-Protocol-Version missing")
        << "tools/list" << QByteArray("{}") << Headers{{"MCP-Protocol-Version", QByteArray()}}
        << 400 << -32020;
    QTest::newRow("MCP-Protocol-Version differs from _meta")
        << "tools/list" << QByteArray(R"({"_meta": {"io.modelcontextprotocol/protocolVersion":
                                                      "v999.0.0"}})")
        << Headers{} << 400 << -32020;
    const QByteArray wait =
        R"({"name": "coordination_wait", "arguments": {"resource": "src/a.ts"}})";
    const QByteArray waitAll = R"({"name": "coordination_wait", "arguments": {}})";
    QTest::newRow("Mcp-Param-Resource mirrors the argument")
        << "tools/call" << wait << Headers{{"Mcp-Param-Resource", "src/a.ts"}} << 200 << 0;
    QTest::newRow("Mcp-Param-Resource in Base64")
        << "tools/call" << wait << Headers{{"Mcp-Param-Resource", "=?base64?c3JjL2EudHM=?="}} << 200
        << 0;
    QTest::newRow("Mcp-Param-Resource missing")
        << "tools/call" << wait << Headers{} << 400 << -32020;
    QTest::newRow("Mcp-Param-Resource differs")
        << "tools/call" << wait << Headers{{"Mcp-Param-Resource", "src/b.ts"}} << 400 << -32020;
    QTest::newRow("Mcp-Param-Resource in broken Base64")
        << "tools/call" << wait << Headers{{"Mcp-Param-Resource", "=?base64?c3JjL2EudHM?="}} << 400
        << -32020;
    QTest::newRow("Mcp-Param-Resource without the argument")
        << "tools/call" << waitAll << Headers{{"Mcp-Param-Resource", "src/a.ts"}} << 400 << -32020;
    QTest::newRow("no argument, no header") << "tools/call" << waitAll << Headers{} << 200 << 0;
    QTest::newRow("a version nobody speaks")
        << "tools/list" << QByteArray(R"({"_meta": {"io.modelcontextprotocol/protocolVersion":
                                                      "v999.0.0"}})")
        << Headers{{"MCP-Protocol-Version", "v999.0.0"}} << 400 << -32022;
}

void TstMcpModern::headersMustMirrorTheBody()
{
    QFETCH(QString, method);
    QFETCH(QByteArray, params);
    QFETCH(Headers, headers);
    QFETCH(int, status);
    QFETCH(int, code);
    McpClient a(*s, kKeyA, true);
    HttpResult r = a.rpc(method.toStdString(), json::parse(params.toStdString()), 31, headers);
    QVERIFY2(r.status == status, r.raw.constData());
    JCOMPARE(r.body["id"], 31);
    if (code == 0) {
        QVERIFY2(r.body.contains("result"), r.raw.constData());
        return;
    }
    JCOMPARE(r.body["error"]["code"], code);
    if (code == -32022) {
        JCOMPARE(r.body["error"]["data"]["requested"], "v999.0.0");
        JCOMPARE(r.body["error"]["data"]["supported"][0], "2026-07-28");
    }
}

void TstMcpModern::removedAndUnknownMethodsAre404_data()
{
    QTest::addColumn<QString>("method");
    for (const char *removed : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                                "resources/unsubscribe", "unknown/method"})
        QTest::newRow(removed) << removed;
}

void TstMcpModern::removedAndUnknownMethodsAre404()
{
    QFETCH(QString, method);
    McpClient a(*s, kKeyA, true);
    HttpResult r = a.rpc(method.toStdString(), json::object(), 500);
    QCOMPARE(r.status, 404);
    JCOMPARE(r.body["error"]["code"], -32601);
    JCOMPARE(r.body["id"], 500);
    QCOMPARE(s->front->mcp().sessions().size(), 0u); // initialize opened nothing
}

void TstMcpModern::resultsCarryTypeIdentityAndCachingHints()
{
    McpClient a(*s, kKeyA, true);
    for (const char *list :
         {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}) {
        json result = a.rpc(list).body["result"];
        JCOMPARE(result["resultType"], "complete");
        JCOMPARE(result["ttlMs"], 300'000);
        JCOMPARE(result["cacheScope"], "public");
        JCOMPARE(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "leasehold");
    }
    McpClient legacy(*s, kKeyB);
    QCOMPARE(legacy.initialize().status, 200);
    // The same catalogue in both eras, in the same order; 2026 marks the parameters a gateway
    // may route on (x-mcp-header: the client mirrors them into Mcp-Param-* headers).
    json modernTools = a.rpc("tools/list").body["result"]["tools"];
    int marked = 0;
    for (json &tool : modernTools)
        for (auto &[name, property] : tool["inputSchema"]["properties"].items())
            if (property.contains("x-mcp-header")) {
                JCOMPARE(property["x-mcp-header"], "Resource");
                JCOMPARE(name, "resource");
                property.erase("x-mcp-header");
                ++marked;
            }
    QCOMPARE(marked, 3); // coordination_lease_acquire, _release, coordination_wait
    JCOMPARE(modernTools, legacy.rpc("tools/list").body["result"]["tools"]);

    json read = a.rpc("resources/read", {{"uri", "leasehold://status"}}).body["result"];
    JCOMPARE(read["resultType"], "complete");
    JCOMPARE(read["ttlMs"], 0);
    JCOMPARE(read["cacheScope"], "private");
    QVERIFY(json::parse(read["contents"][0]["text"].get<std::string>()).contains("leases"));

    // SEP-2164: a resource that does not exist is -32602 naming the URI (2025: -32002).
    HttpResult missing = a.rpc("resources/read", {{"uri", "test://nothing"}}, 9);
    JCOMPARE(missing.body["error"]["code"], -32602);
    JCOMPARE(missing.body["error"]["data"]["uri"], "test://nothing");
    JCOMPARE(missing.body["id"], 9);

    json called = a.tool("lock_status");
    JCOMPARE(called["resultType"], "complete");
    JCOMPARE(called["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "leasehold");
    JCOMPARE(called["structuredContent"]["ok"], true);
    QVERIFY(!called.contains("ttlMs")); // a tool result is not cacheable
}

void TstMcpModern::getAndDeleteAre405()
{
    McpClient a(*s, kKeyA, true);
    for (const char *method : {"GET", "DELETE"}) {
        HttpResult r = ServiceFixture::finish(a.send(method, {}));
        QCOMPARE(r.status, 405);
        QVERIFY(r.header("Allow").contains("POST"));
    }
}

void TstMcpModern::theKeyIsTheAgentWithoutASession()
{
    AgentPresence &presence = s->front->presence();
    McpClient a(*s, kKeyA, true);
    json granted = a.tool("lock_acquire", {{"paths", {"src/a.ts"}}, {"wait", 0}});
    JCOMPARE(granted["structuredContent"]["leases"][0]["holder"], "did:agent:a");
    QCOMPARE(s->front->mcp().sessions().size(), 0u);
    QCOMPARE(presence.liveAgents(), 1); // live by its last call
    // It may name itself, and no one else.
    QCOMPARE(a.rpc("tools/list", json::object(), 1, {{"X-Agent-Id", "did:agent:a"}}).status, 200);
    HttpResult other = a.rpc("tools/list", json::object(), 2, {{"X-Agent-Id", "did:agent:b"}});
    QCOMPARE(other.status, 403);
    JCOMPARE(other.body["id"], 2);
    JCOMPARE(a.tool("lock_status")["structuredContent"]["held"][0]["resource"], "fs:src/a.ts");
    // A key is required unless the server is open.
    McpClient nobody(*s, {}, true);
    QCOMPARE(nobody.rpc("tools/list").status, 401);

    // Liveness is the last call: it lapses after the window without a session to end.
    s->clock.advance(s->front->mcp().sessions().liveWindowMs());
    presence.sweep();
    QCOMPARE(presence.liveAgents(), 0);
    QCOMPARE(a.rpc("tools/list").status, 200);
    QCOMPARE(presence.liveAgents(), 1);
}

void TstMcpModern::openModeNamesTheAgentPerRequest()
{
    s = std::make_unique<ServiceFixture>(true);
    McpClient anyone(*s, {}, true);
    json named = anyone.tool("lock_acquire", {{"paths", {"x"}}, {"actorDid", "did:agent:n"}});
    JCOMPARE(named["structuredContent"]["leases"][0]["holder"], "did:agent:n");
    // Nothing carries over from one request to the next: the next call names itself again.
    JCOMPARE(anyone.tool("lock_release")["structuredContent"]["reason"], "invalid");
    HttpResult viaHeader =
        anyone.rpc("tools/call", {{"name", "lock_release"}, {"arguments", json::object()}}, 3,
                   {{"X-Agent-Id", "did:agent:n"}});
    JCOMPARE(viaHeader.body["result"]["structuredContent"]["released"].size(), 1);
    QCOMPARE(s->front->presence().liveAgents(), 1);
}

QTEST_MAIN(TstMcpModern)
#include "tst_mcpmodern.moc"

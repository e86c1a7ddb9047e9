// MCP transport and lifecycle over real loopback HTTP: version negotiation, sessions, headers,
// Origin/Host checks, JSON-RPC error codes, batches, resources and prompts, liveness.

#include "mcptest.h"

#include <QRegularExpression>
#include <QSignalSpy>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstMcpProtocol : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void initializeNegotiatesTheVersion_data();
    void initializeNegotiatesTheVersion();
    void sessionsAreRequiredAndEndWithDelete();
    void sessionBelongsToItsKey();
    void getHasNoStreamAndAnswers405();
    void notificationsAreAccepted();
    void protocolVersionHeader_data();
    void protocolVersionHeader();
    void originAndHostMustBeLocal_data();
    void originAndHostMustBeLocal();
    void authAndMediaType();
    void jsonRpcErrorCodes();
    void batchesOnlyFor2025_03_26();
    void resourcesAndPrompts();
    void liveAgentsFollowSessions();

private:
    std::unique_ptr<ServiceFixture> s;
};

void TstMcpProtocol::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
}

void TstMcpProtocol::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
}

void TstMcpProtocol::initializeNegotiatesTheVersion_data()
{
    QTest::addColumn<QString>("asked");
    QTest::addColumn<QString>("answered");
    QTest::newRow("2025-11-25") << "2025-11-25"
                                << "2025-11-25";
    QTest::newRow("2025-06-18") << "2025-06-18"
                                << "2025-06-18";
    QTest::newRow("2025-03-26") << "2025-03-26"
                                << "2025-03-26";
    QTest::newRow("2026-07-28 has no handshake: newest legacy") << "2026-07-28"
                                                                << "2025-11-25";
    QTest::newRow("older: newest offered") << "2024-11-05"
                                           << "2025-11-25";
    QTest::newRow("nonsense: newest offered") << "v9"
                                              << "2025-11-25";
}

void TstMcpProtocol::initializeNegotiatesTheVersion()
{
    QFETCH(QString, asked);
    QFETCH(QString, answered);
    McpClient a(*s, kKeyA);
    const HttpResult r = a.initialize(asked.toStdString());
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("Content-Type").startsWith("application/json"));
    JCOMPARE(r.body["result"]["protocolVersion"], answered.toStdString());
    JCOMPARE(r.body["result"]["serverInfo"]["name"], "leasehold");
    JCOMPARE(r.body["result"]["serverInfo"]["version"], "test");
    for (const char *capability : {"tools", "logging", "resources", "prompts"})
        QVERIFY2(r.body["result"]["capabilities"].contains(capability), capability);
    QVERIFY(r.body["result"]["instructions"].get<std::string>().find("lock_acquire") !=
            std::string::npos);
    QVERIFY(QRegularExpression(QStringLiteral("^[0-9a-f]{64}$"))
                .match(QString::fromLatin1(a.session))
                .hasMatch());
    McpClient again(*s, kKeyA);
    again.initialize(asked.toStdString());
    QVERIFY(again.session != a.session);
}

void TstMcpProtocol::sessionsAreRequiredAndEndWithDelete()
{
    McpClient a(*s, kKeyA);
    HttpResult r = a.rpc("ping", json::object(), 41);
    QCOMPARE(r.status, 400);
    JCOMPARE(r.body["error"]["code"], -32000);
    JCOMPARE(r.body["jsonrpc"], "2.0");
    JCOMPARE(r.body["id"], 41); // an error answers the request's own id

    a.session = "0123456789abcdef";
    r = a.rpc("ping", json::object(), 42);
    QCOMPARE(r.status, 404);
    JCOMPARE(r.body["error"]["code"], -32001);
    JCOMPARE(r.body["id"], 42);
    // Only when the id cannot be known is it null: a body that is not JSON.
    r = ServiceFixture::finish(a.send("POST", "{not json"));
    QCOMPARE(r.status, 400);
    JCOMPARE(r.body["id"], nullptr);

    QCOMPARE(a.initialize().status, 200);
    QCOMPARE(a.rpc("ping").status, 200);
    QCOMPARE(s->front->mcp().sessions().size(), 1u);
    QCOMPARE(ServiceFixture::finish(a.send("DELETE", {})).status, 204);
    QCOMPARE(s->front->mcp().sessions().size(), 0u);
    QCOMPARE(a.rpc("ping").status, 404);
    QCOMPARE(ServiceFixture::finish(a.send("DELETE", {})).status, 404);
    a.session.clear();
    QCOMPARE(ServiceFixture::finish(a.send("DELETE", {})).status, 400);
}

void TstMcpProtocol::sessionBelongsToItsKey()
{
    McpClient a(*s, kKeyA);
    QCOMPARE(a.initialize().status, 200);
    McpClient thief(*s, kKeyB);
    thief.session = a.session;
    const HttpResult r = thief.rpc("ping");
    QCOMPARE(r.status, 403);
    JCOMPARE(r.body["error"]["code"], -32000);
    QCOMPARE(ServiceFixture::finish(thief.send("DELETE", {})).status, 403);
    QCOMPARE(a.rpc("ping").status, 200); // still a's
}

void TstMcpProtocol::getHasNoStreamAndAnswers405()
{
    McpClient a(*s, kKeyA);
    QCOMPARE(a.initialize().status, 200);
    for (const QByteArray method : {"GET", "PUT", "PATCH"}) {
        const HttpResult r = ServiceFixture::finish(a.send(method, {}));
        QCOMPARE(r.status, 405);
        QCOMPARE(r.header("Allow"), QByteArray("POST, DELETE"));
        JCOMPARE(r.body["error"]["code"], -32000);
    }
}

void TstMcpProtocol::notificationsAreAccepted()
{
    McpClient a(*s, kKeyA);
    QCOMPARE(a.initialize().status, 200);
    for (const char *method : {"notifications/initialized", "notifications/cancelled",
                               "notifications/roots/list_changed"}) {
        const HttpResult r = a.post({{"jsonrpc", "2.0"}, {"method", method}});
        QCOMPARE(r.status, 202);
        QVERIFY(r.raw.isEmpty());
    }
    // A client's answer to a server request is accepted the same way.
    QCOMPARE(a.post({{"jsonrpc", "2.0"}, {"id", 9}, {"result", json::object()}}).status, 202);
}

void TstMcpProtocol::protocolVersionHeader_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<int>("status");
    QTest::newRow("negotiated") << QByteArray("2025-11-25") << 200;
    QTest::newRow("older supported") << QByteArray("2025-06-18") << 200;
    QTest::newRow("2025-03-26 after newer") << QByteArray("2025-03-26") << 200;
    QTest::newRow("absent") << QByteArray() << 200;
    QTest::newRow("unknown") << QByteArray("2099-01-01") << 400;
    QTest::newRow("garbage") << QByteArray("latest") << 400;
}

void TstMcpProtocol::protocolVersionHeader()
{
    QFETCH(QByteArray, header);
    QFETCH(int, status);
    McpClient a(*s, kKeyA);
    QCOMPARE(a.initialize().status, 200);
    a.version = header;
    const HttpResult r = a.rpc("ping");
    QCOMPARE(r.status, status);
    if (status == 400) { // UnsupportedProtocolVersionError, in both eras
        JCOMPARE(r.body["error"]["code"], -32022);
        JCOMPARE(r.body["error"]["data"]["requested"], header.toStdString());
        JCOMPARE(r.body["error"]["data"]["supported"],
                 json({"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
        JCOMPARE(r.body["id"], 1);
    }
}

void TstMcpProtocol::originAndHostMustBeLocal_data()
{
    const QByteArray port = QByteArray::number(7878);
    QTest::addColumn<QByteArray>("headers");
    QTest::addColumn<int>("status");
    QTest::newRow("no origin, loopback host") << QByteArray("Host: 127.0.0.1:7878\r\n") << 200;
    QTest::newRow("localhost origin")
        << QByteArray("Host: localhost:7878\r\nOrigin: http://localhost:7878\r\n") << 200;
    QTest::newRow("ipv6 loopback")
        << QByteArray("Host: [::1]:7878\r\nOrigin: http://[::1]\r\n") << 200;
    QTest::newRow("foreign origin")
        << QByteArray("Host: 127.0.0.1:7878\r\nOrigin: http://evil.example.com\r\n") << 403;
    QTest::newRow("rebinding host") << QByteArray("Host: evil.example.com:7878\r\n") << 403;
    QTest::newRow("both foreign")
        << QByteArray("Host: evil.example.com\r\nOrigin: http://evil.example.com\r\n") << 403;
    QTest::newRow("null origin") << QByteArray("Host: 127.0.0.1\r\nOrigin: null\r\n") << 403;
    QTest::newRow("lookalike") << QByteArray("Host: localhost.evil.com\r\n") << 403;
}

void TstMcpProtocol::originAndHostMustBeLocal()
{
    QFETCH(QByteArray, headers);
    QFETCH(int, status);
    const QByteArray body =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})";
    QCOMPARE(rawStatus(s->port, rawPost(headers + "Authorization: Bearer " + kKeyA + "\r\n", body)),
             status);
}

void TstMcpProtocol::authAndMediaType()
{
    McpClient nobody(*s, {});
    HttpResult r = nobody.initialize();
    QCOMPARE(r.status, 401);
    QVERIFY(r.header("WWW-Authenticate").startsWith("Bearer"));
    JCOMPARE(r.body["error"]["code"], -32000);
    McpClient stranger(*s, "no-such-key-0123456789");
    QCOMPARE(stranger.initialize().status, 401);

    McpClient a(*s, kKeyA);
    QCOMPARE(a.initialize().status, 200);
    r = a.post({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}},
               {{"Content-Type", "text/plain"}});
    QCOMPARE(r.status, 415);
    r = a.post({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}, {{"Accept", "text/html"}});
    QCOMPARE(r.status, 406);
    r = a.post({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}, {{"Accept", "*/*"}});
    QCOMPARE(r.status, 200);
}

void TstMcpProtocol::jsonRpcErrorCodes()
{
    McpClient a(*s, kKeyA);
    QCOMPARE(a.initialize().status, 200);
    HttpResult r = a.rpc("ping", json::object(), 41);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body, json({{"jsonrpc", "2.0"}, {"id", 41}, {"result", json::object()}}));
    JCOMPARE(a.rpc("logging/setLevel", {{"level", "debug"}}).body["result"], json::object());
    JCOMPARE(a.rpc("logging/setLevel", {{"level", "loud"}}).body["error"]["code"], -32602);
    JCOMPARE(a.rpc("no/such/method").body["error"]["code"], -32601);
    JCOMPARE(a.rpc("tools/call", {{"arguments", json::object()}}).body["error"]["code"], -32602);
    JCOMPARE(a.rpc("tools/call", {{"name", "rm_rf"}}).body["error"]["code"], -32602);
    JCOMPARE(a.rpc("tools/call", {{"name", "lock_status"}, {"arguments", json::array()}})
                 .body["error"]["code"],
             -32602);
    JCOMPARE(a.post({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}, {"params", json::array()}})
                 .body["error"]["code"],
             -32602);
    JCOMPARE(a.post({{"jsonrpc", "2.0"}, {"id", "s-1"}, {"method", "ping"}}).body["id"], "s-1");

    const HttpResult parse = ServiceFixture::finish(a.send("POST", "{\"jsonrpc\":"));
    QCOMPARE(parse.status, 400);
    JCOMPARE(parse.body["error"]["code"], -32700);
    const HttpResult deep = ServiceFixture::finish(a.send("POST", QByteArray(100, '[')));
    QCOMPARE(deep.status, 400);
    JCOMPARE(deep.body["error"]["code"], -32700);
    for (const json &bad : {json({{"jsonrpc", "1.0"}, {"id", 1}, {"method", "ping"}}),
                            json({{"jsonrpc", "2.0"}, {"id", 1.5}, {"method", "ping"}}),
                            json({{"jsonrpc", "2.0"}, {"id", 1}, {"method", 7}}), json("ping"),
                            json({{"jsonrpc", "2.0"}, {"id", 1}})}) {
        const HttpResult invalid = a.post(bad);
        QVERIFY2(invalid.status == 400, bad.dump().c_str());
        JCOMPARE(invalid.body["error"]["code"], -32600);
    }
    // initialize always opens a new session, even when sent from inside one.
    JCOMPARE(a.rpc("initialize", {{"protocolVersion", "2025-11-25"}}, 3)
                 .body["result"]["protocolVersion"],
             "2025-11-25");
}

void TstMcpProtocol::batchesOnlyFor2025_03_26()
{
    const json batch = json::array({{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}},
                                    {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                                    {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "nope"}}});
    McpClient modern(*s, kKeyA);
    QCOMPARE(modern.initialize("2025-11-25").status, 200);
    HttpResult r = modern.post(batch);
    QCOMPARE(r.status, 400);
    JCOMPARE(r.body["error"]["code"], -32600);

    McpClient old(*s, kKeyA);
    QCOMPARE(old.initialize("2025-03-26").status, 200);
    r = old.post(batch);
    QCOMPARE(r.status, 200);
    QVERIFY(r.body.is_array());
    QCOMPARE(r.body.size(), 2u); // the notification gets no answer
    JCOMPARE(r.body[0]["result"], json::object());
    JCOMPARE(r.body[1]["error"]["code"], -32601);
    QCOMPARE(old.post(json::array()).status, 400);
    r = old.post(json::array({{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}}));
    QCOMPARE(r.status, 202);
}

void TstMcpProtocol::resourcesAndPrompts()
{
    McpClient a(*s, kKeyA);
    QCOMPARE(a.initialize().status, 200);
    a.tool("lock_acquire", {{"paths", {"src/a.cpp"}}});
    const json listed = a.rpc("resources/list").body["result"]["resources"];
    QCOMPARE(listed.size(), 2u);
    const json status = a.rpc("resources/read", {{"uri", "leasehold://status"}}).body["result"];
    JCOMPARE(status["contents"][0]["mimeType"], "application/json");
    const json snapshot = json::parse(status["contents"][0]["text"].get<std::string>());
    JCOMPARE(snapshot["leases"][0]["resource"], "fs:src/a.cpp");
    const json queue = a.rpc("resources/read", {{"uri", "leasehold://queue"}}).body["result"];
    QVERIFY(json::parse(queue["contents"][0]["text"].get<std::string>()).contains("deadlocks"));
    JCOMPARE(a.rpc("resources/read", {{"uri", "file:///etc/passwd"}}).body["error"]["code"],
             -32002);
    JCOMPARE(a.rpc("resources/templates/list").body["result"]["resourceTemplates"], json::array());

    JCOMPARE(a.rpc("prompts/list").body["result"]["prompts"][0]["name"], "coordinate");
    const json prompt = a.rpc("prompts/get", {{"name", "coordinate"}}).body["result"];
    QVERIFY(prompt["messages"][0]["content"]["text"].get<std::string>().find("lock_release") !=
            std::string::npos);
    JCOMPARE(a.rpc("prompts/get", {{"name", "nope"}}).body["error"]["code"], -32602);
}

void TstMcpProtocol::liveAgentsFollowSessions()
{
    McpSessions &sessions = s->front->mcp().sessions();
    QSignalSpy changes(&sessions.presence(), &AgentPresence::liveAgentsChanged);
    McpClient a(*s, kKeyA);
    McpClient a2(*s, kKeyA);
    McpClient b(*s, kKeyB);
    QCOMPARE(a.initialize().status, 200);
    QCOMPARE(a2.initialize().status, 200);
    QCOMPARE(sessions.liveAgents(), 1); // one agent, two sessions
    QCOMPARE(b.initialize().status, 200);
    QCOMPARE(sessions.liveAgents(), 2);
    auto agent = [&](const std::string &did) {
        for (const AgentInfo &info : s->host->engine().snapshot().agents)
            if (info.actorDid == did)
                return info;
        return AgentInfo{};
    };
    QCOMPARE(agent("did:agent:a").liveSessions, 2);

    s->clock.advance(sessions.liveWindowMs() - 1);
    QCOMPARE(a.rpc("ping").status, 200); // a is seen again; b and a2 are not
    s->clock.advance(1);
    sessions.sweep();
    QCOMPARE(sessions.liveAgents(), 1);
    QCOMPARE(agent("did:agent:a").liveSessions, 1);
    QCOMPARE(agent("did:agent:b").liveSessions, 0);
    QCOMPARE(b.rpc("ping").status, 200); // a lapsed session is still valid, and live again
    QCOMPARE(sessions.liveAgents(), 2);
    QCOMPARE(ServiceFixture::finish(b.send("DELETE", {})).status, 204);
    QCOMPARE(sessions.liveAgents(), 1);
    QList<int> seen;
    for (const QList<QVariant> &args : changes)
        seen << args.at(0).toInt();
    QCOMPARE(seen, (QList<int>{1, 2, 1, 2, 1}));
    const QByteArray metrics = s->get(QStringLiteral("/metrics")).raw;
    QVERIFY(metrics.contains("\nleasehold_live_agents 1\n"));
    QVERIFY(metrics.contains("\nleasehold_mcp_sessions 2\n"));
}

QTEST_MAIN(TstMcpProtocol)
#include "tst_mcpprotocol.moc"

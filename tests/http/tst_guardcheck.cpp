// POST /check, the guard's question, and who counts as live: agents on any surface (REST,
// guard, hook, git, MCP) within the live window, over real sockets and a manual clock.

#include "ledgerjson.h"
#include "mcptest.h"

#include <QSignalSpy>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstGuardCheck : public QObject
{
    Q_OBJECT

private slots:
    void init() { s = std::make_unique<ServiceFixture>(); }
    void cleanup() { s.reset(); }

    void anotherAgentsLeaseRefusesNamingTheHolder();
    void coveredChangesArePinnedOnRequest();
    void strictWhenAnotherAgentIsLiveOnAnySurface();
    void surfacesLapseAfterTheWindow();
    void badInputNamesTheField();

private:
    HttpResult check(const json &body, const QByteArray &key, const QByteArray &via = {})
    {
        QNetworkRequest request(s->url(QString(RestApi::kBase) + QStringLiteral("/check")));
        request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
        request.setRawHeader("Authorization", "Bearer " + key);
        if (!via.isEmpty())
            request.setRawHeader("X-Leasehold-Via", via);
        return ServiceFixture::finish(s->net.post(request, QByteArray::fromStdString(body.dump())));
    }
    AgentInfo agent(const std::string &did)
    {
        for (const AgentInfo &a : s->host->engine().snapshot().agents)
            if (a.actorDid == did)
                return a;
        return {};
    }

    std::unique_ptr<ServiceFixture> s;
};

void TstGuardCheck::anotherAgentsLeaseRefusesNamingTheHolder()
{
    QCOMPARE(s->post("/lease", {{"resource", "src"}, {"ttlMs", 60'000}}, kKeyA).status, 200);
    s->clock.advance(4'000);
    const HttpResult no = check({{"resources", {"src/app.cpp"}}, {"wording", "lock"}}, kKeyB);
    QCOMPARE(no.status, 409);
    JCOMPARE(no.body["reason"], "lease_held");
    JCOMPARE(no.body["holder"], "did:agent:a");
    JCOMPARE(no.body["resource"], "fs:src/app.cpp");
    JCOMPARE(no.body["heldResource"], "fs:src");
    JCOMPARE(no.body["heldForMs"], 4'000);
    const std::string message = no.body["message"];
    QVERIFY2(message.find("fs:src/app.cpp is held by did:agent:a through fs:src") == 0,
             message.c_str());
    QVERIFY2(message.find("call lock_acquire again") != std::string::npos, message.c_str());
    // The refusal is in the ledger and the counters, as the change the guard asked about.
    const HttpResult named = check({{"resource", "src/b.cpp"}, {"op", "write_file"}}, kKeyB);
    QCOMPARE(named.status, 409);
    const std::vector<LedgerEvent> events = s->host->ledger(0, 1000);
    QVERIFY(!events.empty());
    const LedgerEvent &refused = events.back();
    QCOMPARE(refused.kind, EventKind::Refused);
    QCOMPARE(refused.actorDid, std::string("did:agent:b"));
    QCOMPARE(refused.resource, std::string("fs:src/b.cpp"));
    QCOMPARE(refused.facts.op, std::string("write_file"));
    QCOMPARE(refused.facts.holder, std::string("did:agent:a"));
    QCOMPARE(refused.facts.via, std::string());
    QCOMPARE(refused.facts.pid, -1);
    QCOMPARE(s->host->engine().snapshot().counters.refusals[size_t(RefusalReason::LeaseHeld)], 2u);
    // The filesystem gate says which process tried, and the ledger keeps it.
    QCOMPARE(check({{"resource", "src/b.cpp"}, {"op", "rename"}, {"pid", 4242}, {"command", "sed"}},
                   kKeyB, "fs")
                 .status,
             409);
    const LedgerEvent gate = s->host->ledger(0, 1000).back();
    QCOMPARE(gate.facts.op, std::string("rename"));
    QCOMPARE(gate.facts.via, std::string("fs"));
    QCOMPARE(gate.facts.pid, 4242);
    QCOMPARE(gate.facts.command, std::string("sed"));
    const json asJson = toJson(gate);
    JCOMPARE(asJson["via"], "fs");
    JCOMPARE(asJson["pid"], 4242);
    JCOMPARE(asJson["command"], "sed");
    // The holder itself is not refused, and a check that passes takes and records nothing.
    const std::uint64_t seq = s->host->engine().snapshot().lastSeq;
    const HttpResult passed = check({{"resource", "src/app.cpp"}}, kKeyA);
    QCOMPARE(passed.status, 200);
    JCOMPARE(passed.body["actorDid"], "did:agent:a"); // a guard learns whom its key names
    QCOMPARE(s->host->engine().snapshot().lastSeq, seq);
    QCOMPARE(s->host->engine().snapshot().leases.size(), 1u);
    // Reads share with reads, not with a write.
    QCOMPARE(s->post("/lease", {{"resource", "docs"}, {"mode", "read"}}, kKeyA).status, 200);
    QCOMPARE(check({{"resource", "docs/a.md"}, {"mode", "read"}}, kKeyB).status, 200);
    QCOMPARE(check({{"resource", "docs/a.md"}}, kKeyB).status, 409);
}

void TstGuardCheck::coveredChangesArePinnedOnRequest()
{
    const HttpResult lease = s->post("/lease", {{"resource", "src"}, {"ttlMs", 60'000}}, kKeyA);
    const std::string leaseId = lease.body["lease"]["leaseId"];
    const HttpResult ok =
        check({{"resources", {"src/a.cpp", "src/b.cpp", "README.md"}}, {"pin", true}}, kKeyA);
    QCOMPARE(ok.status, 200);
    JCOMPARE(ok.body["covered"],
             json::array({{{"resource", "fs:src/a.cpp"}, {"leaseId", leaseId}},
                          {{"resource", "fs:src/b.cpp"}, {"leaseId", leaseId}}}));
    JCOMPARE(ok.body["uncovered"], json::array({"fs:README.md"}));
    QCOMPARE(ok.body["pins"].size(), 1u); // one pin per covering lease
    JCOMPARE(ok.body["pins"][0]["leaseId"], leaseId);
    // While pinned, a release waits for the pin: the change lands under the lease.
    QCOMPARE(s->post("/release", {{"resource", "src"}}, kKeyA).status, 200);
    QCOMPARE(s->host->engine().snapshot().leases.size(), 1u);
    QCOMPARE(s->post("/unpin", {{"pinId", ok.body["pins"][0]["pinId"]}}, kKeyA).status, 200);
    QCOMPARE(s->host->engine().snapshot().leases.size(), 0u);
    // Without `pin`, nothing is pinned.
    QCOMPARE(s->post("/lease", {{"resource", "src"}}, kKeyA).status, 200);
    JCOMPARE(check({{"resource", "src/a.cpp"}}, kKeyA).body["pins"], json::array());
}

void TstGuardCheck::strictWhenAnotherAgentIsLiveOnAnySurface()
{
    QSignalSpy changes(&s->front->presence(), &AgentPresence::liveAgentsChanged);
    const HttpResult solo = check({{"resource", "src/a.cpp"}}, kKeyA, "guard");
    JCOMPARE(solo.body["liveAgents"], 1);
    JCOMPARE(solo.body["strict"], false);
    // b speaks only through a hook: it counts as much as an MCP session does.
    QCOMPARE(check({{"resource", "lib/x.cpp"}}, kKeyB, "hook").status, 200);
    const HttpResult both = check({{"resource", "src/a.cpp"}}, kKeyA, "guard");
    JCOMPARE(both.body["liveAgents"], 2);
    JCOMPARE(both.body["strict"], true);
    QCOMPARE(int(agent("did:agent:a").via), int(Via::Guard));
    QCOMPARE(int(agent("did:agent:b").via), int(Via::Hook));
    // A plain REST call adds the REST surface; an unknown name is plain REST.
    QCOMPARE(s->post("/lease", {{"resource", "lock:x"}}, kKeyB).status, 200);
    QCOMPARE(int(agent("did:agent:b").via), int(Via::Hook) | int(Via::Rest));
    QCOMPARE(check({{"resource", "y"}}, kKeyA, "mcp").status, 200); // not a client's to claim
    QCOMPARE(int(agent("did:agent:a").via), int(Via::Guard) | int(Via::Rest));
    const json status = s->get(QString(RestApi::kBase) + "/status", kKeyA).body;
    json viaOfB;
    for (const json &a : status["agents"])
        if (a["actorDid"] == "did:agent:b")
            viaOfB = a["via"];
    JCOMPARE(viaOfB, json::array({"rest", "hook"}));
    QCOMPARE(changes.size(), 2); // 1, then 2
}

void TstGuardCheck::surfacesLapseAfterTheWindow()
{
    AgentPresence &presence = s->front->presence();
    QCOMPARE(check({{"resource", "a"}}, kKeyA, "hook").status, 200);
    s->clock.advance(presence.windowMs() / 2);
    QCOMPARE(check({{"resource", "b"}}, kKeyB, "git").status, 200);
    QCOMPARE(presence.liveAgents(), 2);
    s->clock.advance(presence.windowMs() / 2 - 1);
    presence.sweep();
    QCOMPARE(presence.liveAgents(), 2); // a's window has not quite passed
    s->clock.advance(1);
    presence.sweep();
    QCOMPARE(presence.liveAgents(), 1);
    QVERIFY(!presence.live("did:agent:a"));
    QCOMPARE(int(agent("did:agent:a").via), 0);
    QCOMPARE(int(agent("did:agent:b").via), int(Via::Git));
    // Calls within a second of each other do not move the window (it is exact to the second);
    // a later one does.
    s->clock.advance(presence.windowMs() / 2 - 10);
    QCOMPARE(check({{"resource", "b"}}, kKeyB, "git").status, 200); // stamped: T + window
    s->clock.advance(500);
    QCOMPARE(check({{"resource", "b"}}, kKeyB, "git").status, 200); // not stamped again
    s->clock.advance(presence.windowMs() - 500);
    presence.sweep();
    QCOMPARE(presence.liveAgents(), 0);
    JCOMPARE(check({{"resource", "a"}}, kKeyA).body["liveAgents"], 1);
}

void TstGuardCheck::badInputNamesTheField()
{
    const auto error = [&](const json &body) {
        const HttpResult r = check(body, kKeyA);
        return r.status == 400 ? r.body["error"].get<std::string>() : std::string("not a 400");
    };
    QCOMPARE(error({{"resources", "src"}}),
             std::string("resources must be an array of 1 to 64 strings"));
    QCOMPARE(error({{"resource", "src"}, {"mode", "exclusive"}}),
             std::string("mode must be read, write or delete"));
    QCOMPARE(error({{"resource", "src"}, {"wording", "poem"}}),
             std::string("wording must be rest, lock or tool"));
    QCOMPARE(error({{"resource", "../etc"}}).find("resource"), 0u);
    QCOMPARE(error({{"resource", "src"}, {"pin", "yes"}}),
             std::string("pin must be true or false"));
    QCOMPARE(error({{"resource", "src"}, {"pid", -1}}),
             std::string("pid must be from 0 to 2147483647"));
    QCOMPARE(error({{"resource", "src"}, {"command", std::string(65, 'c')}}).find("command"), 0u);
    QCOMPARE(check({{"resource", "src"}, {"actorDid", "did:agent:b"}}, kKeyA).status, 403);
}

QTEST_MAIN(TstGuardCheck)
#include "tst_guardcheck.moc"

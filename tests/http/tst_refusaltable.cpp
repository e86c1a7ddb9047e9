// The refusal table, driven: every reason it lists is provoked over REST and over MCP, and each
// answer carries the status, retry hint and sentence the table gives (engine/host/refusals.h).
#include "mcptest.h"

#include <QFile>
#include <QTest>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstRefusalTable : public QObject
{
    Q_OBJECT

private slots:
    void everyReasonIsInTheTableOnce();
    void theDocumentedTableIsTheTable();
    void everyReasonIsAnsweredAsTheTableSays_data();
    void everyReasonIsAnsweredAsTheTableSays();
};

namespace {

// One refused call as either transport saw it.
struct Answer
{
    int status = 0;        // REST: the HTTP status; MCP: the HTTP status of the tool call
    QByteArray retryAfter; // REST only
    json body;             // REST: the body; MCP: the structured content
    std::string sentence;  // REST: message; MCP: the first text
    bool isError = false;  // MCP only
};

// The refusal a body describes, to word it again as the table would.
Refusal refusalFrom(const json &b)
{
    Refusal r;
    r.reason = refusalFromName(b.value("reason", "")).value_or(RefusalReason::LeaseHeld);
    r.resource = b.value("resource", "");
    r.holder = b.value("holder", "");
    r.leaseId = b.value("leaseId", "");
    r.pinId = b.value("pinId", "");
    r.heldResource = b.value("heldResource", r.resource);
    r.heldForMs = b.value("heldForMs", std::int64_t(0));
    r.expiresInMs = b.value("expiresInMs", std::int64_t(0));
    if (b.contains("stampede"))
        r.stampede =
            Stampede{b["stampede"]["waiters"], b["stampede"]["admitted"], b["stampede"]["waitMs"]};
    r.waitingOn = b.value("waitingOn", "");
    for (const json &s : b.value("cycle", json::array()))
        r.cycle.push_back({s["agent"], s["resource"]});
    r.queued = b.value("queued", false);
    r.holdAndWait = b.value("holdAndWait", false);
    r.waitedMs = b.value("waitedMs", std::int64_t(-1));
    r.cancelled = b.value("cancelled", false);
    r.problem = b.value("problem", "");
    return r;
}

class Scene
{
public:
    explicit Scene(bool mcp)
        : m_mcp(mcp)
        , m_a(m_s, kKeyA)
        , m_b(m_s, kKeyB)
    {
        if (mcp) {
            m_a.initialize();
            m_b.initialize();
        }
    }

    // The agent `who` ("a" or "b") acquires or releases, over the scene's transport.
    Answer call(const char *who, bool acquire, const json &args)
    {
        Answer out;
        if (!m_mcp) {
            const HttpResult r =
                m_s.post(acquire ? "/lease" : "/release", args, *who == 'a' ? kKeyA : kKeyB);
            out.status = r.status;
            out.retryAfter = r.header("Retry-After");
            out.body = r.body;
            out.sentence = r.body.value("message", "");
            return out;
        }
        McpClient &c = *who == 'a' ? m_a : m_b;
        const HttpResult r =
            c.rpc("tools/call",
                  {{"name", acquire ? "coordination_lease_acquire" : "coordination_lease_release"},
                   {"arguments", args}});
        out.status = r.status;
        const json &result = r.body["result"];
        out.body = result.value("structuredContent", json::object());
        out.isError = result.value("isError", false);
        out.sentence = result["content"][0].value("text", "");
        return out;
    }
    // Whether the lever was applied: QVERIFY(s.admin(...)).
    [[nodiscard]] bool admin(const char *route, const json &body)
    {
        const HttpResult r = m_s.post(route, body, kKeyAdmin);
        if (r.status != 200)
            QTest::qFail(r.raw.constData(), __FILE__, __LINE__);
        return r.status == 200;
    }
    EngineHost &host() { return *m_s.host; }

private:
    bool m_mcp;
    ServiceFixture m_s;
    McpClient m_a;
    McpClient m_b;
};

// Brings about `reason` and returns the refused call's answer.
Answer provoke(Scene &s, RefusalReason reason)
{
    switch (reason) {
    case RefusalReason::LeaseHeld:
        s.call("b", true, {{"resource", "lock:x"}});
        return s.call("a", true, {{"resource", "lock:x"}});
    case RefusalReason::Deadlock:
        s.call("a", true, {{"resource", "lock:a"}});
        s.call("b", true, {{"resource", "lock:b"}});
        s.call("a", true, {{"resource", "lock:b"}}); // refused: a now wants lock:b
        return s.call("b", true, {{"resource", "lock:a"}});
    case RefusalReason::StaleLease:
        return s.call("a", false, {{"leaseId", "ls_gone"}});
    case RefusalReason::NotHeld:
        return s.call("a", false, {{"resource", "lock:never"}});
    case RefusalReason::Suspended:
        if (!s.admin("/admin/suspend", {{"actorDid", "did:agent:a"}, {"suspended", true}}))
            return {};
        return s.call("a", true, {{"resource", "lock:s"}});
    case RefusalReason::Paused:
        if (!s.admin("/admin/pause", {{"paused", true}}))
            return {};
        return s.call("a", true, {{"resource", "lock:p"}});
    case RefusalReason::StoreUnavailable:
        s.host().run([](LeaseEngine &e) { e.setStoreAvailable(false, "the disk is full"); });
        return s.call("a", true, {{"resource", "lock:d"}});
    }
    return {};
}

} // namespace

void TstRefusalTable::everyReasonIsInTheTableOnce()
{
    for (int r = 0; r <= int(RefusalReason::StoreUnavailable); ++r) {
        int rows = 0;
        for (const RefusalRule &rule : kRefusalRules)
            rows += rule.reason == RefusalReason(r) ? 1 : 0;
        QCOMPARE(rows, 1);
        QCOMPARE(refusalFromName(refusalName(RefusalReason(r))), std::optional(RefusalReason(r)));
    }
}

void TstRefusalTable::theDocumentedTableIsTheTable()
{
    // docs/protocol.md prints the table; each reason's row there must say what the code does.
    QFile doc(QStringLiteral(QT_TESTCASE_SOURCEDIR "/../../docs/protocol.md"));
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(doc.readAll());
    for (const RefusalRule &rule : kRefusalRules) {
        const QString name = QString::fromLatin1(refusalName(rule.reason).data());
        const QString row = QStringLiteral("| `%1` | %2 | %3 |")
                                .arg(name, QString::number(rule.httpStatus),
                                     rule.retryable ? QStringLiteral("yes") : QStringLiteral("no"));
        QVERIFY2(text.contains(row), qPrintable(QStringLiteral("no row \"%1\"").arg(row)));
        if (rule.retryable && rule.reason != RefusalReason::LeaseHeld)
            QVERIFY2(text.contains(row + QStringLiteral(" %1 s |").arg(rule.retryAfterS)),
                     qPrintable(name));
    }
}

void TstRefusalTable::everyReasonIsAnsweredAsTheTableSays_data()
{
    QTest::addColumn<int>("reason");
    QTest::addColumn<bool>("mcp");
    for (const RefusalRule &rule : kRefusalRules) {
        const std::string name(refusalName(rule.reason));
        QTest::addRow("%s over REST", name.c_str()) << int(rule.reason) << false;
        QTest::addRow("%s over MCP", name.c_str()) << int(rule.reason) << true;
    }
}

void TstRefusalTable::everyReasonIsAnsweredAsTheTableSays()
{
    QFETCH(int, reason);
    QFETCH(bool, mcp);
    const RefusalRule &rule = refusalRule(RefusalReason(reason));
    Scene scene(mcp);
    const Answer a = provoke(scene, RefusalReason(reason));

    QCOMPARE(a.body.value("reason", ""), std::string(refusalName(rule.reason)));
    QCOMPARE(a.body.value("retryable", !rule.retryable), rule.retryable);
    const Refusal refusal = refusalFrom(a.body);
    const int retryAfter = retryAfterSeconds(refusal);
    QCOMPARE(retryAfter > 0, rule.retryable);
    QCOMPARE(a.body.value("retryAfterSeconds", 0), retryAfter);
    if (mcp) {
        // A refusal is a tool result the model must act on, worded for the tools it has.
        QCOMPARE(a.status, 200);
        QVERIFY(a.isError);
        const NextSteps steps{QStringLiteral("coordination_lease_acquire"),
                              QStringLiteral("coordination_lease_release"),
                              QStringLiteral("lock_status")};
        QCOMPARE(QString::fromStdString(a.sentence), refusalSentence(refusal, steps));
    } else {
        QCOMPARE(a.status, rule.httpStatus);
        QCOMPARE(a.retryAfter, retryAfter > 0 ? QByteArray::number(retryAfter) : QByteArray());
        QCOMPARE(QString::fromStdString(a.sentence), refusalSentence(refusal, restSteps()));
    }
    QCOMPARE(a.body.value("message", ""), a.sentence);
    QVERIFY2(!a.sentence.empty() && a.sentence.back() == '.', a.sentence.c_str());
}

QTEST_GUILESS_MAIN(TstRefusalTable)
#include "tst_refusaltable.moc"

// One DID rule at every door: a hostile name is refused, naming the field, wherever an identity
// enters (REST actorDid, admin targets, minted keys, MCP X-Agent-Id and actorDid, keys files).
#include "mcptest.h"

#include <QTest>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstIdentities : public QObject
{
    Q_OBJECT

private slots:
    void hostileDidIsRefusedEverywhere_data();
    void hostileDidIsRefusedEverywhere();
    void everyAllowedCharacterIsAccepted();
};

namespace {

// Every character the rule allows in a name: printable ASCII but '=' and ','.
std::string richDid()
{
    std::string did = "did:agent:";
    for (char c = '!'; c <= '~'; ++c) {
        if (c != '=' && c != ',')
            did += c;
    }
    return did + "x";
}

bool names(const std::string &message, const char *field)
{
    return message.find(field) != std::string::npos;
}

} // namespace

void TstIdentities::hostileDidIsRefusedEverywhere_data()
{
    QTest::addColumn<QByteArray>("did");
    QTest::addColumn<bool>("fitsAHeader"); // HTTP/1.1 cannot carry it in a header value
    QTest::newRow("space") << QByteArray("did:agent:a b") << true;
    QTest::newRow("equals") << QByteArray("did:agent:holder=did:agent:x") << true;
    QTest::newRow("comma") << QByteArray("did:agent:a,did:agent:b") << true;
    QTest::newRow("newline") << QByteArray("did:agent:a\ncycle=x") << false;
    QTest::newRow("tab") << QByteArray("did:agent:a\tb") << true;
    QTest::newRow("10 kB") << "did:agent:" + QByteArray(10'240, 'x') << true;
    QTest::newRow("empty method") << QByteArray("did::name") << true;
    QTest::newRow("no name") << QByteArray("did:agent:") << true;
    QTest::newRow("not a DID") << QByteArray("agent-1") << true;
    QTest::newRow("control") << QByteArray("did:agent:a\x01") << false;
    QTest::newRow("non-ASCII") << QByteArray("did:agent:\xc3\xa4") << true;
}

void TstIdentities::hostileDidIsRefusedEverywhere()
{
    QFETCH(QByteArray, did);
    QFETCH(bool, fitsAHeader);
    const std::string name = did.toStdString();

    // REST, --open: an agent naming itself.
    ServiceFixture open(true);
    HttpResult r = open.post("/lease", {{"resource", "lock:x"}, {"actorDid", name}});
    QCOMPARE(r.status, 400);
    QVERIFY2(names(r.body.value("error", ""), "actorDid"), r.raw.constData());
    r = open.post("/release", {{"actorDid", name}});
    QCOMPARE(r.status, 400);

    // REST, keyed: an operator's lever aimed at it, and a key minted for it.
    ServiceFixture keyed;
    r = keyed.post("/admin/suspend", {{"actorDid", name}, {"suspended", true}}, kKeyAdmin);
    QCOMPARE(r.status, 400);
    QVERIFY2(names(r.body.value("error", ""), "actorDid"), r.raw.constData());
    r = keyed.post("/admin/release-holder", {{"actorDid", name}}, kKeyAdmin);
    QCOMPARE(r.status, 400);
    r = keyed.post("/admin/keys", {{"actorDid", name}}, kKeyAdmin);
    QCOMPARE(r.status, 400);
    QVERIFY2(names(r.body.value("error", ""), "actorDid"), r.raw.constData());
    QString why; // the console's Connect an agent mints through the same door
    QVERIFY(!keyed.front->mintKey(QString::fromStdString(name), Role::Agent, &why));
    QVERIFY2(why.contains(QLatin1String("actorDid")), qPrintable(why));

    // MCP, --open: in the X-Agent-Id header, and as a tool's actorDid.
    if (fitsAHeader) {
        McpClient header(open, {});
        const HttpResult init = header.initialize("2025-11-25", {{"X-Agent-Id", did}});
        QCOMPARE(init.status, 400);
        QVERIFY2(init.raw.contains("X-Agent-Id"), init.raw.constData());
    }
    McpClient tool(open, {});
    QCOMPARE(tool.initialize().status, 200);
    const json result =
        tool.tool("lock_acquire", {{"paths", {"src/a.cpp"}}, {"actorDid", name}, {"wait", 0}});
    QCOMPARE(result.value("isError", false), true);
    QVERIFY2(names(result.dump(), "actorDid"), result.dump().c_str());

    // A keys file naming it stops the start, naming the entry.
    const json file = {{"keys", {{{"key", "0123456789abcdef0123"}, {"did", name}}}}};
    QString error;
    QVERIFY(!KeyStore::parseKeys(QByteArray::fromStdString(file.dump()), &error));
    QVERIFY2(error.startsWith(QLatin1String("keys[0]: did ")), qPrintable(error));

    // Nothing was granted or recorded under it.
    QCOMPARE(open.host->engine().leaseCount(), 0u);
    for (const LedgerEvent &e : open.host->ledger(0, 100))
        QVERIFY(e.actorDid != name);
}

void TstIdentities::everyAllowedCharacterIsAccepted()
{
    const std::string did = richDid();
    ServiceFixture open(true);
    const HttpResult r = open.post("/lease", {{"resource", "lock:x"}, {"actorDid", did}});
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body["lease"]["holder"].get<std::string>(), did);
    ServiceFixture keyed;
    QString why;
    QVERIFY2(keyed.front->mintKey(QString::fromStdString(did), Role::Agent, &why), qPrintable(why));
    QString error;
    const json file = {{"keys", {{{"key", "0123456789abcdef0123"}, {"did", did}}}}};
    QVERIFY2(KeyStore::parseKeys(QByteArray::fromStdString(file.dump()), &error),
             qPrintable(error));
}

QTEST_GUILESS_MAIN(TstIdentities)
#include "tst_identities.moc"

// The grant and release answers written straight into bytes must be the bytes the JSON tree
// dumps: clients and recorded transcripts see no difference between the two.

#include "jsonviews.h"
#include "leasereplies.h"

#include <QTest>

#include <limits>

using namespace leasehold;
using nlohmann::json;

namespace {

// The answers as built before: a tree of values, dumped.
std::string grantTree(const Grant &grant)
{
    json leases = toJsonArray(grant.leases);
    json body = {{"lease", leases.at(0)}, {"leases", leases}, {"ok", true}};
    if (grant.waitedMs > 0)
        body["waitedMs"] = grant.waitedMs;
    return body.dump();
}

std::string releasedTree(const Released &released)
{
    return json{
        {"ok", true}, {"released", toJsonArray(released.released)}, {"trust", released.trust}}
        .dump();
}

LeaseInfo lease(std::string resource, std::uint64_t token)
{
    LeaseInfo l;
    l.leaseId = "L" + std::to_string(token);
    l.resource = std::move(resource);
    l.holder = "did:agent:a";
    l.mode = Mode::Write;
    l.token = token;
    l.grantedAt = 1'700'000'000'000;
    l.expiresAt = 1'700'000'030'000;
    l.ttlMs = 30'000;
    return l;
}

// Every flag and field one at a time and together, every mode, every escaped character.
QList<LeaseInfo> variants()
{
    QList<LeaseInfo> out;
    out << lease("src/a.cpp", 1);
    LeaseInfo l = lease("lock:deploy/production", std::numeric_limits<std::uint64_t>::max());
    l.mode = Mode::Read;
    l.pins = 3;
    out << l;
    l.pendingRelease = true;
    out << l;
    l.extended = true;
    l.pins = 0;
    out << l;
    l.mode = Mode::Delete;
    l.ttlMs = 0;
    l.grantedAt = 0;
    out << l;
    l.lockDelayMs = 60'000;
    out << l;
    std::string every;
    for (int c = 1; c < 0x80; ++c)
        every += char(c);
    out << lease(every, 7);
    out << lease("quote\"back\\slash/tab\tnew\nline", 8);
    LeaseInfo odd = lease("", 9);
    odd.holder = "did:agent:\x01\x1f";
    out << odd;
    return out;
}

} // namespace

class TestLeaseReplies : public QObject
{
    Q_OBJECT
private slots:
    void grantsAreTheTreesBytes()
    {
        const QList<LeaseInfo> all = variants();
        for (const LeaseInfo &one : all) {
            for (const std::int64_t waited :
                 {std::int64_t(0), std::int64_t(1), std::int64_t(90'000)}) {
                const Grant grant{{one}, waited};
                const std::optional<std::string> bytes = grantJson(grant);
                QVERIFY(bytes);
                QCOMPARE(QByteArray::fromStdString(*bytes),
                         QByteArray::fromStdString(grantTree(grant)));
            }
        }
        const Grant many{std::vector<LeaseInfo>(all.begin(), all.end()), 5};
        QCOMPARE(QByteArray::fromStdString(grantJson(many).value_or("")),
                 QByteArray::fromStdString(grantTree(many)));
    }

    void releasesAreTheTreesBytes()
    {
        const QList<LeaseInfo> all = variants();
        for (const double trust :
             {0.0, 1.0, 0.5, 0.1, 0.123456789012345678, 1e-7, 0.9999999999, -0.25}) {
            for (int count = 0; count <= int(all.size()); count += 3) {
                const Released released{std::vector<LeaseInfo>(all.begin(), all.begin() + count),
                                        trust};
                const std::optional<std::string> bytes = releasedJson(released);
                QVERIFY(bytes);
                QCOMPARE(QByteArray::fromStdString(*bytes),
                         QByteArray::fromStdString(releasedTree(released)));
            }
        }
    }

    // Text that is not plain ASCII is left to the tree, which checks its UTF-8.
    void nonAsciiIsLeftToTheTree()
    {
        LeaseInfo l = lease("docs/r\xc3\xa9sum\xc3\xa9.md", 1);
        QVERIFY(!grantJson(Grant{{l}, 0}));
        QVERIFY(!releasedJson(Released{{l}, 1.0}));
        l = lease("a", 2);
        l.holder = "did:agent:\xff";
        QVERIFY(!grantJson(Grant{{lease("b", 1), l}, 0}));
        QVERIFY(!grantJson(Grant{}));
    }
};

QTEST_APPLESS_MAIN(TestLeaseReplies)
#include "tst_leasereplies.moc"

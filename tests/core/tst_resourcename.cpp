#include "exclusivepatterns.h"
#include "resourcename.h"

#include <QTest>

using namespace leasehold;

class TstResourceName : public QObject
{
    Q_OBJECT

private slots:
    void normalisesNames_data();
    void normalisesNames();
    void rejectsBadNames_data();
    void rejectsBadNames();
    void ancestorsCoverDescendants();
    void exclusivePatternsMatchGlobs_data();
    void exclusivePatternsMatchGlobs();
};

void TstResourceName::normalisesNames_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("canonical");
    QTest::newRow("bare path is fs") << "src/app.cpp"
                                     << "fs:src/app.cpp";
    QTest::newRow("explicit fs") << "fs:src/app.cpp"
                                 << "fs:src/app.cpp";
    QTest::newRow("lock name") << "lock:deploy/production"
                               << "lock:deploy/production";
    QTest::newRow("repeated slashes") << "src//app.cpp"
                                      << "fs:src/app.cpp";
    QTest::newRow("trailing slash") << "src/"
                                    << "fs:src";
    QTest::newRow("dot segments") << "./src/./app.cpp"
                                  << "fs:src/app.cpp";
    QTest::newRow("dot-dot inside") << "src/lib/../app.cpp"
                                    << "fs:src/app.cpp";
    QTest::newRow("workspace itself") << "."
                                      << "fs:.";
    QTest::newRow("absolute inside root") << "/work/space/src/a.h"
                                          << "fs:src/a.h";
    QTest::newRow("absolute root itself") << "/work/space/"
                                          << "fs:.";
    QTest::newRow("lock slashes") << "lock:deploy//production/"
                                  << "lock:deploy/production";
    QTest::newRow("other scheme") << "db:users/42"
                                  << "db:users/42";
    QTest::newRow("utf8") << "fs:docs/Überblick.md"
                          << "fs:docs/Überblick.md";
    QTest::newRow("colon later is path") << "src/a:b"
                                         << "fs:src/a:b";
}

void TstResourceName::normalisesNames()
{
    QFETCH(QString, input);
    QFETCH(QString, canonical);
    const ResourceParser parser("/work/space");
    const ParsedName parsed = parser.parse(input.toStdString());
    QVERIFY2(std::holds_alternative<ResourceName>(parsed),
             std::get_if<NameError>(&parsed) ? std::get<NameError>(parsed).message.c_str() : "");
    QCOMPARE(QString::fromStdString(std::get<ResourceName>(parsed).canonical()), canonical);
}

void TstResourceName::rejectsBadNames_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("root");
    QTest::addColumn<QString>("complaint");
    QTest::newRow("empty") << QByteArray() << "/w"
                           << "empty";
    QTest::newRow("too long") << QByteArray(1025, 'a') << "/w"
                              << "1024";
    // Accepted as written, these would not read back from their canonical text (a restart
    // would drop their leases): the `fs:` a bare path gains, and the escapes of a literal ']'.
    QTest::newRow("too long with fs:") << QByteArray(1022, 'a') << "/w"
                                       << "1025 bytes as fs:";
    QTest::newRow("too long escaped") << "lock:" + QByteArray(600, ']') << "/w"
                                      << "when written in full";
    QTest::newRow("escapes root") << QByteArray("../etc/passwd") << "/w"
                                  << "escapes";
    QTest::newRow("escapes deeper") << QByteArray("src/../../x") << "/w"
                                    << "escapes";
    QTest::newRow("absolute outside") << QByteArray("/etc/passwd") << "/w"
                                      << "outside";
    QTest::newRow("absolute sibling") << QByteArray("/work/spacex/a") << "/work/space"
                                      << "outside";
    QTest::newRow("absolute no root") << QByteArray("/a/b") << ""
                                      << "no workspace root";
    QTest::newRow("newline") << QByteArray("src/a\nb") << "/w"
                             << "control";
    QTest::newRow("nul") << QByteArray("src/a\0b", 7) << "/w"
                         << "control";
    QTest::newRow("del") << QByteArray("src/a\x7f") << "/w"
                         << "control";
    QTest::newRow("c1 control") << QByteArray("src/a\xc2\x85") << "/w"
                                << "control";
    QTest::newRow("bad utf8") << QByteArray("src/\xff") << "/w"
                              << "UTF-8";
    QTest::newRow("truncated utf8") << QByteArray("src/\xc3") << "/w"
                                    << "UTF-8";
    QTest::newRow("overlong utf8") << QByteArray("src/\xc0\xaf") << "/w"
                                   << "UTF-8";
    QTest::newRow("surrogate") << QByteArray("src/\xed\xa0\x80") << "/w"
                               << "UTF-8";
    QTest::newRow("lock without name") << QByteArray("lock:") << "/w"
                                       << "names no resource";
    QTest::newRow("lock only slashes") << QByteArray("lock://") << "/w"
                                       << "names no resource";
    QTest::newRow("lock climbs") << QByteArray("lock:a/../../b") << "/w"
                                 << "climbs";
}

void TstResourceName::rejectsBadNames()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, root);
    QFETCH(QString, complaint);
    const ResourceParser parser(root.toStdString());
    const ParsedName parsed = parser.parse(std::string_view(input.constData(), input.size()));
    QVERIFY(std::holds_alternative<NameError>(parsed));
    const QString message = QString::fromStdString(std::get<NameError>(parsed).message);
    QVERIFY2(message.contains(complaint), qPrintable(message));
}

void TstResourceName::ancestorsCoverDescendants()
{
    const ResourceParser parser;
    auto n = [&](const char *t) { return std::get<ResourceName>(parser.parse(t)); };
    QVERIFY(n("fs:src").covers(n("src/app.cpp")));
    QVERIFY(n(".").covers(n("src/app.cpp")));
    QVERIFY(n("lock:deploy").covers(n("lock:deploy/production")));
    QVERIFY(!n("lock:deploy/production").covers(n("lock:deploy")));
    QVERIFY(n("lock:deploy/production").overlaps(n("lock:deploy")));
    QVERIFY(!n("src/app").covers(n("src/app.cpp")));
    QVERIFY(!n("lock:src").covers(n("fs:src/a")));
    QVERIFY(!n("src/a").overlaps(n("src/b")));
}

void TstResourceName::exclusivePatternsMatchGlobs_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("resource");
    QTest::addColumn<bool>("matches");
    QTest::newRow("star in segment") << "*.sqlite"
                                     << "db.sqlite" << true;
    QTest::newRow("star stops at slash") << "*.sqlite"
                                         << "data/db.sqlite" << false;
    QTest::newRow("double star any depth") << "**/*.sqlite"
                                           << "data/x/db.sqlite" << true;
    QTest::newRow("double star zero depth") << "**/*.sqlite"
                                            << "db.sqlite" << true;
    QTest::newRow("scheme pattern") << "lock:db/*"
                                    << "lock:db/main" << true;
    QTest::newRow("scheme differs") << "lock:db/*"
                                    << "fs:db/main" << false;
    QTest::newRow("question mark") << "build?"
                                   << "build1" << true;
    QTest::newRow("exact") << "Cargo.lock"
                           << "Cargo.lock" << true;
    QTest::newRow("no match") << "Cargo.lock"
                              << "src/Cargo.lock" << false;
}

void TstResourceName::exclusivePatternsMatchGlobs()
{
    QFETCH(QString, pattern);
    QFETCH(QString, resource);
    QFETCH(bool, matches);
    const ExclusivePatterns patterns({pattern.toStdString()});
    const ResourceParser parser;
    QCOMPARE(patterns.matches(std::get<ResourceName>(parser.parse(resource.toStdString()))),
             matches);
}

QTEST_APPLESS_MAIN(TstResourceName)
#include "tst_resourcename.moc"

// Pattern paths (glob leases): parsing and its refusals, matching, covering, and the exact
// collision test, checked against a table of pairs and against brute force over a small
// universe of names.

#include "pathpattern.h"

#include <QTest>

#include <random>

using namespace leasehold;

namespace {

std::vector<std::string> split(const std::string &text)
{
    std::vector<std::string> out;
    std::size_t from = 0;
    while (from <= text.size()) {
        const std::size_t slash = text.find('/', from);
        const std::size_t end = slash == std::string::npos ? text.size() : slash;
        if (end > from)
            out.push_back(text.substr(from, end - from));
        if (slash == std::string::npos)
            break;
        from = slash + 1;
    }
    return out;
}

PathPattern pattern(const QString &text)
{
    std::string problem;
    std::optional<PathPattern> p = PathPattern::parse(split(text.toStdString()), &problem);
    if (!p)
        qFatal("%s: %s", qPrintable(text), problem.c_str());
    return *p;
}

bool isPatternText(const QString &text)
{
    for (const std::string &segment : split(text.toStdString()))
        if (segment == "**" || PathPattern::isPattern(segment))
            return true;
    return false;
}

// The rule between two leases (ResourceName::overlaps): two patterns collide when a name
// matches both; a pattern and a plain name when the pattern matches the name, one above it or
// one below it; two plain names when one covers the other.
bool leasesCollide(const QString &a, const QString &b)
{
    const PathPattern pa = pattern(a), pb = pattern(b);
    const bool patternA = isPatternText(a), patternB = isPatternText(b);
    if (patternA && patternB)
        return pa.sharesName(pb);
    if (patternA)
        return pa.collides(pb.literalPrefix()); // a plain name's literal prefix is its path
    return pb.collides(pa.literalPrefix());
}

} // namespace

class TstPathPattern : public QObject
{
    Q_OBJECT

private slots:
    void malformedPatternsAreRefused_data();
    void malformedPatternsAreRefused();
    void aClassOfNothingIsRefused();
    void matches_data();
    void matches();
    void coversWhatIsBelowAMatch();
    void collisions_data();
    void collisions();
    void collisionsAgreeWithBruteForce();
    void literalPrefix();
    void extensionIsWhatEveryMatchEndsWith();
};

void TstPathPattern::malformedPatternsAreRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("problem");
    QTest::newRow("unbalanced [") << "src/[ab.ts"
                                  << "segment 2: unbalanced '['";
    QString deep;
    for (int i = 0; i < 65; ++i)
        deep += QStringLiteral("*/");
    QTest::newRow("65 segments") << deep << "at most 64 segments";
    QTest::newRow("too many elements") << QString(600, u'?') << "at most 512";
}

void TstPathPattern::malformedPatternsAreRefused()
{
    QFETCH(QString, text);
    QFETCH(QString, problem);
    std::string why;
    const std::optional<PathPattern> p = PathPattern::parse(split(text.toStdString()), &why);
    QVERIFY(!p);
    QVERIFY2(why.find(problem.toStdString()) != std::string::npos, why.c_str());
}

void TstPathPattern::aClassOfNothingIsRefused()
{
    // '/' never occurs in a segment, so a class of '/' alone is empty (the parser splits names
    // at '/', so this segment can only be built directly).
    std::string why;
    QVERIFY(!PathPattern::parse({"x[/]"}, &why));
    QVERIFY2(why.find("matches no character") != std::string::npos, why.c_str());
}

void TstPathPattern::matches_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("matches");
    QTest::newRow("star within a segment") << "src/*.ts"
                                           << "src/a.ts" << true;
    QTest::newRow("star stops at /") << "src/*.ts"
                                     << "src/a/b.ts" << false;
    QTest::newRow("doublestar any depth") << "src/**/*.ts"
                                          << "src/a/b/c.ts" << true;
    QTest::newRow("doublestar zero segments") << "src/**/*.ts"
                                              << "src/c.ts" << true;
    QTest::newRow("leading doublestar") << "**/*.md"
                                        << "README.md" << true;
    QTest::newRow("question mark") << "a?.ts"
                                   << "ab.ts" << true;
    QTest::newRow("question mark is one") << "a?.ts"
                                          << "a.ts" << false;
    QTest::newRow("class") << "[ab]x"
                           << "bx" << true;
    QTest::newRow("negated class") << "[!ab]x"
                                   << "bx" << false;
    QTest::newRow("range") << "v[0-9]"
                           << "v7" << true;
    QTest::newRow("escaped star is literal") << "a\\*b"
                                             << "a*b" << true;
    QTest::newRow("escaped star is not a wildcard") << "a\\*b"
                                                    << "axb" << false;
    QTest::newRow("other backslashes are themselves") << "a\\b"
                                                      << "a\\b" << true;
    QTest::newRow("a trailing backslash is itself") << "a\\"
                                                    << "a\\" << true;
    QTest::newRow("escaped backslash") << "a\\\\*"
                                       << "a\\xyz" << true;
    QTest::newRow("a**b is a*b") << "a**b"
                                 << "axyzb" << true;
    QTest::newRow("a**b stays in its segment") << "a**b"
                                               << "a/b" << false;
    QTest::newRow("star is not empty segment") << "src/*/x.ts"
                                               << "src/x.ts" << false;
}

void TstPathPattern::matches()
{
    QFETCH(QString, pattern);
    QFETCH(QString, path);
    QFETCH(bool, matches);
    QCOMPARE(::pattern(pattern).matches(split(path.toStdString())), matches);
}

void TstPathPattern::coversWhatIsBelowAMatch()
{
    const PathPattern p = pattern(QStringLiteral("src/*.ts"));
    QVERIFY(p.covers(split("src/a.ts")));
    QVERIFY(p.covers(split("src/a.ts/inner"))); // a lease covers what is below what it names
    QVERIFY(!p.covers(split("src")));           // but not what is above
    QVERIFY(!p.covers(split("src/a.js")));
    QVERIFY(p.collides(split("src"))); // yet a lease on the folder collides with it
    QVERIFY(p.collides(split("src/b.ts")));
    QVERIFY(!p.collides(split("lib")));
    QVERIFY(!p.collides(split("src/a.js")));
}

void TstPathPattern::collisions_data()
{
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::addColumn<bool>("collide");
    QTest::newRow("the issue's: crossing wildcards") << "src/*/x.ts"
                                                     << "src/a/*.ts" << true;
    QTest::newRow("the issue's: no name is both") << "**/*.md"
                                                  << "docs/*.txt" << false;
    QTest::newRow("same pattern") << "src/**/*.ts"
                                  << "src/**/*.ts" << true;
    QTest::newRow("disjoint extensions") << "src/**/*.ts"
                                         << "src/**/*.js" << false;
    QTest::newRow("two patterns meet only on a name both match") << "src/*"
                                                                 << "src/a/*.js" << false;
    QTest::newRow("a pattern under a plain folder") << "src"
                                                    << "src/**/*.ts" << true;
    QTest::newRow("prefix apart") << "src/*.ts"
                                  << "lib/*.ts" << false;
    QTest::newRow("doublestar and anything") << "**"
                                             << "x/y/z" << true;
    QTest::newRow("classes that share a letter") << "v[0-5]"
                                                 << "v[5-9]" << true;
    QTest::newRow("classes that share none") << "v[0-4]"
                                             << "v[5-9]" << false;
    QTest::newRow("negation excludes") << "[!a]"
                                       << "a" << false;
    QTest::newRow("negation allows") << "[!a]"
                                     << "?" << true;
    QTest::newRow("escaped star against star") << "a\\*"
                                               << "a*" << true;
    QTest::newRow("escaped star against its letter") << "a\\*"
                                                     << "ab" << false;
    QTest::newRow("question marks count") << "??"
                                          << "???" << false;
    QTest::newRow("star and question") << "*a"
                                       << "?" << true;
    QTest::newRow("lengths that cannot meet") << "a?b"
                                              << "a??b" << false;
    QTest::newRow("a plain name collides with a match below it") << "src/*/x.ts"
                                                                 << "src/x.ts" << true;
    QTest::newRow("a pattern matching a plain folder's child") << "src/*"
                                                               << "src/a" << true;
    QTest::newRow("a pattern matching below a plain folder") << "src/*/x"
                                                             << "src" << true;
    QTest::newRow("doublestar may be empty") << "src/**/x.ts"
                                             << "src/x.ts" << true;
    QTest::newRow("below a match on both sides") << "a/*"
                                                 << "*/b" << true;
    QTest::newRow("suffix against deep suffix") << "**/a/b"
                                                << "x/**/b" << true;
}

void TstPathPattern::collisions()
{
    QFETCH(QString, a);
    QFETCH(QString, b);
    QFETCH(bool, collide);
    QCOMPARE(leasesCollide(a, b), collide);
    QCOMPARE(leasesCollide(b, a), collide); // symmetric
}

void TstPathPattern::collisionsAgreeWithBruteForce()
{
    // Patterns of up to two segments over a few tokens: two that can share a name share one of
    // at most three segments drawn from `words`, so this universe decides every pair.
    const std::vector<std::string> tokens = {"a",    "b",    "*",  "?",    "**", "[ab]",
                                             "x.ts", "*.ts", "a*", "[!a]", "\\*"};
    const std::vector<std::string> words = {"a", "b", "c", "*", "x.ts", "a.ts", "ab.ts"};
    std::vector<std::vector<std::string>> universe = {{}};
    for (std::size_t depth = 0, from = 0; depth < 3; ++depth) {
        const std::size_t to = universe.size();
        for (std::size_t i = from; i < to; ++i)
            for (const std::string &w : words) {
                std::vector<std::string> longer = universe[i];
                longer.push_back(w);
                universe.push_back(std::move(longer));
            }
        from = to;
    }
    std::mt19937 random(20261201);
    const auto draw = [&] {
        std::vector<std::string> segments(1 + random() % 2);
        for (std::string &s : segments)
            s = tokens[random() % tokens.size()];
        return segments;
    };
    std::string problem;
    int colliding = 0;
    for (int pair = 0; pair < 400; ++pair) {
        const std::vector<std::string> ta = draw(), tb = draw();
        const PathPattern a = *PathPattern::parse(ta, &problem);
        const PathPattern b = *PathPattern::parse(tb, &problem);
        bool shared = false, matched = false;
        for (const auto &name : universe) {
            shared = shared || (a.covers(name) && b.covers(name));
            matched = matched || (a.matches(name) && b.matches(name));
        }
        colliding += shared;
        const auto show = [](const std::vector<std::string> &s) {
            std::string out;
            for (const std::string &x : s)
                out += (out.empty() ? "" : "/") + x;
            return out;
        };
        QVERIFY2(a.collides(b) == shared,
                 qPrintable(QString::fromStdString(show(ta) + " vs " + show(tb))));
        QVERIFY2(a.sharesName(b) == matched,
                 qPrintable(QString::fromStdString(show(ta) + " vs " + show(tb) + " (names)")));
    }
    QVERIFY(colliding > 50 && colliding < 350); // both answers were exercised
}

void TstPathPattern::literalPrefix()
{
    QCOMPARE(pattern(QStringLiteral("src/lib/*.ts")).literalPrefix(),
             (std::vector<std::string>{"src", "lib"}));
    QCOMPARE(pattern(QStringLiteral("src/a\\*b/**")).literalPrefix(),
             (std::vector<std::string>{"src", "a*b"}));
    QCOMPARE(pattern(QStringLiteral("**/x")).literalPrefix(), std::vector<std::string>());
    QVERIFY(PathPattern::isPattern("src/*.ts"));
    QVERIFY(!PathPattern::isPattern("src/a\\*b"));
    QVERIFY(!PathPattern::isPattern("src/app.cpp"));
}

void TstPathPattern::extensionIsWhatEveryMatchEndsWith()
{
    auto extension = [](const char *glob) {
        return pattern(QString::fromLatin1(glob)).segments().back().extension;
    };
    QCOMPARE(extension("src/*.ts"), std::optional<std::string>("ts"));
    QCOMPARE(extension("test_*.d.ts"), std::optional<std::string>("ts"));
    QCOMPARE(extension("*.[t]s"), std::optional<std::string>("ts")); // a class of one byte
    QCOMPARE(extension("x*."), std::optional<std::string>(""));
    QCOMPARE(extension("*\\.ts"), std::optional<std::string>("ts")); // an escaped dot is a dot
    QCOMPARE(extension("*.t?"), std::nullopt);
    QCOMPARE(extension("*.t*"), std::nullopt);
    QCOMPARE(extension("*[.]ts"), std::optional<std::string>("ts"));
    QCOMPARE(extension("*[.x]ts"), std::nullopt); // maybe no dot at all
    QCOMPARE(extension("*"), std::nullopt);
    QCOMPARE(extension("src/**"), std::nullopt);
    // Every name it matches has that extension.
    const PathPattern p = pattern(QStringLiteral("*.[t]s"));
    QVERIFY(p.matches({"a.b.ts"}));
    QVERIFY(!p.matches({"a.ts.x"}));
}

QTEST_MAIN(TstPathPattern)
#include "tst_pathpattern.moc"

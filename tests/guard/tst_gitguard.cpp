// `leasehold guard git`: a temporary repository and a linked worktree against one service. The
// last case installs the hooks and lets a real `git commit` run the real binary.

#include "gitguard.h"
#include "servicetest.h"

#include <QProcess>
#include <QTemporaryDir>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstGitGuard : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup() { s.reset(); }

    void aStagedPathUnderAnotherAgentsLeaseIsRefused();
    void linkedWorktreesAndRootsNameTheSameFiles();
    void personsOverrideAndAnUnreachableService();
    void prePushChecksWhatTravels();
    void installedHooksRefuseARealCommit();

private:
    // Runs git in `dir` while the event loop keeps serving the service (a hook may call it).
    QPair<int, QString> run(const QString &where, const QStringList &args,
                            const QByteArray &input = {})
    {
        QProcess p;
        p.setWorkingDirectory(where);
        p.setProcessChannelMode(QProcess::MergedChannels);
        QEventLoop loop;
        connect(&p, &QProcess::finished, &loop, &QEventLoop::quit);
        p.start(QStringLiteral("git"), args);
        p.write(input);
        p.closeWriteChannel();
        if (p.state() != QProcess::NotRunning)
            loop.exec();
        return {p.exitCode(), QString::fromUtf8(p.readAll())};
    }
    bool git(const QString &where, const QStringList &args)
    {
        const auto [code, out] = run(where, args);
        if (code != 0)
            qWarning() << "git" << args << out;
        return code == 0;
    }
    bool write(const QString &path, const QByteArray &text)
    {
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
    }
    GitGuard::Settings settings(const QString &agent = QStringLiteral("did:op:person"))
    {
        GitGuard::Settings g;
        g.service = {s->url({}), {}, agent, "git", 5'000};
        g.workTree = repo;
        return g;
    }
    bool lease(const char *agent, const char *resource)
    {
        return s->post("/lease", {{"resource", resource}, {"actorDid", agent}, {"ttlMs", 600'000}})
                   .status == 200;
    }

    std::unique_ptr<ServiceFixture> s;
    std::unique_ptr<QTemporaryDir> dir;
    QString repo;
};

void TstGitGuard::init()
{
    s = std::make_unique<ServiceFixture>(true);
    dir = std::make_unique<QTemporaryDir>();
    repo = dir->filePath("repo");
    QVERIFY(QDir().mkpath(repo));
    QVERIFY(git(repo, {"init", "-q", "-b", "main"}));
    QVERIFY(git(repo, {"config", "user.email", "p@example.org"}));
    QVERIFY(git(repo, {"config", "user.name", "P"}));
    QVERIFY(write(repo + "/src/a.ts", "a\n"));
    QVERIFY(write(repo + "/src/b.ts", "b\n"));
    QVERIFY(git(repo, {"add", "."}));
    QVERIFY(git(repo, {"commit", "-q", "-m", "base"}));
}

void TstGitGuard::aStagedPathUnderAnotherAgentsLeaseIsRefused()
{
    QVERIFY(lease("did:agent:a", "src/a.ts"));
    QVERIFY(write(repo + "/src/a.ts", "changed\n"));
    QVERIFY(git(repo, {"add", "src/a.ts"}));
    const GitGuard::Outcome refused = GitGuard::preCommit(settings());
    QCOMPARE(refused.exitCode, 1);
    QVERIFY2(refused.err.startsWith("leasehold: commit refused: src/a.ts is under another agent's "
                                    "lease.\n  fs:src/a.ts is held by did:agent:a"),
             qPrintable(refused.err));
    QVERIFY2(refused.err.contains("LEASEHOLD_GUARD=off"), qPrintable(refused.err));
    // The holder commits its own work.
    QCOMPARE(GitGuard::preCommit(settings(QStringLiteral("did:agent:a"))).exitCode, 0);
    // A lease on the folder covers it too; a deletion is a change.
    QCOMPARE(s->post("/release", {{"actorDid", "did:agent:a"}}).status, 200);
    QCOMPARE(GitGuard::preCommit(settings()).exitCode, 0);
    QVERIFY(lease("did:agent:b", "src"));
    QVERIFY(git(repo, {"reset", "-q"}));
    QVERIFY(git(repo, {"rm", "-q", "src/b.ts"}));
    const GitGuard::Outcome folder = GitGuard::preCommit(settings());
    QCOMPARE(folder.exitCode, 1);
    QVERIFY2(folder.err.contains("src/b.ts is under") && folder.err.contains("through fs:src"),
             qPrintable(folder.err));
    // Nothing staged: nothing to ask.
    QVERIFY(git(repo, {"reset", "-q", "--hard"}));
    QCOMPARE(GitGuard::preCommit(settings()).exitCode, 0);
    // The agents show the git guard as how they were seen.
    int viaOfPerson = -1;
    for (const AgentInfo &a : s->host->engine().snapshot().agents)
        if (a.actorDid == "did:op:person")
            viaOfPerson = int(a.via);
    QCOMPARE(viaOfPerson, int(Via::Git));
}

void TstGitGuard::linkedWorktreesAndRootsNameTheSameFiles()
{
    QVERIFY(lease("did:agent:a", "src/a.ts"));
    const QString tree = dir->filePath("tree-b");
    QVERIFY(git(repo, {"worktree", "add", "-q", "-b", "agent-b", tree}));
    QVERIFY(write(tree + "/src/a.ts", "from b\n"));
    QVERIFY(git(tree, {"add", "src/a.ts"}));
    GitGuard::Settings b = settings(QStringLiteral("did:agent:b"));
    b.workTree = tree;
    const GitGuard::Outcome refused = GitGuard::preCommit(b);
    QCOMPARE(refused.exitCode, 1);
    QVERIFY2(refused.err.contains("held by did:agent:a"), qPrintable(refused.err));
    // A root above the repository puts the repository's folder in front of its paths.
    QCOMPARE(s->post("/release", {{"actorDid", "did:agent:a"}}).status, 200);
    QVERIFY(lease("did:agent:a", "repo/src/a.ts"));
    QCOMPARE(GitGuard::preCommit(b).exitCode, 0); // fs:src/a.ts is free
    b.root = dir->path();
    QCOMPARE(GitGuard::preCommit(b).exitCode, 1);
}

void TstGitGuard::personsOverrideAndAnUnreachableService()
{
    QVERIFY(lease("did:agent:a", "src/a.ts"));
    QVERIFY(write(repo + "/src/a.ts", "changed\n"));
    QVERIFY(git(repo, {"add", "src/a.ts"}));
    qputenv("LEASEHOLD_GUARD", "off");
    const GitGuard::Outcome off = GitGuard::preCommit(settings());
    qunsetenv("LEASEHOLD_GUARD");
    QCOMPARE(off.exitCode, 0);
    QVERIFY(off.err.contains("not checked"));

    QTcpServer closed;
    QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
    GitGuard::Settings away = settings();
    away.service.base = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(closed.serverPort()));
    closed.close();
    const GitGuard::Outcome warned = GitGuard::preCommit(away);
    QCOMPARE(warned.exitCode, 0);
    QVERIFY2(warned.err.contains("could not ask") && warned.err.endsWith("; not checked\n"),
             qPrintable(warned.err));
    away.strict = true;
    QCOMPARE(GitGuard::preCommit(away).exitCode, 1);
}

void TstGitGuard::prePushChecksWhatTravels()
{
    const QString remote = dir->filePath("remote.git");
    QVERIFY(git(dir->path(), {"init", "-q", "--bare", remote}));
    QVERIFY(git(repo, {"remote", "add", "origin", remote}));
    QVERIFY(git(repo, {"push", "-q", "origin", "main"}));
    const QString base = run(repo, {"rev-parse", "HEAD"}).second.trimmed();
    QVERIFY(write(repo + "/src/b.ts", "b2\n"));
    QVERIFY(git(repo, {"commit", "-q", "-am", "b"}));
    const QString head = run(repo, {"rev-parse", "HEAD"}).second.trimmed();
    QVERIFY(lease("did:agent:a", "src/b.ts"));
    const QByteArray pushed =
        QStringLiteral("refs/heads/main %1 refs/heads/main %2\n").arg(head, base).toUtf8();
    const GitGuard::Outcome refused = GitGuard::prePush(settings(), pushed);
    QCOMPARE(refused.exitCode, 1);
    QVERIFY2(refused.err.startsWith("leasehold: push refused: src/b.ts"), qPrintable(refused.err));
    // A new branch carries only what no remote has; src/a.ts was pushed before.
    QCOMPARE(s->post("/release", {{"actorDid", "did:agent:a"}}).status, 200);
    QVERIFY(lease("did:agent:a", "src/a.ts"));
    const QByteArray branch = QStringLiteral("refs/heads/main %1 refs/heads/feature %2\n")
                                  .arg(head, QString(40, '0'))
                                  .toUtf8();
    QCOMPARE(GitGuard::prePush(settings(), branch).exitCode, 0);
}

void TstGitGuard::installedHooksRefuseARealCommit()
{
    GitGuard::Settings g = settings();
    const QStringList flags = {QStringLiteral("--url"), s->url({}).toString(),
                               QStringLiteral("--agent"), QStringLiteral("did:op:person")};
    const GitGuard::Outcome installed =
        GitGuard::install(g, QStringLiteral(LEASEHOLD_BINARY), flags);
    QCOMPARE(installed.exitCode, 0);
    QVERIFY(installed.out.contains("pre-commit: installed"));
    QCOMPARE(GitGuard::install(g, QStringLiteral(LEASEHOLD_BINARY), flags).exitCode, 0); // again

    QVERIFY(lease("did:agent:a", "src/a.ts"));
    QVERIFY(write(repo + "/src/a.ts", "changed\n"));
    QVERIFY(git(repo, {"add", "src/a.ts"}));
    const auto [code, out] = run(repo, {"commit", "-q", "-m", "mine"});
    QVERIFY2(code != 0, qPrintable(out));
    QVERIFY2(out.contains("held by did:agent:a"), qPrintable(out));
    QCOMPARE(s->post("/release", {{"actorDid", "did:agent:a"}}).status, 200);
    const auto [after, log] = run(repo, {"commit", "-q", "-m", "mine"});
    QVERIFY2(after == 0, qPrintable(log));

    // Someone else's hook is left alone and named.
    QVERIFY(write(repo + "/.git/hooks/pre-push", "#!/bin/sh\nexit 0\n"));
    const GitGuard::Outcome theirs = GitGuard::install(g, QStringLiteral(LEASEHOLD_BINARY), {});
    QCOMPARE(theirs.exitCode, 1);
    QVERIFY2(theirs.err.contains("pre-push is someone else's hook"), qPrintable(theirs.err));
}

QTEST_MAIN(TstGitGuard)
#include "tst_gitguard.moc"

#include "gitguard.h"

#include "workspacepaths.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSaveFile>

using nlohmann::json;

namespace {

const QString kCheck = QLatin1String(ServiceClient::kBase) + QStringLiteral("/check");
constexpr int kPerCheck = 64; // names per POST /check
const QByteArray kMarker = "# leasehold guard git";

struct Git
{
    bool ok = false;
    QByteArray out;
    QString error;
};

Git git(const QString &dir, const QStringList &args, const QByteArray &input = {})
{
    QProcess p;
    p.setWorkingDirectory(dir);
    p.start(QStringLiteral("git"), args);
    if (!p.waitForStarted(10'000))
        return {false, {}, QStringLiteral("git could not be started: %1").arg(p.errorString())};
    if (!input.isEmpty())
        p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(60'000))
        return {false, {}, QStringLiteral("git %1 did not finish").arg(args.join(' '))};
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return {false, {}, QString::fromUtf8(p.readAllStandardError()).trimmed()};
    return {true, p.readAllStandardOutput(), {}};
}

QStringList nulSeparated(const QByteArray &out)
{
    QStringList paths;
    for (const QByteArray &part : out.split('\0'))
        if (!part.isEmpty())
            paths << QString::fromUtf8(part);
    paths.removeDuplicates();
    return paths;
}

// The main worktree's top folder: the parent of the common .git folder (the same for every
// linked worktree), else this worktree's top.
QString mainTop(const QString &dir, QString *error)
{
    const Git common = git(dir, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
    const Git top = git(dir, {"rev-parse", "--show-toplevel"});
    if (!top.ok) {
        *error = top.error.isEmpty() ? QStringLiteral("not in a git repository") : top.error;
        return {};
    }
    const QString commonDir = QString::fromUtf8(common.out).trimmed();
    if (common.ok && QFileInfo(commonDir).fileName() == QLatin1String(".git"))
        return QFileInfo(commonDir).absolutePath();
    return QString::fromUtf8(top.out).trimmed();
}

// Checks `paths` (repository-relative) with the service; the outcome of a commit or a push.
GitGuard::Outcome judge(const GitGuard::Settings &settings, const QStringList &paths,
                        const QString &what)
{
    if (qEnvironmentVariable("LEASEHOLD_GUARD")
            .compare(QLatin1String("off"), Qt::CaseInsensitive) == 0)
        return {
            0, {}, QStringLiteral("leasehold: LEASEHOLD_GUARD=off; %1 not checked\n").arg(what)};
    if (paths.isEmpty())
        return {};
    QString error;
    const QString top = mainTop(settings.workTree, &error);
    if (top.isEmpty())
        return {settings.strict ? 1 : 0, {}, QStringLiteral("leasehold: %1\n").arg(error)};
    const WorkspacePaths workspace(settings.root.isEmpty() ? top : settings.root);
    QStringList names;
    QHash<QString, QString> pathOf;
    for (const QString &path : paths) {
        const WorkspacePaths::Named n = workspace.name(top + QLatin1Char('/') + path);
        if (!n.judged())
            continue; // outside the shared root: no lease can cover it
        names << n.name;
        pathOf.insert(n.name, path);
    }
    ServiceClient service(settings.service);
    for (qsizetype from = 0; from < names.size(); from += kPerCheck) {
        json batch = json::array();
        for (const QString &n : names.mid(from, kPerCheck))
            batch.push_back(n.toStdString());
        const ServiceClient::Reply r = service.postNow(
            kCheck, {{"resources", batch}, {"mode", "write"}, {"op", what.toStdString()}});
        if (r.status == 200)
            continue;
        if (r.status == 409) {
            const QString name = QString::fromStdString(r.body.value("resource", std::string()));
            return {1,
                    {},
                    QStringLiteral("leasehold: %1 refused: %2 is under another agent's lease.\n"
                                   "  %3\n"
                                   "  Wait for the holder to release it, or ask them; "
                                   "LEASEHOLD_GUARD=off lets a person through.\n")
                        .arg(what, pathOf.value(name, name), r.explanation())};
        }
        const QString problem = QStringLiteral("leasehold: could not ask %1 about this %2: %3")
                                    .arg(settings.service.base.toString(), what, r.explanation());
        if (settings.strict)
            return {1, {}, problem + QStringLiteral("; refused (--strict)\n")};
        return {0, {}, problem + QStringLiteral("; not checked\n")};
    }
    return {};
}

} // namespace

GitGuard::Outcome GitGuard::preCommit(const Settings &settings)
{
    const Git staged =
        git(settings.workTree, {"diff", "--cached", "--name-only", "-z", "--no-renames"});
    if (!staged.ok)
        return {settings.strict ? 1 : 0, {}, QStringLiteral("leasehold: %1\n").arg(staged.error)};
    return judge(settings, nulSeparated(staged.out), QStringLiteral("commit"));
}

GitGuard::Outcome GitGuard::prePush(const Settings &settings, const QByteArray &pushed)
{
    QStringList paths;
    for (const QByteArray &line : pushed.split('\n')) {
        const QList<QByteArray> f = line.trimmed().split(' ');
        if (f.size() != 4 || f[1].count('0') == f[1].size())
            continue; // malformed, or a deletion: nothing of ours travels
        QStringList args = {"log",          "--format=", "--name-only",
                            "--no-renames", "-z",        QString::fromLatin1(f[1]),
                            "--not"};
        if (f[3].count('0') == f[3].size())
            args << QStringLiteral("--remotes"); // a new branch: what no remote has yet
        else
            args << QString::fromLatin1(f[3]);
        const Git changed = git(settings.workTree, args);
        if (!changed.ok)
            return {
                settings.strict ? 1 : 0, {}, QStringLiteral("leasehold: %1\n").arg(changed.error)};
        paths << nulSeparated(changed.out);
    }
    paths.removeDuplicates();
    return judge(settings, paths, QStringLiteral("push"));
}

GitGuard::Outcome GitGuard::install(const Settings &settings, const QString &binary,
                                    const QStringList &flags)
{
    const Git hooks =
        git(settings.workTree, {"rev-parse", "--path-format=absolute", "--git-path", "hooks"});
    if (!hooks.ok)
        return {1, {}, QStringLiteral("leasehold: %1\n").arg(hooks.error)};
    const QString dir = QString::fromUtf8(hooks.out).trimmed();
    QDir().mkpath(dir);
    QString quoted;
    for (const QString &flag : flags)
        quoted += QStringLiteral(" '") + QString(flag).replace('\'', QStringLiteral("'\\''")) +
                  QLatin1Char('\'');
    Outcome outcome;
    for (const char *hook : {"pre-commit", "pre-push"}) {
        const QString path = QDir(dir).filePath(QLatin1String(hook));
        QFile existing(path);
        if (existing.exists() &&
            (!existing.open(QIODevice::ReadOnly) || !existing.readAll().contains(kMarker))) {
            outcome.exitCode = 1;
            outcome.err += QStringLiteral("leasehold: %1 is someone else's hook; left as it is. "
                                          "Add this line to it: '%2' guard git %3%4\n")
                               .arg(path, binary, QLatin1String(hook), quoted);
            continue;
        }
        QSaveFile out(path);
        const QByteArray script = "#!/bin/sh\n" + kMarker +
                                  ": a change under another agent's write lease is refused.\n"
                                  "# LEASEHOLD_GUARD=off lets a person through.\n"
                                  "exec '" +
                                  binary.toUtf8() + "' guard git " + hook + quoted.toUtf8() +
                                  " \"$@\"\n";
        if (!out.open(QIODevice::WriteOnly) || out.write(script) < 0 || !out.commit()) {
            outcome.exitCode = 1;
            outcome.err += QStringLiteral("leasehold: cannot write %1\n").arg(path);
            continue;
        }
        QFile::setPermissions(path, QFile::permissions(path) | QFile::ExeOwner | QFile::ExeGroup |
                                        QFile::ExeOther);
        outcome.out += QStringLiteral("%1: installed\n").arg(path);
    }
    return outcome;
}

#include "hookstate.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <unistd.h>

namespace {

QString digest(const QString &text)
{
    return QString::fromLatin1(
        QCryptographicHash::hash(text.toUtf8(), QCryptographicHash::Sha256).toHex().left(32));
}

} // namespace

HookState::HookState(QString folder)
    : m_folder(folder.isEmpty() ? defaultFolder() : std::move(folder))
{}

QString HookState::defaultFolder()
{
    const QString runtime = qEnvironmentVariable("XDG_RUNTIME_DIR");
    if (!runtime.isEmpty() && QFileInfo(runtime).isDir())
        return runtime + QStringLiteral("/leasehold-hooks");
    return QDir::tempPath() + QStringLiteral("/leasehold-hooks-%1").arg(::getuid());
}

QString HookState::sessionFolder(const QString &dialect, const QString &session) const
{
    return m_folder + QLatin1Char('/') + digest(dialect + QLatin1Char('\n') + session);
}

QString HookState::callFile(const QString &dialect, const QString &session,
                            const QString &call) const
{
    return sessionFolder(dialect, session) + QLatin1Char('/') + digest(call);
}

void HookState::rememberStart(const QString &dialect, const QString &session, const QString &call,
                              qint64 atMs)
{
    const QString folder = sessionFolder(dialect, session);
    // Private: another user must not learn what runs, nor plant a start time (a folder of
    // theirs in a shared temporary folder is not used).
    if (!QDir().mkpath(folder) || QFileInfo(m_folder).ownerId() != ::getuid())
        return;
    QFile::setPermissions(m_folder,
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QSaveFile out(callFile(dialect, session, call));
    if (out.open(QIODevice::WriteOnly)) {
        out.write(QByteArray::number(atMs));
        out.commit();
    }
}

std::optional<qint64> HookState::takeStart(const QString &dialect, const QString &session,
                                           const QString &call)
{
    QFile in(callFile(dialect, session, call));
    if (!in.open(QIODevice::ReadOnly))
        return std::nullopt;
    bool ok = false;
    const qint64 at = in.read(32).trimmed().toLongLong(&ok);
    in.remove();
    return ok ? std::optional<qint64>(at) : std::nullopt;
}

void HookState::forgetSession(const QString &dialect, const QString &session)
{
    QDir(sessionFolder(dialect, session)).removeRecursively();
}

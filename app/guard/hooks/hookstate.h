#pragma once

#include <QString>

#include <optional>

// When each of a session's shell commands started, kept between a hook's pre-tool and
// post-tool runs (two processes), so the post-tool event reports exactly the filesystem gate's
// refusals made while the command ran. One small file per call, below a folder per session:
// $XDG_RUNTIME_DIR/leasehold-hooks (else the system's temporary folder,
// leasehold-hooks-<uid>), private to the user. Names are digests of the dialect, session and
// call, so no event text becomes a path. A call's entry is taken by its post-tool event; a
// session's folder goes when the session's turn or the session ends.
//
// Thread-safety: none needed (each hook process makes one); processes of parallel calls touch
// different files.
class HookState
{
public:
    // `folder` empty: the default above.
    explicit HookState(QString folder = {});

    void rememberStart(const QString &dialect, const QString &session, const QString &call,
                       qint64 atMs);
    // The start of `call`, removing it; nothing when it was never remembered.
    std::optional<qint64> takeStart(const QString &dialect, const QString &session,
                                    const QString &call);
    void forgetSession(const QString &dialect, const QString &session);

    static QString defaultFolder();

private:
    QString sessionFolder(const QString &dialect, const QString &session) const;
    QString callFile(const QString &dialect, const QString &session, const QString &call) const;

    QString m_folder;
};

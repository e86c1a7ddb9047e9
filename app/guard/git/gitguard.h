#pragma once

#include "serviceclient.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

// `leasehold guard git install | pre-commit | pre-push`: a commit (or a push) that changes a path
// under another agent's write lease is refused, naming the holder.
//
// Paths are the repository's, named as the service names them: below the main worktree's top
// folder, relative to the root (default: that folder), so a linked worktree (`git worktree
// add`) checks the same names as the main one. LEASEHOLD_GUARD=off lets a person through. When
// the service cannot be asked the commit goes ahead with a warning (a person's commit is not
// held hostage), or with `strict` is refused.
struct GitGuard
{
    struct Settings
    {
        ServiceClient::Settings service; // via "git"
        QString workTree;                // where git runs (the hook's current folder)
        QString root;                    // empty: the main worktree's top folder
        bool strict = false;
    };
    struct Outcome
    {
        int exitCode = 0;
        QString out;
        QString err;
    };

    static Outcome preCommit(const Settings &settings);
    // `pushed`: what git gives a pre-push hook on stdin ("<local ref> <sha> <remote ref> <sha>").
    static Outcome prePush(const Settings &settings, const QByteArray &pushed);
    // Writes pre-commit and pre-push hooks running `binary guard git ... flags` into the
    // repository's hooks folder (core.hooksPath respected, shared by linked worktrees). A hook
    // of someone else's already there is left alone and named.
    static Outcome install(const Settings &settings, const QString &binary,
                           const QStringList &flags);
};

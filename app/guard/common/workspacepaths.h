#pragma once

#include <QString>

// Where a tool's path argument lands in the workspace, as the service names it: relative paths
// are taken from the root, symlinks are resolved (on the file when it exists, else on its
// nearest existing folder), and the result is named `fs:<path below the root>` (a *, ?, [ or ]
// in a file name escaped, so a name is never a pattern), so that every
// guard, hook and the service's own fs_* tools give one file one name.
//
// Thread-safety: immutable after construction.
class WorkspacePaths
{
public:
    struct Named
    {
        QString name;    // "fs:src/app.cpp", "fs:." for the root itself; empty when not judged
        QString problem; // why not: "outside the root /srv/work", "not a path"
        bool judged() const { return !name.isEmpty(); }
    };

    // `root` need not be canonical; it is resolved once here.
    explicit WorkspacePaths(const QString &root);

    Named name(const QString &path) const;
    const QString &root() const { return m_root; }

private:
    QString m_root; // canonical, without a trailing '/'
};

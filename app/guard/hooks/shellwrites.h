#pragma once

#include <QString>
#include <QStringList>

#include <functional>

// The files a shell command line plainly writes, so a hook can check them like an edit before
// an agent's shell tool runs it. Read, in every simple command of the line (split at ;, &&, ||,
// |, &, newlines and parentheses; `bash -c '...'` and `sh -c` are read inside):
//   - output redirections: > >> >| &> &>> N> N>> (not >&N, not /dev/null and the like)
//   - tee [-a] FILE...            - sed -i / --in-place ... FILE...   - touch FILE...
//   - cp ... DEST, cp -t DIR ...  (a destination that is a folder gets each source's name)
//   - mv ... DEST (and its sources, which it removes)               - rm ... FILE...
//   - git checkout -- FILE...,  git restore FILE...
// past `VAR=value` prefixes and sudo, env, command, exec, nohup, time, nice; `cd DIR` moves the
// folder later relative paths are read from. A word the hook cannot know without running the
// shell - $VAR, $(...), `...`, a glob, a brace list - names nothing: such writes, and every
// program that writes on its own (a formatter, a code generator, a build), are left to the
// filesystem gate (`leasehold run`), which sees the writes themselves.
//
// Paths come back as written, made relative to the command's starting folder by any `cd`
// (absolute ones stay absolute), in order, each once.
//
// Pure function of its input (and of `isDirectory`); any thread.
namespace shellwrites {

// Whether `path` (as the parser produced it) is an existing folder: cp's and mv's destination.
using IsDirectory = std::function<bool(const QString &path)>;

QStringList files(const QString &command, const IsDirectory &isDirectory = {});

} // namespace shellwrites

#pragma once

#include <QString>
#include <QStringList>

// The files an apply_patch text changes (Codex's `apply_patch` tool, opencode's with a GPT
// model): the paths of its `*** Add File:`, `*** Update File:` and `*** Delete File:` headers
// and of each `*** Move to:` (a move changes both ends), as written - relative to the agent's
// working folder, or absolute - in order, each once. A hunk's lines start with ' ', '+', '-' or
// "@@", so a line starting with "*** " is a header, as the tool itself reads it.
//
// Pure function; any thread.
namespace applypatch {
QStringList files(const QString &patch);
}

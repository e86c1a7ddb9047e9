#pragma once

#include <QByteArray>
#include <QStringList>

// The opencode plugin `leasehold ctl install-hooks opencode` writes
// (.opencode/plugins/leasehold.js): before each edit, write, multiedit, patch and bash call it
// awaits `leasehold hook opencode` (opencodehook.cpp) and throws the reason of a denial, which
// the model reads as the tool's error; after one it appends the hook's context to the tool's
// output; when a session (not a sub-agent's) goes idle it has the session's leases released.
// A sub-agent's calls are the session's that started it, so a parent and its sub-agents are
// one agent. opencode has no hook timeout of its own, so the plugin kills a hook still running
// `limitMs` after it started and lets the call through with a warning (the hook itself answers
// long before).
//
// Pure functions; any thread.
namespace opencodeplugin {

// The file's text, running `command` (the program and its arguments).
QByteArray source(const QStringList &command, int limitMs);
// Whether `text` is a plugin this writes (any version): only such a file is replaced.
bool isOurs(const QByteArray &text);

} // namespace opencodeplugin

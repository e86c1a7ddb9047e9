#pragma once

#include "connection.h"
#include "options.h"
#include "serviceclient.h"

#include <QStringList>

#include <optional>
#include <vector>

class QCommandLineParser;

namespace guardcli {
// The flags every guard shares: where the instance is, who to be there, the root, --strict.
const std::vector<AppFlag> &connectionFlags();
// Parses `arguments` (starting with the program name) with those flags and `extra`; on --help
// or a bad flag prints and returns false with the exit code in `exitCode`.
bool parse(QCommandLineParser &parser, const QStringList &arguments, const QString &usage,
           const std::vector<AppFlag> &extra, int *exitCode);
// Where the instance is and who to be there, as `via` (Connection::resolve); on a bad flag
// prints why as `who` and sets `exitCode` to `failCode`.
std::optional<ServiceClient::Settings> serviceFrom(const QCommandLineParser &parser,
                                                   Connection::Sources sources, const char *via,
                                                   const char *who, int failCode, int *exitCode);
} // namespace guardcli

// `leasehold hook claude-code|codex|gemini|copilot|qwen|opencode ...`: answers one hook event
// of that agent (stdin to stdout, app/guard/hooks/hookrun.h).
int runHook(const QStringList &arguments);
// `leasehold guard mcp|git ...`: the guards in front of the tools agents already use.
int runGuard(const QStringList &arguments);
// `leasehold ctl install-hooks NAME [--project DIR | --user]`: writes that agent's hook
// configuration (app/guard/hooks/hookinstall.h); `hookFlags` are passed on to the hook's
// command line. Returns 0 done, 1 a file could not be read or written, 2 bad usage.
int installHooks(const QString &agent, const QString &projectDir, bool user,
                 const QStringList &hookFlags, int waitSeconds);

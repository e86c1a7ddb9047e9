#pragma once

#include <QString>
#include <QStringList>

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

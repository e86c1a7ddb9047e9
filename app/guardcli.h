#pragma once

#include <QStringList>

// `leasehold hook claude-code ...`: answers one Claude Code hook event (stdin to stdout).
int runHook(const QStringList &arguments);
// `leasehold guard mcp|git ...`: the guards in front of the tools agents already use.
int runGuard(const QStringList &arguments);
// `leasehold ctl install-hooks claude-code [--project DIR]`: merges the hook entries into the
// project's .claude/settings.json; `hookFlags` are passed on to the hook's command line.
int installClaudeHooks(const QString &projectDir, const QStringList &hookFlags);

#pragma once

#include <QString>
#include <QStringList>

// `leasehold ctl install-hooks NAME [--project DIR | --user] [--url URL] [--wait SECONDS]`:
// writes one coding agent's configuration so that its tools run `leasehold hook NAME`.
//
//   claude-code  .claude/settings.json      PreToolUse, PostToolUse(+Failure), Stop, SessionEnd
//   codex        .codex/hooks.json           PreToolUse, PostToolUse, Stop, SessionEnd
//   gemini       .gemini/settings.json       BeforeTool, AfterTool, AfterAgent, SessionEnd
//   copilot      .github/hooks/leasehold.json  preToolUse, postToolUse(+Failure), agentStop,
//                                            sessionEnd (each with --event: its payload does
//                                            not name the event)
//   qwen         .qwen/settings.json         PreToolUse, PostToolUse(+Failure), Stop, SessionEnd
//   opencode     .opencode/plugins/leasehold.js  the plugin (opencodeplugin.h)
//
// in the project (default the current folder) or, with --user, the user's own configuration
// (~/.claude, $CODEX_HOME or ~/.codex, ~/.gemini, ~/.copilot/hooks, ~/.qwen,
// $XDG_CONFIG_HOME/opencode or ~/.config/opencode). Idempotent: run twice, the file is left
// as it is, byte for byte; the user's own entries and settings stay, in their order; a
// Leasehold entry of an earlier install is updated in place. The pre-tool hook's timeout is set
// in the agent's unit (seconds; Gemini CLI milliseconds; Copilot CLI timeoutSec) to the wait
// plus a margin, so the hook - which answers within the wait plus 5 s - always answers before
// the agent gives up on it. The key never goes into a file: the hook reads LEASEHOLD_KEY from
// the agent's environment. What the user must still do (trust the project's hooks, the folder)
// is printed.
//
// Thread: any (file I/O only).
namespace hookinstall {

struct Request
{
    QString agent;      // one of HookDialect::names()
    QString projectDir; // "": the current folder
    bool user = false;  // the user's configuration instead of the project's
    QString program;    // how the configuration runs leasehold: "leasehold" or a path
    QStringList flags;  // passed on to the hook (--url URL)
    int waitSeconds = 20;
    QString home; // "": $HOME
};

struct Result
{
    int exitCode = 0; // 0 done (or nothing to do), 1 the file could not be read or written, 2 usage
    QString out;
    QString err;
};

Result install(const Request &request);

// The margin install-hooks leaves above the wait: the hook answers within wait + 5 s.
inline constexpr int kTimeoutMarginSeconds = 15;
// The longest wait a hook may ask for (the service parks a REST request at most 30 s).
inline constexpr int kMaxWaitSeconds = 30;

// The program a configuration should run: "leasehold" when that is what PATH finds and it is
// this very binary, else the binary's absolute path.
QString programFor(const QString &binary);

} // namespace hookinstall

// Codex: Claude Code's hooks format in .codex/hooks.json. Its edit tool is apply_patch, whose
// input is the patch text (tool_input.command) naming every file in its headers (`*** Add
// File:`, `*** Update File:`, `*** Delete File:`, `*** Move to:`), relative to the session's
// folder; its shell (exec_command and the older shell tools) arrives as Bash with the command
// line in tool_input.command (a string, or an argument list ending in the script). Stop is
// awaited; SessionEnd is killed within about a second, so the core sends its release first.
// Codex gives no project-folder variable: the event's cwd is the project.

#include "claudecodehook.h"
#include "dialects.h"

const HookDialect &codexDialect()
{
    static const ClaudeStyleDialect dialect({
        .name = "codex",
        .edits = {{"Edit", {"file_path", "path"}}, {"Write", {"file_path", "path"}}},
        .patches = {{"apply_patch", {"command", "patch", "input"}}},
        .shells = {{"Bash", {"command", "cmd"}},
                   {"exec_command", {"cmd", "command"}},
                   {"shell", {"command", "cmd"}},
                   {"local_shell", {"command", "cmd"}}},
        .pre = "PreToolUse",
        .post = "PostToolUse",
        .postFailure = "",
        .stop = "Stop",
        .end = "SessionEnd",
        .projectDirVariables = {},
        .callIdFields = {"tool_use_id"},
    });
    return dialect;
}

// Qwen Code: Claude Code's hooks in .qwen/settings.json, with its own tool names. PreToolUse /
// PostToolUse / PostToolUseFailure of edit, write_file (file_path), notebook_edit
// (notebook_path) and run_shell_command (command); Stop. SessionEnd exists but never fires in
// `qwen -p`, so Stop is what releases there. A call's id is tool_use_id (Qwen's own; the
// model's is tool_call_id), the same in a call's pre- and post-tool events.

#include "claudecodehook.h"
#include "dialects.h"

const HookDialect &qwenDialect()
{
    static const ClaudeStyleDialect dialect({
        .name = "qwen",
        .edits = {{"edit", {"file_path"}},
                  {"write_file", {"file_path"}},
                  {"notebook_edit", {"notebook_path", "file_path"}}},
        .patches = {},
        .shells = {{"run_shell_command", {"command"}}},
        .pre = "PreToolUse",
        .post = "PostToolUse",
        .postFailure = "PostToolUseFailure",
        .stop = "Stop",
        .end = "SessionEnd",
        .projectDirVariables = {"QWEN_PROJECT_DIR", "CLAUDE_PROJECT_DIR"},
        .callIdFields = {"tool_use_id", "tool_call_id"},
    });
    return dialect;
}

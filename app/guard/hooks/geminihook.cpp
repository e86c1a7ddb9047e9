// Gemini CLI: hooks in .gemini/settings.json, events in Claude Code's shape with its own names:
// BeforeTool / AfterTool of write_file, replace (file_path) and run_shell_command (command);
// AfterAgent when a turn ends; SessionEnd. Its calls carry no id, so a call's input matches its
// pre- and post-tool events. A denial is {"decision": "deny", "reason"} (the reason reaches the
// model as the tool's error); context is hookSpecificOutput.additionalContext of AfterTool.

#include "claudecodehook.h"
#include "dialects.h"

namespace {

class GeminiDialect : public ClaudeStyleDialect
{
public:
    using ClaudeStyleDialect::ClaudeStyleDialect;

    HookAnswer deny(const HookEvent &, const QString &reason) const override
    {
        return {0, hookjson::line({{"decision", "deny"}, {"reason", reason.toStdString()}}), {}};
    }
};

} // namespace

const HookDialect &geminiDialect()
{
    static const GeminiDialect dialect({
        .name = "gemini",
        .edits = {{"write_file", {"file_path"}}, {"replace", {"file_path"}}},
        .patches = {},
        .shells = {{"run_shell_command", {"command"}}},
        .pre = "BeforeTool",
        .post = "AfterTool",
        .postFailure = "",
        .stop = "AfterAgent",
        .end = "SessionEnd",
        .projectDirVariables = {"GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"},
        .callIdFields = {},
    });
    return dialect;
}

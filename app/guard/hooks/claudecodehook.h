#pragma once

#include "hookdialect.h"

#include <vector>

// The dialect of the agents whose hooks send Claude Code's shape of event (snake_case,
// hook_event_name, session_id, tool_name, tool_input, cwd) - Claude Code itself, Qwen Code,
// Codex and Gemini CLI - read over a table of each agent's tools and event names. The
// answers are Claude Code's (Gemini CLI writes its own denial, geminihook.cpp).
//
// Claude Code (the table below): PreToolUse / PostToolUse / PostToolUseFailure of Edit,
// Write, MultiEdit (file_path), NotebookEdit (notebook_path) and Bash (command); Stop;
// SessionEnd. Its project folder is $CLAUDE_PROJECT_DIR; a call's id is tool_use_id.
class ClaudeStyleDialect : public HookDialect
{
public:
    // A tool and the input fields that hold what it works on, first non-empty wins.
    struct ToolFields
    {
        const char *tool;
        std::vector<const char *> fields;
    };
    struct Table
    {
        const char *name;
        std::vector<ToolFields> edits;   // the fields name the file changed
        std::vector<ToolFields> patches; // the field holds an apply_patch text
        std::vector<ToolFields> shells;  // the field holds a command line
        // The agent's event names; "" when it has no such event.
        const char *pre;
        const char *post;
        const char *postFailure;
        const char *stop;
        const char *end;
        std::vector<const char *> projectDirVariables;
        std::vector<const char *> callIdFields;
    };

    explicit ClaudeStyleDialect(Table table)
        : m_table(std::move(table))
    {}

    QString name() const override { return QString::fromLatin1(m_table.name); }
    std::optional<HookEvent> parse(const nlohmann::json &input,
                                   const QString &eventName) const override;
    QStringList projectDirVariables() const override;
    // Claude Code's answers: hookSpecificOutput.permissionDecision "deny" with the reason,
    // systemMessage for the user, hookSpecificOutput.additionalContext for the model.
    HookAnswer deny(const HookEvent &event, const QString &reason) const override;
    HookAnswer warn(const HookEvent &event, const QString &message) const override;
    HookAnswer addContext(const HookEvent &event, const QString &text) const override;

private:
    Table m_table;
};

#pragma once

#include <QString>

#include <nlohmann/json.hpp>

// The hook entries `leasehold ctl install-hooks claude-code` puts in a Claude Code settings file
// (.claude/settings.json): PreToolUse and PostToolUse for the tools that edit files, Stop and
// SessionEnd, each running `command`. Merging keeps every hook already there (the user's own,
// other tools') and adds an entry only where no hook runs `command` yet, so running it twice
// changes nothing.
namespace claudesettings {

// The tools whose edits are guarded, as a hook matcher.
inline constexpr const char *kEditTools = "Edit|Write|MultiEdit|NotebookEdit";

// `settings` with the entries merged in; `added` counts the entries that were new. A settings
// value that is not an object (or whose "hooks" is not one) is an error, not overwritten.
nlohmann::json merge(nlohmann::json settings, const std::string &command, int *added,
                     QString *error);

} // namespace claudesettings

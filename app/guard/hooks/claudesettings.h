#pragma once

#include <QString>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// Leasehold's entries in a settings file of Claude Code's hooks format, which Claude Code
// (.claude/settings.json), Qwen Code (.qwen/settings.json), Codex (.codex/hooks.json) and Gemini
// CLI (.gemini/settings.json) all read:
//   {"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "...",
//                                                         "timeout": N}]}]}}
// The merge keeps everything else in the file as it was, in its order (ordered_json): the
// user's own hooks, other tools', every other setting. Leasehold's own hook of an event is the
// one whose command runs `leasehold hook <agent>` (whatever the flags after it); it is updated
// in place to the wanted command, matcher and timeout, or added as a group of its own when the
// event has none. So running install-hooks again changes nothing, and with other flags changes
// just those.
//
// Pure functions; any thread.
namespace claudesettings {

using Json = nlohmann::ordered_json;

struct Entry
{
    const char *event;          // "PreToolUse"
    const char *matcher;        // nullptr: the event takes no matcher
    int timeout = 0;            // in the agent's unit; 0: the agent's default
    const char *name = nullptr; // Gemini CLI names each hook (nullptr: no name)
};

struct Wanted
{
    std::vector<Entry> entries;
    std::string command; // the hook command line, up to the event's own flags
    std::string agent;   // "claude-code": Leasehold's hook is `... hook claude-code ...`
    const char *timeoutField = "timeout";
};

// `settings` with the entries merged in; `changed` counts the entries added or updated. A
// settings value that is not an object (or whose "hooks", or one of its events, has another
// shape than the format's) is an error, and is not overwritten.
Json merge(Json settings, const Wanted &wanted, int *changed, QString *error);

// Whether `command` runs Leasehold's hook for `agent` (`leasehold hook AGENT`, the program by
// any path, quoted or not).
bool isLeaseholdHook(const std::string &command, const std::string &agent);

} // namespace claudesettings

#include "claudesettings.h"

using nlohmann::json;

namespace claudesettings {

namespace {

bool runs(const json &group, const std::string &command)
{
    if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array())
        return false;
    for (const json &hook : group["hooks"])
        if (hook.is_object() && hook.value("command", json()).is_string() &&
            hook["command"].get<std::string>() == command)
            return true;
    return false;
}

} // namespace

json merge(json settings, const std::string &command, int *added, QString *error)
{
    *added = 0;
    if (settings.is_null())
        settings = json::object();
    if (!settings.is_object()) {
        *error = QStringLiteral("the settings file is not a JSON object");
        return settings;
    }
    json &hooks = settings["hooks"];
    if (hooks.is_null())
        hooks = json::object();
    if (!hooks.is_object()) {
        *error = QStringLiteral("\"hooks\" in the settings file is not an object");
        return settings;
    }
    const struct
    {
        const char *event;
        const char *matcher; // nullptr: the event has no matcher
    } wanted[] = {{"PreToolUse", kEditTools},
                  {"PostToolUse", kEditTools},
                  {"Stop", nullptr},
                  {"SessionEnd", nullptr}};
    for (const auto &w : wanted) {
        json &groups = hooks[w.event];
        if (groups.is_null())
            groups = json::array();
        if (!groups.is_array()) {
            *error = QStringLiteral("\"hooks.%1\" in the settings file is not an array")
                         .arg(QLatin1String(w.event));
            return settings;
        }
        bool present = false;
        for (const json &group : groups)
            present = present || runs(group, command);
        if (present)
            continue;
        json group = {{"hooks", json::array({{{"type", "command"}, {"command", command}}})}};
        if (w.matcher)
            group["matcher"] = w.matcher;
        groups.push_back(std::move(group));
        ++*added;
    }
    return settings;
}

} // namespace claudesettings

#include "claudesettings.h"

#include <regex>

namespace claudesettings {

namespace {

// Leasehold's hook in `group`, or nullptr.
Json *ours(Json &group, const std::string &agent)
{
    if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array())
        return nullptr;
    for (Json &hook : group["hooks"]) {
        if (hook.is_object() && hook.contains("command") && hook["command"].is_string() &&
            isLeaseholdHook(hook["command"].get<std::string>(), agent))
            return &hook;
    }
    return nullptr;
}

// Sets `object[field]` to `value`; true when that changed anything.
template<typename T> bool put(Json &object, const char *field, const T &value)
{
    const Json wanted = value;
    if (object.contains(field) && object[field] == wanted)
        return false;
    object[field] = wanted;
    return true;
}

} // namespace

bool isLeaseholdHook(const std::string &command, const std::string &agent)
{
    // `leasehold hook AGENT`, `/usr/bin/leasehold hook AGENT ...`, `'/a b/leasehold' hook AGENT`.
    static const std::regex program(
        R"(^\s*(?:'(?:[^']*/)?leasehold'|(?:\S*/)?leasehold)\s+hook\s+(\S+)(?:\s|$))");
    std::smatch m;
    return std::regex_search(command, m, program) && m[1].str() == agent;
}

Json merge(Json settings, const Wanted &wanted, int *changed, QString *error)
{
    *changed = 0;
    if (settings.is_null())
        settings = Json::object();
    if (!settings.is_object()) {
        *error = QStringLiteral("the settings file is not a JSON object");
        return settings;
    }
    Json &hooks = settings["hooks"];
    if (hooks.is_null())
        hooks = Json::object();
    if (!hooks.is_object()) {
        *error = QStringLiteral("\"hooks\" in the settings file is not an object");
        return settings;
    }
    for (const Entry &e : wanted.entries) {
        Json &groups = hooks[e.event];
        if (groups.is_null())
            groups = Json::array();
        if (!groups.is_array()) {
            *error = QStringLiteral("\"hooks.%1\" in the settings file is not an array")
                         .arg(QLatin1String(e.event));
            return settings;
        }
        Json *hook = nullptr;
        Json *home = nullptr;
        for (Json &group : groups) {
            if ((hook = ours(group, wanted.agent))) {
                home = &group;
                break;
            }
        }
        if (!hook) {
            Json group = Json::object();
            if (e.matcher)
                group["matcher"] = e.matcher;
            group["hooks"] = Json::array({Json::object()});
            groups.push_back(std::move(group));
            home = &groups.back();
            hook = &(*home)["hooks"][0];
        }
        bool touched = false;
        // A group of Leasehold's alone takes the wanted matcher; in a group shared with other
        // hooks the user chose the matcher.
        if (e.matcher && (*home)["hooks"].size() == 1)
            touched |= put(*home, "matcher", std::string(e.matcher));
        if (e.name)
            touched |= put(*hook, "name", std::string(e.name));
        touched |= put(*hook, "type", std::string("command"));
        touched |= put(*hook, "command", wanted.command);
        if (e.timeout > 0)
            touched |= put(*hook, wanted.timeoutField, e.timeout);
        *changed += touched ? 1 : 0;
    }
    return settings;
}

} // namespace claudesettings

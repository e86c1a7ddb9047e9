#include "ledgerjson.h"

namespace leasehold {

using nlohmann::json;

namespace {

json orNull(const std::string &s)
{
    return s.empty() ? json(nullptr) : json(s);
}

std::string text(const json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

template<class T> T number(const json &j, const char *key, T otherwise)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<T>() : otherwise;
}

bool flag(const json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

} // namespace

json toJson(const LedgerEvent &e)
{
    json j = {{"seq", e.seq},
              {"at", e.at},
              {"kind", eventKindName(e.kind)},
              {"actorDid", e.actorDid},
              {"resource", orNull(e.resource)},
              {"leaseId", orNull(e.leaseId)},
              {"token", e.token == 0 ? json(nullptr) : json(e.token)},
              {"reason", orNull(e.reason)}};
    const EventFacts &f = e.facts;
    if (e.ttlMs > 0)
        j["ttlMs"] = e.ttlMs;
    if (!f.op.empty())
        j["op"] = f.op;
    if (carriesMode(e))
        j["mode"] = modeName(f.mode);
    if (f.waitedMs >= 0)
        j["waitedMs"] = f.waitedMs;
    if (!f.holder.empty())
        j["holder"] = f.holder;
    if (!f.cycle.empty()) {
        json cycle = json::array();
        for (const CycleStep &s : f.cycle)
            cycle.push_back({{"agent", s.agent}, {"resource", s.resource}});
        j["cycle"] = std::move(cycle);
    }
    if (!f.by.empty())
        j["by"] = f.by;
    if (f.whileDown)
        j["whileDown"] = true;
    if (!f.target.empty())
        j["target"] = f.target;
    if (f.released >= 0)
        j["released"] = f.released;
    if (e.kind == EventKind::AdminSuspend)
        j["suspended"] = f.suspended;
    if (e.kind == EventKind::AdminPause)
        j["paused"] = f.paused;
    if (!f.pinId.empty())
        j["pinId"] = f.pinId;
    if (!f.via.empty())
        j["via"] = f.via;
    if (f.pid >= 0)
        j["pid"] = f.pid;
    if (!f.command.empty())
        j["command"] = f.command;
    if (f.heldBackMs > 0)
        j["heldBackMs"] = f.heldBackMs;
    if (!f.requestId.empty())
        j["requestId"] = f.requestId;
    if (!f.urgency.empty())
        j["urgency"] = f.urgency;
    if (isReleaseRequestEvent(e.kind))
        j["deadlineAt"] = f.deadlineAt > 0 ? json(f.deadlineAt) : json(nullptr);
    if (!f.requester.empty())
        j["requester"] = f.requester;
    if (e.kind == EventKind::WorkspaceMutation) {
        j["before"] = orNull(f.before);
        j["after"] = orNull(f.after);
        if (!f.to.empty())
            j["to"] = f.to;
    }
    return j;
}

std::optional<LedgerEvent> ledgerEventFromJson(const json &j)
{
    if (!j.is_object())
        return std::nullopt;
    const std::optional<EventKind> kind = eventKindFromName(text(j, "kind"));
    if (!kind)
        return std::nullopt;
    LedgerEvent e;
    e.kind = *kind;
    e.seq = number<std::uint64_t>(j, "seq", 0);
    e.at = number<TimeMs>(j, "at", 0);
    e.actorDid = text(j, "actorDid");
    e.resource = text(j, "resource");
    e.leaseId = text(j, "leaseId");
    e.token = number<std::uint64_t>(j, "token", 0);
    e.ttlMs = number<std::int64_t>(j, "ttlMs", 0);
    e.reason = text(j, "reason");
    EventFacts &f = e.facts;
    f.op = text(j, "op");
    f.mode = parseMode(text(j, "mode")).value_or(Mode::Write);
    f.waitedMs = number<std::int64_t>(j, "waitedMs", -1);
    f.holder = text(j, "holder");
    if (const auto it = j.find("cycle"); it != j.end() && it->is_array()) {
        for (const json &step : *it)
            f.cycle.push_back({text(step, "agent"), text(step, "resource")});
    }
    f.by = text(j, "by");
    f.whileDown = flag(j, "whileDown");
    f.target = text(j, "target");
    f.released = number<std::int64_t>(j, "released", -1);
    f.suspended = flag(j, "suspended");
    f.paused = flag(j, "paused");
    f.pinId = text(j, "pinId");
    f.before = text(j, "before");
    f.after = text(j, "after");
    f.to = text(j, "to");
    f.via = text(j, "via");
    f.pid = number<std::int64_t>(j, "pid", -1);
    f.command = text(j, "command");
    f.heldBackMs = number<std::int64_t>(j, "heldBackMs", 0);
    f.requestId = text(j, "requestId");
    f.urgency = text(j, "urgency");
    f.deadlineAt = number<TimeMs>(j, "deadlineAt", 0);
    f.requester = text(j, "requester");
    return e;
}

} // namespace leasehold

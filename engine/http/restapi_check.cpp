// RestApi: POST /check, the question a guard asks before it lets an agent's own tool change a
// file: does another agent's lease stand in the way, is the change covered by the caller's own
// lease, and how many agents are live (strict mode). Nothing is taken or recorded; on request
// the covering leases are pinned while the change lands.

#include "agentpresence.h"
#include "fieldreader.h"
#include "jsonviews.h"
#include "leaserequests.h"
#include "mcptools.h"
#include "restapi.h"

#include <limits>
#include <set>

namespace leasehold {

using nlohmann::json;

void RestApi::check(const RestCall &call, const Respond &answerTo) const
{
    const std::optional<AgentCall> in = agentCall(call, answerTo);
    if (!in)
        return;
    const Respond respond = holderReply(answerTo, in->actor);
    FieldReader r(in->body);
    std::optional<std::vector<std::string>> texts;
    if (r.has("resource")) {
        if (const auto one = r.string("resource", true, kMaxNameBytes))
            texts = std::vector<std::string>{*one};
    } else {
        texts = r.strings("resources", false, kMaxResourcesPerCall, kMaxNameBytes);
    }
    const auto modeText = r.string("mode", false, 16);
    const auto pin = r.boolean("pin", false);
    const auto wording = r.string("wording", false, 16);
    const auto op = r.string("op", false, 64);
    const auto pid = r.integer("pid", false, 0, std::numeric_limits<std::int32_t>::max());
    const auto command = r.string("command", false, 64);
    if (r.failed())
        return respond(invalid(r.error()));
    const std::optional<Mode> mode = modeText ? parseMode(*modeText) : Mode::Write;
    if (!mode)
        return respond(invalid("mode must be read, write or delete"));
    const std::optional<NextSteps> steps = wordingSteps(wording.value_or("rest"));
    if (!steps)
        return respond(invalid("wording must be rest, lock or tool"));
    std::string error;
    std::vector<ResourceName> names;
    if (texts && !texts->empty()) {
        auto parsed = parseNames(m_host.parser(), *texts,
                                 r.has("resource") ? "resource" : "resources", &error);
        if (!parsed)
            return respond(invalid(error));
        names = std::move(*parsed);
    }

    LeaseEngine &engine = m_host.engine();
    for (const ResourceName &name : names) {
        const std::optional<Refusal> no = engine.changeRefusal(in->actor, name, *mode);
        if (!no)
            continue;
        // Operators see the agents a guard stopped, as they see refused acquires.
        const Via via = callerVia(call, Via::Rest);
        const LeaseEngine::GuardAsk ask{
            op.value_or("check"), via == Via::Rest ? std::string() : std::string(viaName(via)),
            pid.value_or(-1), command.value_or(std::string())};
        m_host.run([&](LeaseEngine &e) { e.recordGuardRefusal(in->actor, *no, ask); });
        return respond(refusal(*no, *steps));
    }

    json covered = json::array();
    json uncovered = json::array();
    std::set<std::string> leaseIds;
    for (const ResourceName &name : names) {
        const std::optional<LeaseInfo> cover = engine.coveringLease(in->actor, name);
        if (!cover) {
            uncovered.push_back(name.canonical());
            continue;
        }
        covered.push_back({{"resource", name.canonical()}, {"leaseId", cover->leaseId}});
        leaseIds.insert(cover->leaseId);
    }
    json pins = json::array();
    if (pin.value_or(false)) {
        for (const std::string &leaseId : leaseIds) {
            const PinResult pinned =
                m_host.run([&](LeaseEngine &e) { return e.pin(in->actor, leaseId); });
            if (const auto *p = std::get_if<PinInfo>(&pinned))
                pins.push_back(toJson(*p));
        }
    }
    const int live = m_presence ? m_presence->liveAgents() : 0;
    HttpReply reply;
    reply.body = {{"ok", true},
                  {"actorDid", in->actor},
                  {"covered", std::move(covered)},
                  {"uncovered", std::move(uncovered)},
                  {"pins", std::move(pins)},
                  {"liveAgents", live},
                  {"strict", live > 1}};
    respond(std::move(reply));
}

} // namespace leasehold

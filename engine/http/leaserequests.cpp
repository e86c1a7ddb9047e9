#include "leaserequests.h"

#include "fieldreader.h"

#include <algorithm>

namespace leasehold {

using nlohmann::json;

namespace {

// "resource" or "resources" (exactly one of them when `required`); the field name is kept for
// error messages.
std::optional<std::vector<std::string>> resourceTexts(FieldReader &r, const json &body,
                                                      bool required, std::string *field)
{
    if (body.contains("resource") && body.contains("resources")) {
        r.fail("give either resource or resources, not both");
        return std::nullopt;
    }
    if (body.contains("resources")) {
        *field = "resources";
        return r.strings("resources", true, kMaxResourcesPerCall, kMaxNameBytes);
    }
    *field = "resource";
    if (auto one = r.string("resource", required, kMaxNameBytes))
        return std::vector<std::string>{*one};
    return std::nullopt;
}

} // namespace

std::optional<std::vector<ResourceName>> parseNames(const ResourceParser &parser,
                                                    const std::vector<std::string> &texts,
                                                    const std::string &field, std::string *error)
{
    std::vector<ResourceName> out;
    out.reserve(texts.size());
    const bool indexed = field != "resource" && field != "path";
    for (std::size_t i = 0; i < texts.size(); ++i) {
        ParsedName parsed = parser.parse(texts[i]);
        if (auto *bad = std::get_if<NameError>(&parsed)) {
            *error = field + (indexed ? "[" + std::to_string(i) + "]" : "") + " " + bad->message;
            return std::nullopt;
        }
        out.push_back(std::get<ResourceName>(parsed));
    }
    return out;
}

std::variant<AcquireRequest, std::string>
readAcquire(const json &body, const ResourceParser &parser, std::string actor)
{
    FieldReader r(body);
    std::string field;
    const auto texts = resourceTexts(r, body, true, &field);
    const auto modeText = r.string("mode", false, 16);
    const auto ttl = r.integer("ttlMs", false, 0, kMaxDurationInput);
    const auto wait = r.integer("waitMs", false, 0, kMaxDurationInput);
    const auto lockDelay = r.integer("lockDelayMs", false, 0, kMaxLockDelayInput);
    std::optional<Mode> mode = Mode::Write;
    if (!r.failed() && modeText && !(mode = parseMode(*modeText)))
        r.fail("mode must be read, write or delete");
    if (r.failed())
        return r.error();
    std::string error;
    auto resources = parseNames(parser, *texts, field, &error);
    if (!resources)
        return error;
    AcquireRequest out;
    out.actor = std::move(actor);
    out.resources = std::move(*resources);
    out.mode = *mode;
    out.ttlMs = ttl;
    out.waitMs = std::min(wait.value_or(0), kCoordinationWaitCapMs);
    out.lockDelayMs = lockDelay;
    return out;
}

std::variant<ReleaseRequest, std::string> readRelease(const json &body,
                                                      const ResourceParser &parser)
{
    FieldReader r(body);
    std::string field;
    const auto texts = resourceTexts(r, body, false, &field);
    const auto leaseId = r.string("leaseId", false, 128);
    if (r.failed())
        return r.error();
    ReleaseRequest out;
    out.leaseId = leaseId.value_or("");
    if (texts) {
        std::string error;
        auto parsed = parseNames(parser, *texts, field, &error);
        if (!parsed)
            return error;
        out.resources = std::move(*parsed);
    }
    return out;
}

} // namespace leasehold

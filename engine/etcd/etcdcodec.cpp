#include "etcdcodec.h"

#include "ledgerfacts.h"

#include <QByteArray>

#include <nlohmann/json.hpp>

#include <cstdio>

namespace leasehold::etcd {

using nlohmann::json;

namespace {

std::optional<json> parse(std::string_view text)
{
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (!j.is_object())
        return std::nullopt;
    return j;
}

// The field `name` of `j` as T, when it is there and of that type.
template<class T> bool take(const json &j, const char *name, T &out)
{
    const auto it = j.find(name);
    if (it == j.end())
        return false;
    if constexpr (std::is_same_v<T, std::string>) {
        if (!it->is_string())
            return false;
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!it->is_boolean())
            return false;
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!it->is_number())
            return false;
    } else if constexpr (std::is_unsigned_v<T>) {
        if (!it->is_number_unsigned())
            return false;
    } else {
        if (!it->is_number_integer())
            return false;
    }
    out = it->get<T>();
    return true;
}

} // namespace

std::string sequenceKey(std::uint64_t seq)
{
    char text[21];
    std::snprintf(text, sizeof text, "%020llu", static_cast<unsigned long long>(seq));
    return text;
}

std::string encodeLease(const LeaseInfo &l)
{
    return json{{"leaseId", l.leaseId},     {"resource", l.resource},
                {"holder", l.holder},       {"mode", modeName(l.mode)},
                {"token", l.token},         {"grantedAt", l.grantedAt},
                {"expiresAt", l.expiresAt}, {"ttlMs", l.ttlMs},
                {"pins", l.pins},           {"pendingRelease", l.pendingRelease}}
        .dump();
}

std::optional<LeaseInfo> decodeLease(std::string_view text)
{
    const std::optional<json> j = parse(text);
    LeaseInfo l;
    std::string mode;
    if (!j || !take(*j, "leaseId", l.leaseId) || !take(*j, "resource", l.resource) ||
        !take(*j, "holder", l.holder) || !take(*j, "mode", mode) || !take(*j, "token", l.token) ||
        !take(*j, "grantedAt", l.grantedAt) || !take(*j, "expiresAt", l.expiresAt) ||
        !take(*j, "ttlMs", l.ttlMs) || !take(*j, "pins", l.pins) ||
        !take(*j, "pendingRelease", l.pendingRelease))
        return std::nullopt;
    const std::optional<Mode> parsed = parseMode(mode);
    if (!parsed)
        return std::nullopt;
    l.mode = *parsed;
    return l;
}

std::string encodeAgent(const AgentState &a)
{
    return json{{"did", a.actorDid},
                {"trust", a.trust},
                {"releases", a.releases},
                {"expiries", a.expiries},
                {"suspended", a.suspended}}
        .dump();
}

std::optional<AgentState> decodeAgent(std::string_view text)
{
    const std::optional<json> j = parse(text);
    AgentState a;
    if (!j || !take(*j, "did", a.actorDid) || !take(*j, "trust", a.trust) ||
        !take(*j, "releases", a.releases) || !take(*j, "expiries", a.expiries) ||
        !take(*j, "suspended", a.suspended))
        return std::nullopt;
    return a;
}

std::string encodeKey(const StoredKey &k)
{
    return json{
        {"digest", k.digestHex}, {"did", k.did}, {"role", k.role}, {"createdAt", k.createdAt}}
        .dump();
}

std::optional<StoredKey> decodeKey(std::string_view text)
{
    const std::optional<json> j = parse(text);
    StoredKey k;
    if (!j || !take(*j, "digest", k.digestHex) || !take(*j, "did", k.did) ||
        !take(*j, "role", k.role) || !take(*j, "createdAt", k.createdAt))
        return std::nullopt;
    return k;
}

namespace {

json eventJson(const LedgerEvent &e)
{
    const std::string facts = encodeFacts(e.facts);
    return json{
        {"seq", e.seq},
        {"at", e.at},
        {"kind", eventKindName(e.kind)},
        {"actor", e.actorDid},
        {"resource", e.resource},
        {"leaseId", e.leaseId},
        {"token", e.token},
        {"ttlMs", e.ttlMs},
        {"reason", e.reason},
        {"facts",
         QByteArray::fromRawData(facts.data(), qsizetype(facts.size())).toBase64().toStdString()}};
}

std::optional<LedgerEvent> eventFrom(const json &object)
{
    const json *j = object.is_object() ? &object : nullptr;
    LedgerEvent e;
    std::string kind, facts;
    if (!j || !take(*j, "seq", e.seq) || !take(*j, "at", e.at) || !take(*j, "kind", kind) ||
        !take(*j, "actor", e.actorDid) || !take(*j, "resource", e.resource) ||
        !take(*j, "leaseId", e.leaseId) || !take(*j, "token", e.token) ||
        !take(*j, "ttlMs", e.ttlMs) || !take(*j, "reason", e.reason) || !take(*j, "facts", facts))
        return std::nullopt;
    const std::optional<EventKind> parsedKind = eventKindFromName(kind);
    const QByteArray raw = QByteArray::fromBase64(QByteArray::fromStdString(facts));
    std::optional<EventFacts> parsedFacts =
        decodeFacts(std::string_view(raw.constData(), std::size_t(raw.size())));
    if (!parsedKind || !parsedFacts)
        return std::nullopt;
    e.kind = *parsedKind;
    e.facts = std::move(*parsedFacts);
    return e;
}

} // namespace

std::string encodeEvent(const LedgerEvent &e)
{
    return eventJson(e).dump();
}

std::optional<LedgerEvent> decodeEvent(std::string_view text)
{
    const std::optional<json> j = parse(text);
    return j ? eventFrom(*j) : std::nullopt;
}

std::string encodeEvents(const std::vector<const LedgerEvent *> &events)
{
    json out = json::array();
    for (const LedgerEvent *e : events)
        out.push_back(eventJson(*e));
    return out.dump();
}

std::vector<LedgerEvent> decodeEvents(std::string_view text)
{
    std::vector<LedgerEvent> out;
    const json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (!j.is_array())
        return out;
    for (const json &element : j) {
        if (std::optional<LedgerEvent> e = eventFrom(element))
            out.push_back(std::move(*e));
    }
    return out;
}

} // namespace leasehold::etcd

#pragma once

// The encoded form of an event's facts, shared by the journal (StoreOps, in process) and the
// store's ledger rows (on disk). Sparse: a presence mask, then only the fields that differ from
// their defaults, so a grant's facts are a few bytes.
//
// Layout: u16 mask, then for each set bit in order the field (the last bit, Extended, is a
// second u16 mask and its fields): strings are a u32 size and the
// bytes, integers and flags are copied in host byte order, the cycle is a u32 count and that
// many (agent, resource) string pairs.

#include "ledgerevent.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leasehold {

namespace facts {

enum Field : std::uint16_t {
    Op = 1 << 0,
    ModeField = 1 << 1,
    Waited = 1 << 2,
    Holder = 1 << 3,
    Cycle = 1 << 4,
    By = 1 << 5,
    WhileDown = 1 << 6,
    Target = 1 << 7,
    ReleasedCount = 1 << 8,
    Suspended = 1 << 9,
    Paused = 1 << 10,
    PinId = 1 << 11,
    Before = 1 << 12,
    After = 1 << 13,
    To = 1 << 14,
    Extended = 1 << 15, // a second mask follows, with the fields below
};

// The fields of the second mask (after Extended): a guard's own account of a refusal, the
// lock-delay, a release request.
enum ExtendedField : std::uint16_t {
    ViaField = 1 << 0,
    Pid = 1 << 1,
    Command = 1 << 2,
    HeldBack = 1 << 3,
    RequestId = 1 << 4, // a release request's id, urgency, deadline and requester
    UrgencyField = 1 << 5,
    DeadlineAt = 1 << 6,
    Requester = 1 << 7,
};

std::uint16_t maskOf(const EventFacts &f);
std::uint16_t extendedMaskOf(const EventFacts &f);

} // namespace facts

// Bytes writeFacts writes for `f`.
std::size_t encodedFactsSize(const EventFacts &f);

// W has put<T>(T) for trivially copyable T and text(std::string_view).
template<class W> void writeFacts(W &w, const EventFacts &f)
{
    using namespace facts;
    const std::uint16_t mask = maskOf(f);
    w.put(mask);
    if (mask & Op)
        w.text(f.op);
    if (mask & ModeField)
        w.put(static_cast<std::uint8_t>(f.mode));
    if (mask & Waited)
        w.put(f.waitedMs);
    if (mask & Holder)
        w.text(f.holder);
    if (mask & Cycle) {
        w.put(static_cast<std::uint32_t>(f.cycle.size()));
        for (const CycleStep &s : f.cycle)
            w.text(s.agent).text(s.resource);
    }
    if (mask & By)
        w.text(f.by);
    if (mask & Target)
        w.text(f.target);
    if (mask & ReleasedCount)
        w.put(f.released);
    if (mask & PinId)
        w.text(f.pinId);
    if (mask & Before)
        w.text(f.before);
    if (mask & After)
        w.text(f.after);
    if (mask & To)
        w.text(f.to);
    if (mask & Extended) {
        const std::uint16_t more = extendedMaskOf(f);
        w.put(more);
        if (more & ViaField)
            w.text(f.via);
        if (more & Pid)
            w.put(f.pid);
        if (more & Command)
            w.text(f.command);
        if (more & HeldBack)
            w.put(f.heldBackMs);
        if (more & RequestId)
            w.text(f.requestId);
        if (more & UrgencyField)
            w.text(f.urgency);
        if (more & DeadlineAt)
            w.put(f.deadlineAt);
        if (more & Requester)
            w.text(f.requester);
    }
}

// R has get<T>() and text(); it reports damage itself (see decodeFacts) or trusts its bytes.
template<class R> void readFacts(R &r, EventFacts &f)
{
    using namespace facts;
    const auto mask = r.template get<std::uint16_t>();
    f.whileDown = mask & WhileDown;
    f.suspended = mask & Suspended;
    f.paused = mask & Paused;
    if (mask & Op)
        f.op = r.text();
    if (mask & ModeField)
        f.mode = static_cast<Mode>(r.template get<std::uint8_t>());
    if (mask & Waited)
        f.waitedMs = r.template get<std::int64_t>();
    if (mask & Holder)
        f.holder = r.text();
    if (mask & Cycle) {
        const auto n = r.template get<std::uint32_t>();
        for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
            CycleStep s;
            s.agent = r.text();
            s.resource = r.text();
            f.cycle.push_back(std::move(s));
        }
    }
    if (mask & By)
        f.by = r.text();
    if (mask & Target)
        f.target = r.text();
    if (mask & ReleasedCount)
        f.released = r.template get<std::int64_t>();
    if (mask & PinId)
        f.pinId = r.text();
    if (mask & Before)
        f.before = r.text();
    if (mask & After)
        f.after = r.text();
    if (mask & To)
        f.to = r.text();
    if (mask & Extended) {
        const auto more = r.template get<std::uint16_t>();
        if (more & ViaField)
            f.via = r.text();
        if (more & Pid)
            f.pid = r.template get<std::int64_t>();
        if (more & Command)
            f.command = r.text();
        if (more & HeldBack)
            f.heldBackMs = r.template get<std::int64_t>();
        if (more & RequestId)
            f.requestId = r.text();
        if (more & UrgencyField)
            f.urgency = r.text();
        if (more & DeadlineAt)
            f.deadlineAt = r.template get<std::int64_t>();
        if (more & Requester)
            f.requester = r.text();
    }
}

// The facts as a stored value: a format byte, then writeFacts' bytes.
std::string encodeFacts(const EventFacts &f);
// The facts `bytes` hold, or nothing when they are not in this format or are damaged (every
// size is checked against what is there; a mode out of range is damage).
std::optional<EventFacts> decodeFacts(std::string_view bytes);

} // namespace leasehold

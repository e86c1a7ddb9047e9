#pragma once

#include "enginelistener.h"

#include <deque>
#include <variant>

namespace leasehold {

// Listener calls the engine owes its host, delivered in order once the engine operation that
// caused them is complete. Delivery is re-entrant safe: a listener that calls back into the
// engine only appends; the outer delivery loop hands the new items on. A listener that throws
// is contained (the item counts as delivered).
class Outbox
{
public:
    void event(LedgerEvent event) { m_items.emplace_back(std::move(event)); }
    void waitBegan(std::uint64_t waitId, const std::string &actor)
    {
        m_items.emplace_back(Began{waitId, actor});
    }
    void waitEnded(std::uint64_t waitId, WaitOutcome outcome)
    {
        // Built in place: moving a temporary Ended trips a false maybe-uninitialized in GCC 12.
        m_items.emplace_back(std::in_place_type<Ended>, waitId, std::move(outcome));
    }

    void deliver(EngineListener *listener);

private:
    struct Began
    {
        std::uint64_t waitId;
        std::string actor;
    };
    struct Ended
    {
        // A constructor, not an aggregate: clang 14 has no parenthesised aggregate init.
        Ended(std::uint64_t id, WaitOutcome &&result)
            : waitId(id)
            , outcome(std::move(result))
        {}
        std::uint64_t waitId;
        WaitOutcome outcome;
    };
    std::deque<std::variant<LedgerEvent, Began, Ended>> m_items;
    bool m_delivering = false;
};

} // namespace leasehold

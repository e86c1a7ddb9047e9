#pragma once

#include "leasetypes.h"
#include "ledgerevent.h"

#include <variant>

namespace leasehold {

using WaitOutcome = std::variant<Grant, Refusal>;

// What the engine tells its host. Every call happens on the engine thread, after the engine
// operation that caused it has finished, so a listener may call back into the engine.
// Exceptions thrown by a listener are contained: they never turn a grant into an error.
class EngineListener
{
public:
    virtual ~EngineListener() = default;

    // Every decision, in seq order.
    virtual void onEvent(const LedgerEvent &) {}
    // A bounded wait really began (never for an immediate answer or waitMs 0).
    virtual void onWaitBegan(std::uint64_t /*waitId*/, const std::string & /*actor*/) {}
    // Exactly once per begun wait, on every way out: grant, deadline, cancellation, admin.
    virtual void onWaitEnded(std::uint64_t /*waitId*/, const WaitOutcome &) {}
};

} // namespace leasehold

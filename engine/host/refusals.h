#pragma once

// The refusal table: for each reason the engine can refuse with, how every surface answers it.
// REST takes its status and Retry-After from here, MCP its retry hint and sentence, `ctl` its
// exit code, the console its words. docs/protocol.md prints the same table.

#include "leasetypes.h"

#include <QString>

#include <array>

namespace leasehold {

struct RefusalRule
{
    RefusalReason reason;
    int httpStatus;  // 409 contention, 403 the caller may not, 503 the service cannot now
    bool retryable;  // the same call may succeed later without the caller changing anything
    int retryAfterS; // Retry-After when retryable (lease_held uses its own back-off instead)
    const char *meaning;
};

inline constexpr std::array<RefusalRule, 7> kRefusalRules{{
    {RefusalReason::LeaseHeld, 409, true, 1, "another agent holds or queues for it"},
    {RefusalReason::Deadlock, 409, false, 0, "waiting would close a cycle of waits"},
    {RefusalReason::StaleLease, 409, false, 0, "the lease or pin named is no longer current"},
    {RefusalReason::NotHeld, 409, false, 0, "the caller does not hold it"},
    {RefusalReason::Suspended, 403, false, 0, "an operator suspended the caller"},
    {RefusalReason::Paused, 409, true, 5, "an operator paused admissions"},
    {RefusalReason::StoreUnavailable, 503, true, 2, "the store cannot record a grant now"},
}};

const RefusalRule &refusalRule(RefusalReason reason);

// Seconds to wait before trying again: a lease_held refusal's own back-off (rounded up, at
// least 1), the rule's for other retryable reasons, 0 when retrying cannot help.
int retryAfterSeconds(const Refusal &refusal);

// The calls a caller makes next, in the words of the surface it used.
struct NextSteps
{
    QString acquire;
    QString release;
    QString status;
};
// REST and `ctl`: the routes.
NextSteps restSteps();

// What happened and what to do next, addressed to the caller: one to three sentences.
QString refusalSentence(const Refusal &refusal, const NextSteps &steps);

} // namespace leasehold

// REST requests from outside bytes: up to 16 requests (fuzzservice.h gives their text form)
// served in order through HttpFront::serve — the body cap, the bearer key, the route table and
// every route's body and query decoding — against one engine on a manual clock.
// Asserted, for every answer (now, or later for a parked wait):
//   - never a 5xx: bad input is a 4xx;
//   - every refusal is JSON that says why (reason and a non-empty error);
//   - the engine's invariants hold after each request (LeaseEngine::checkInvariants);
//   - at the end, with every client gone and the clock past every deadline, nothing is left:
//     no lease, wait or pin outlives its deadline.

#include "fuzzservice.h"

#include <cstddef>
#include <cstdint>

using namespace leasehold::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    FuzzService service;
    for (FuzzRequest &request : parseRequests(data, size))
        service.serve(std::move(request));
    service.finish();
    return 0;
}

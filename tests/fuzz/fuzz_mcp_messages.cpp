// MCP from outside bytes: up to 16 POSTs, DELETEs or GETs of /mcp (fuzzservice.h gives their
// text form; the path is always /mcp) — single JSON-RPC messages and 2025-03-26 batches, with
// and without a session ($session is the one the last initialize opened), and 2026-07-28
// requests with their headers and _meta — against one engine with a scratch workspace, so the
// fs_* tools read and write real files. Asserted as for REST (fuzz_rest_requests.cpp): never a
// 5xx; every HTTP refusal says why (a JSON-RPC error with a message); the engine's invariants
// after each request; nothing outlives its deadline once every client is gone.

#include "fuzzservice.h"

#include <cstddef>
#include <cstdint>

using namespace leasehold::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    FuzzService service(/*workspace=*/true);
    for (FuzzRequest &request : parseRequests(data, size, QStringLiteral("/mcp")))
        service.serve(std::move(request));
    service.finish();
    return 0;
}

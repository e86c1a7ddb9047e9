// A ledger event's facts as the store keeps them in each ledger row (decodeFacts), from outside
// bytes: a damaged row must read as damage, never as a crash or an over-read. The same format
// travels in process in the engine's journal (StoreOps), which never holds bytes from outside;
// on disk it is read back with every size checked. Asserted for every input that decodes:
//   - encoding what was read and decoding that again gives the same facts (the format has one
//     reading);
//   - the encoding is no longer than the input (nothing is invented).

#include "ledgerfacts.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace leasehold;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char *>(data), size);
    const std::optional<EventFacts> facts = decodeFacts(bytes);
    if (!facts)
        return 0;
    const std::string again = encodeFacts(*facts);
    const std::optional<EventFacts> reread = decodeFacts(again);
    if (!reread || !(*reread == *facts)) {
        std::fprintf(stderr, "invariant broken: facts do not read back the same\n");
        std::abort();
    }
    if (again.size() > size) {
        std::fprintf(stderr, "invariant broken: %zu bytes re-encode as %zu\n", size, again.size());
        std::abort();
    }
    return 0;
}

// claude-code's hook events from outside bytes, read by its dialect: hookdialectfuzz.h says what
// is asserted.

#include "hookdialectfuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    return hookfuzz::run(claudeCodeDialect(), data, size);
}

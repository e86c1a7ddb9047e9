#pragma once

#include <optional>
#include <string_view>

namespace leasehold {

// How a lease uses its resource. Reads share with reads; write and delete exclude everything.
enum class Mode { Read, Write, Delete };

std::string_view modeName(Mode mode);
std::optional<Mode> parseMode(std::string_view text);

// A lease's effective class: shared (a read that may run beside other reads) or exclusive.
inline bool isExclusiveMode(Mode mode)
{
    return mode != Mode::Read;
}

} // namespace leasehold

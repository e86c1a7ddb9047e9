#include "mode.h"

namespace leasehold {

std::string_view modeName(Mode mode)
{
    switch (mode) {
    case Mode::Read:
        return "read";
    case Mode::Write:
        return "write";
    case Mode::Delete:
        return "delete";
    }
    return "write";
}

std::optional<Mode> parseMode(std::string_view text)
{
    if (text == "read")
        return Mode::Read;
    if (text == "write")
        return Mode::Write;
    if (text == "delete")
        return Mode::Delete;
    return std::nullopt;
}

} // namespace leasehold

#pragma once

#include "resourcename.h"

#include <string>
#include <vector>

namespace leasehold {

// Resources that are not safe to read concurrently (a SQLite file, a build directory...).
// A read lease on a matching resource is exclusive, like a write.
//
// Patterns are globs over canonical names: '*' matches within one segment, '**' across
// segments, '?' one character. A pattern without a scheme is a workspace path ("*.sqlite"
// means "fs:*.sqlite"; "**/*.sqlite" any depth).
//
// Thread-safety: immutable after construction.
class ExclusivePatterns
{
public:
    ExclusivePatterns() = default;
    explicit ExclusivePatterns(const std::vector<std::string> &patterns);

    bool matches(const ResourceName &name) const;
    bool empty() const { return m_patterns.empty(); }
    const std::vector<std::string> &patterns() const { return m_patterns; }

    // Glob match of `text` against `pattern`, as described above.
    static bool globMatch(std::string_view pattern, std::string_view text);

private:
    std::vector<std::string> m_patterns;
};

} // namespace leasehold

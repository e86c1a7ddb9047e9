#pragma once

// Overlap of two resource names decided the slow way, for the model test: independently of
// PathPattern, by listing a finite universe of names (both schemes the model uses, every path
// of up to four segments over the segments its names use) and asking whether any of them is
// covered by a lease on each name (two patterns: whether any is matched by both), with a small
// backtracking glob matcher of its own. The pool of names the model draws from is chosen so that
// two names that overlap at all overlap on a name of this universe. Results are remembered per
// pair.

#include "resourcename.h"

namespace leasehold::test {

bool bruteOverlaps(const ResourceName &a, const ResourceName &b);

// True when a lease on `lease` covers the plain name `scheme:path` (the brute-force rule).
bool bruteCovers(const ResourceName &lease, const std::string &scheme,
                 const std::vector<std::string> &path);

} // namespace leasehold::test

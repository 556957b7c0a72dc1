// Test oracles for the decompose passes (tests/test_decompose.cpp, tests/test_compress.cpp):
// the direct-schedule invariants of docs/FORMAT.md §4 checked straight on a Schedule, independent of
// lower/verify.
#pragma once

#include "ir/schedule.h"

#include <string>

namespace commfit::test {

// Empty when s is a valid direct schedule of m: transfers in canonical order, phase < phases,
// from == src != dst == to, every network message of m sent whole exactly once and nothing
// else, every phase a partial permutation (<= 1 send and <= 1 receive per rank), copies equal
// local_copies(m). Else the first problem found.
std::string check_direct_schedule(const Schedule& s, const CommMatrix& m);

// Whether a and b are the same schedule: ranks, phases, transfers and copies equal.
bool same_schedule(const Schedule& a, const Schedule& b);

}  // namespace commfit::test

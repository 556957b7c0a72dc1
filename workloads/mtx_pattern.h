// The nonzero pattern of a sparse matrix in Matrix Market coordinate form, for commfit extract's
// SpMV halo exchange (the values are checked to be numbers, then ignored). Unlike
// ir/matrix_io.h's reader, whose entries are message sizes, this one reads any square sparse matrix:
// fields real, integer or pattern; symmetry general, symmetric or skew-symmetric (the stored
// triangle is mirrored); repeated entries are allowed (the pattern is their union).
#pragma once

#include "workloads/halo.h"

#include <string>
#include <string_view>

namespace commfit {

// Throws InputError (FILE: line N: problem) for a missing or unsupported banner, a non-square or
// oversized matrix (over 2^26 rows, or over max(2^20, 8 x file bytes) rows), malformed or out-of-range entries, and an entry count other than announced.
Pattern parse_mtx_pattern(std::string_view text, const std::string& file);

}  // namespace commfit

// Writing a generated or extracted matrix (commfit gen, commfit extract) to standard output ("" or
// "-") or to a file, written to a temporary sibling and renamed into place, so a failed run leaves
// no partial file. The format: `format` when given ("json" or "mtx"), else Matrix Market for a
// name ending in .mtx (any case), else the JSON of ir/matrix_io.h.
#pragma once

#include "ir/comm_matrix.h"

#include <string>

namespace commfit {

void write_matrix_output(const CommMatrix& m, const std::string& output, const std::string& format = "");

}  // namespace commfit

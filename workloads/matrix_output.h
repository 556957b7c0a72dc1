// Writing a generated or extracted matrix (commfit gen, commfit extract): the JSON of
// ir/matrix_io.h to standard output ("" or "-") or to a file, written to FILE.tmp and renamed into
// place, so a failed run leaves no partial file.
#pragma once

#include "ir/comm_matrix.h"

#include <string>

namespace commfit {

void write_matrix_output(const CommMatrix& m, const std::string& output);

}  // namespace commfit

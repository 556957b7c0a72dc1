#include "workloads/matrix_output.h"

#include "backends/atomic_output.h"
#include "ir/error.h"
#include "ir/matrix_io.h"

#include <cstdio>

namespace commfit {

void write_matrix_output(const CommMatrix& m, const std::string& output) {
  const std::string text = matrix_json(m);
  if (output.empty() || output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  write_file_atomic(text, output);
}

}  // namespace commfit

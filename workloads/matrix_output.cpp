#include "workloads/matrix_output.h"

#include "backends/atomic_output.h"
#include "ir/error.h"
#include "ir/matrix_io.h"

#include <cstdio>

namespace commfit {

void write_matrix_output(const CommMatrix& m, const std::string& output, const std::string& format) {
  if (!format.empty() && format != "json" && format != "mtx") throw UsageError("--format \"" + format + "\": expected json or mtx");
  const bool to_stdout = output.empty() || output == "-";
  const bool mtx = format.empty() ? !to_stdout && has_mtx_extension(output) : format == "mtx";
  const std::string text = mtx ? matrix_market(m) : matrix_json(m);
  if (to_stdout) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  write_file_atomic(text, output);
}

}  // namespace commfit

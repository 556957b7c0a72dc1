#include "workloads/matrix_output.h"

#include "ir/error.h"
#include "ir/matrix_io.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace commfit {

void write_matrix_output(const CommMatrix& m, const std::string& output) {
  const std::string text = matrix_json(m);
  if (output.empty() || output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  const std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw UsageError("cannot write " + tmp);
    }
  }
  std::filesystem::rename(tmp, output);
}

}  // namespace commfit

#include "workloads/mtx_pattern.h"

#include "ir/matrix_market.h"

#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

namespace commfit {

Pattern parse_mtx_pattern(std::string_view text, const std::string& file) {
  MatrixMarketReader in(text, file);
  MatrixMarketLimits limits;
  limits.min_rows = 1;
  limits.max_rows = kMaxVertices;
  limits.max_entries = static_cast<std::int64_t>(text.size() / 4 + 1);
  const MatrixMarketHeader h = in.header({"real", "integer", "pattern"}, {"general", "symmetric", "skew-symmetric"}, limits);
  // A vertex costs memory even without entries: a short file may not announce millions of rows.
  const std::int64_t row_limit = std::min<std::int64_t>(kMaxVertices, std::max<std::int64_t>(std::int64_t{1} << 20, 8 * static_cast<std::int64_t>(text.size())));
  if (h.rows > row_limit || h.cols > row_limit)
    in.fail("a " + std::to_string(h.rows) + " x " + std::to_string(h.cols) + " matrix in a file of " + std::to_string(text.size()) +
            " bytes: at most " + std::to_string(row_limit) + " rows (2^20, or 8 per byte of the file)");
  if (h.rows != h.cols)
    in.fail("the matrix is " + std::to_string(h.rows) + " x " + std::to_string(h.cols) +
            "; SpMV halo exchange needs a square matrix (the owner of row v owns x[v])");
  const bool pattern = h.field == "pattern";

  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  pairs.reserve(static_cast<std::size_t>(h.entries) * (h.symmetry == "general" ? 1 : 2));
  std::vector<std::string_view> tok;
  while (in.next_entry(tok)) {
    if (tok.size() != (pattern ? 2u : 3u)) in.fail(pattern ? "expected \"ROW COLUMN\"" : "expected \"ROW COLUMN VALUE\"");
    const auto i = static_cast<std::int32_t>(in.integer(tok[0], "row", 1, h.rows) - 1);
    const auto j = static_cast<std::int32_t>(in.integer(tok[1], "column", 1, h.cols) - 1);
    if (h.field == "integer") {
      in.integer(tok[2], "the value", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    } else if (h.field == "real") {
      const std::string value(tok[2]);
      char* end = nullptr;
      const double d = std::strtod(value.c_str(), &end);
      if (end != value.c_str() + value.size() || !std::isfinite(d)) in.fail("expected a finite real value, got \"" + value.substr(0, 40) + "\"");
    }
    pairs.emplace_back(i, j);
    if (i != j && h.symmetry != "general") pairs.emplace_back(j, i);
  }
  return pattern_from_pairs(h.rows, std::move(pairs));
}

}  // namespace commfit

#include "workloads/mtx_pattern.h"

#include "ir/error.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

namespace commfit {
namespace {

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t k = 0;
  while (k < line.size()) {
    while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
    std::size_t e = k;
    while (e < line.size() && line[e] != ' ' && line[e] != '\t') ++e;
    if (e > k) out.push_back(line.substr(k, e - k));
    k = e;
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Pattern parse_mtx_pattern(std::string_view text, const std::string& file) {
  std::size_t pos = 0, line_no = 0;
  std::string_view line;
  auto next_line = [&] {
    if (pos >= text.size()) return false;
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    ++line_no;
    return true;
  };
  auto fail = [&](const std::string& problem) -> void { throw InputError(file, "line " + std::to_string(line_no), problem); };

  if (!next_line() || line.rfind("%%MatrixMarket", 0) != 0) {
    line_no = 1;
    fail("not a Matrix Market file (expected a %%MatrixMarket banner)");
  }
  const auto banner = split(line);
  std::vector<std::string> words;
  for (auto w : banner) words.push_back(lower(w));
  if (words.size() != 5 || words[1] != "matrix")
    fail("expected \"%%MatrixMarket matrix coordinate FIELD SYMMETRY\"");
  if (words[2] != "coordinate") fail("format \"" + words[2] + "\" is not supported: a sparse matrix is stored in coordinate format");
  const std::string field = words[3], symmetry = words[4];
  if (field != "real" && field != "integer" && field != "pattern")
    fail("field \"" + field + "\" is not supported: expected real, integer or pattern");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    fail("symmetry \"" + symmetry + "\" is not supported: expected general, symmetric or skew-symmetric");
  const std::size_t want = field == "pattern" ? 2 : 3;

  do {
    if (!next_line()) fail("missing the size line \"ROWS COLUMNS ENTRIES\"");
  } while (split(line).empty() || line[0] == '%');
  auto number = [&](std::string_view s, const char* what, std::int64_t lo, std::int64_t hi) {
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
      fail(std::string("expected ") + what + " (an integer), got \"" + std::string(s.substr(0, 40)) + "\"");
    if (v < lo || v > hi)
      fail(std::string(what) + " " + std::string(s) + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
    return v;
  };
  auto size_line = split(line);
  if (size_line.size() != 3) fail("expected \"ROWS COLUMNS ENTRIES\"");
  const std::int64_t rows = number(size_line[0], "row count", 1, kMaxVertices);
  const std::int64_t cols = number(size_line[1], "column count", 1, kMaxVertices);
  const std::int64_t entries = number(size_line[2], "entry count", 0, static_cast<std::int64_t>(text.size() / 4 + 1));
  // A vertex costs memory even without entries: a short file may not announce millions of rows.
  const std::int64_t row_limit = std::min<std::int64_t>(kMaxVertices, std::max<std::int64_t>(std::int64_t{1} << 20, 8 * static_cast<std::int64_t>(text.size())));
  if (rows > row_limit || cols > row_limit)
    fail("a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix in a file of " + std::to_string(text.size()) +
         " bytes: at most " + std::to_string(row_limit) + " rows (2^20, or 8 per byte of the file)");
  if (rows != cols)
    fail("the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) +
         "; SpMV halo exchange needs a square matrix (the owner of row v owns x[v])");

  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  pairs.reserve(static_cast<std::size_t>(entries) * (symmetry == "general" ? 1 : 2));
  std::int64_t seen = 0;
  while (next_line()) {
    const auto tok = split(line);
    if (tok.empty() || line[0] == '%') continue;
    if (seen == entries) fail("more entries than the " + std::to_string(entries) + " the size line announces");
    if (tok.size() != want) fail(field == "pattern" ? "expected \"ROW COLUMN\"" : "expected \"ROW COLUMN VALUE\"");
    const auto i = static_cast<std::int32_t>(number(tok[0], "row", 1, rows) - 1);
    const auto j = static_cast<std::int32_t>(number(tok[1], "column", 1, cols) - 1);
    if (field == "integer") {
      number(tok[2], "the value", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    } else if (field == "real") {
      const std::string value(tok[2]);
      char* end = nullptr;
      const double d = std::strtod(value.c_str(), &end);
      if (end != value.c_str() + value.size() || !std::isfinite(d)) fail("expected a finite real value, got \"" + value.substr(0, 40) + "\"");
    }
    pairs.emplace_back(i, j);
    if (i != j && symmetry != "general") pairs.emplace_back(j, i);
    ++seen;
  }
  if (seen != entries)
    fail("the size line announces " + std::to_string(entries) + " entries, the file has " + std::to_string(seen));
  return pattern_from_pairs(rows, std::move(pairs));
}

}  // namespace commfit

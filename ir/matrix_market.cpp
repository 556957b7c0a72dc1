#include "ir/matrix_market.h"

#include "ir/error.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace commfit {
namespace {

// Fields separated by blanks and tabs.
void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t k = 0;
  while (k < line.size()) {
    while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
    std::size_t e = k;
    while (e < line.size() && line[e] != ' ' && line[e] != '\t') ++e;
    if (e > k) out.push_back(line.substr(k, e - k));
    k = e;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "a, b or c"
std::string one_of(std::initializer_list<const char*> names) {
  std::string out;
  std::size_t k = 0;
  for (const char* n : names) {
    if (k > 0) out += k + 1 == names.size() ? " or " : ", ";
    out += n;
    ++k;
  }
  return out;
}

}  // namespace

void MatrixMarketReader::fail(const std::string& problem) const { throw InputError(file_, place(), problem); }

bool MatrixMarketReader::next_line(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  std::size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = end + 1;
  ++line_;
  return true;
}

std::int64_t MatrixMarketReader::integer(std::string_view s, const char* what, std::int64_t lo, std::int64_t hi) const {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    fail(std::string("expected ") + what + " (an integer), got \"" + std::string(s.substr(0, 40)) + "\"");
  if (v < lo || v > hi)
    fail(std::string(what) + " " + std::string(s) + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
  return v;
}

MatrixMarketHeader MatrixMarketReader::header(std::initializer_list<const char*> fields,
                                              std::initializer_list<const char*> symmetries,
                                              const MatrixMarketLimits& limits) {
  std::string_view line;
  if (!next_line(line) || line.rfind("%%MatrixMarket", 0) != 0) {
    line_ = 1;
    fail("not a Matrix Market file (expected a %%MatrixMarket banner)");
  }
  std::vector<std::string_view> tok;
  split(line, tok);
  std::vector<std::string> words;
  for (std::string_view w : tok) words.push_back(lower(w));
  if (words.size() != 5 || words[1] != "matrix") fail("expected \"%%MatrixMarket matrix coordinate FIELD SYMMETRY\"");
  if (words[2] != "coordinate") fail("format \"" + words[2] + "\" is not supported: a sparse matrix is stored in coordinate format");
  MatrixMarketHeader h;
  h.field = words[3];
  h.symmetry = words[4];
  if (std::none_of(fields.begin(), fields.end(), [&](const char* f) { return h.field == f; }))
    fail("field \"" + h.field + "\" is not supported: expected " + one_of(fields));
  if (std::none_of(symmetries.begin(), symmetries.end(), [&](const char* s) { return h.symmetry == s; }))
    fail("symmetry \"" + h.symmetry + "\" is not supported: expected " + one_of(symmetries));

  do {
    if (!next_line(line)) fail("missing the size line \"ROWS COLUMNS ENTRIES\"");
    split(line, tok);
  } while (tok.empty() || line[0] == '%');
  if (tok.size() != 3) fail("expected \"ROWS COLUMNS ENTRIES\"");
  h.rows = integer(tok[0], "row count", limits.min_rows, limits.max_rows);
  h.cols = integer(tok[1], "column count", limits.min_rows, limits.max_rows);
  h.entries = integer(tok[2], "entry count", 0, limits.max_entries);
  entries_ = h.entries;
  return h;
}

bool MatrixMarketReader::next_entry(std::vector<std::string_view>& fields) {
  std::string_view line;
  while (next_line(line)) {
    if (!line.empty() && line[0] == '%') continue;
    split(line, fields);
    if (fields.empty()) continue;
    if (seen_ == entries_) fail("more entries than the " + std::to_string(entries_) + " the size line announces");
    ++seen_;
    return true;
  }
  if (seen_ != entries_)
    fail("the size line announces " + std::to_string(entries_) + " entries, the file has " + std::to_string(seen_));
  return false;
}

}  // namespace commfit

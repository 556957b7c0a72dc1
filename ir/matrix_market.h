// Matrix Market coordinate files (math.nist.gov/MatrixMarket/formats.html): the banner, comment
// lines, the size line and the entry lines, counted so that every error says "line N". Both
// readers of .mtx files use it: the communication matrix (ir/matrix_io.h) and the sparsity
// pattern of `commfit extract` (workloads/mtx_pattern.h). Each says which fields and symmetries
// it takes and what limits its sizes have, and reads the values of the entries itself.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace commfit {

struct MatrixMarketHeader {
  std::string field;      // lower case: "integer", "real", "pattern", ...
  std::string symmetry;   // lower case: "general", "symmetric", ...
  std::int64_t rows = 0, cols = 0, entries = 0;
};

// Limits of the size line, checked as it is read.
struct MatrixMarketLimits {
  std::int64_t min_rows = 0;
  std::int64_t max_rows = 2147483647;
  std::int64_t max_entries = 2147483647;
};

class MatrixMarketReader {
 public:
  MatrixMarketReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  // Reads "%%MatrixMarket matrix coordinate FIELD SYMMETRY" (case-insensitive), the comment lines
  // after it and the size line "ROWS COLUMNS ENTRIES".
  MatrixMarketHeader header(std::initializer_list<const char*> fields, std::initializer_list<const char*> symmetries,
                            const MatrixMarketLimits& limits);
  // The fields of the next entry line (comment and blank lines skipped); false after the last
  // line, when the number of entries read must be the size line's.
  bool next_entry(std::vector<std::string_view>& fields);
  // `s` as an integer in [lo, hi]; `what` names it in the error.
  std::int64_t integer(std::string_view s, const char* what, std::int64_t lo, std::int64_t hi) const;

  std::size_t line() const { return line_; }
  std::string place() const { return "line " + std::to_string(line_); }
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  bool next_line(std::string_view& line);

  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0, line_ = 0;
  std::int64_t entries_ = 0, seen_ = 0;
};

}  // namespace commfit

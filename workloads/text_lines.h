// Line and token reading for the text formats of commfit extract (Matrix Market, gmsh .msh,
// partition vectors): positions are counted so errors can say "line N".
#pragma once

#include "ir/error.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace commfit {

class TokenReader {
 public:
  TokenReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  // The next whitespace-separated token, or "" at the end of the text.
  std::string_view next() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    token_line_ = line_;
    return text_.substr(start, pos_ - start);
  }
  // The next token, which must exist; `what` names it in the error.
  std::string_view expect(const char* what) {
    const std::string_view t = next();
    if (t.empty()) fail(std::string("unexpected end of file, expected ") + what);
    return t;
  }
  // The next token as an integer in [lo, hi].
  std::int64_t integer(const char* what, std::int64_t lo, std::int64_t hi) {
    const std::string_view t = expect(what);
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size())
      fail(std::string("expected ") + what + " (an integer), got \"" + std::string(t.substr(0, 40)) + "\"");
    if (v < lo || v > hi)
      fail(std::string(what) + " " + std::to_string(v) + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
    return v;
  }
  // The rest of the current line (after the last token read), without the line break.
  std::string_view rest_of_line() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    std::string_view out = text_.substr(start, pos_ - start);
    if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
    return out;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  // Line of the last token read (1-based).
  std::size_t line() const { return token_line_; }
  std::string place() const { return "line " + std::to_string(token_line_); }
  [[noreturn]] void fail(const std::string& problem) const { throw InputError(file_, place(), problem); }
  const std::string& file() const { return file_; }
  std::size_t size() const { return text_.size(); }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }
  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t token_line_ = 1;
};

}  // namespace commfit

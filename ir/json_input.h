// The JSON readers' input (ir/matrix_io.cpp, backends/plan_dir.cpp): a file, or a text in memory,
// read forward through a fixed buffer with runs of blanks folded, so that a reader's memory does
// not grow with the white space in what it reads.
#pragma once

#include "ir/error.h"

#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commfit {

// An open file read forward through a fixed buffer: the JSON reader's input, so that its memory
// does not grow with the file. Runs of white space outside strings reach the parser as one space:
// nlohmann's lexer keeps every character it skips until the next string or number token (its
// error context), so 2 GB of blanks between two fields would be held in memory. Where the
// characters of the current and the previous buffer are in the file (where a syntax error is,
// line_column) is kept as runs: one entry per stretch of consecutive file bytes, not per byte.
class FileChunks {
 public:
  // read(buffer, bytes, offset): like pread(2).
  using Source = std::function<ssize_t(char*, std::size_t, std::uint64_t)>;
  // `size`: the input's size if known, so that a small one gets a small buffer.
  FileChunks(Source read, std::string file, std::uint64_t size, std::size_t chunk = kChunk)
      : read_(std::move(read)), file_(std::move(file)), raw_(static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size + 1))) {}
  bool at_end() {
    while (pos_ >= buf_[cur_].size()) {
      if (eof_) return true;
      refill();
    }
    return false;
  }
  const char& current() const { return buf_[cur_][pos_]; }
  void advance() { ++pos_; }

  // Line and column (1-based) in the file of the character the parser counts as number `index`
  // (from 0), by reading the file again from the start up to it.
  std::pair<std::size_t, std::size_t> line_column(std::uint64_t index) const {
    const std::uint64_t offset = file_offset(index);
    std::size_t line = 1, col = 1;
    std::vector<char> b(raw_.size());
    for (std::uint64_t at = 0; at < offset;) {
      const ssize_t n = read_(b.data(), static_cast<std::size_t>(std::min<std::uint64_t>(b.size(), offset - at)), at);
      if (n <= 0) break;
      for (ssize_t k = 0; k < n; ++k) {
        if (b[static_cast<std::size_t>(k)] == '\n') { ++line; col = 1; } else { ++col; }
      }
      at += static_cast<std::uint64_t>(n);
    }
    return {line, col};
  }

  // The file offset of the character the parser counts as number `index` (from 0), when it is in
  // the current or the previous buffer (where a parser that reads forward reports an error); the
  // end of the input when it is past it; `index` itself when it is further back.
  std::uint64_t file_offset(std::uint64_t index) const {
    const std::uint64_t start = emitted_ - buf_[cur_].size(), before = start - buf_[1 - cur_].size();
    if (index >= emitted_) return offset_;
    if (index >= start) return in_buffer(cur_, index - start);
    if (index >= before) return in_buffer(1 - cur_, index - before);
    return index;
  }

  // Characters handed to the parser so far.
  std::uint64_t consumed() const { return emitted_ - buf_[cur_].size() + pos_; }

  static constexpr std::size_t kChunk = std::size_t{1} << 16;

 private:

  // A stretch of a buffer whose characters are consecutive bytes of the file.
  struct Run {
    std::size_t index;     // its first character in the buffer
    std::uint64_t offset;  // that character's offset in the file
  };

  std::uint64_t in_buffer(int b, std::size_t index) const {
    const std::vector<Run>& runs = runs_[b];
    const auto next = std::upper_bound(runs.begin(), runs.end(), index, [](std::size_t i, const Run& r) { return i < r.index; });
    const Run& r = *std::prev(next);   // runs[0].index is 0
    return r.offset + (index - r.index);
  }

  void refill() {
    ssize_t n = 0;
    do n = read_(raw_.data(), raw_.size(), offset_);
    while (n < 0 && errno == EINTR);
    if (n < 0) throw InputError(file_, "", std::string("cannot read the file: ") + std::strerror(errno));
    if (n == 0) eof_ = true;
    std::vector<char>& out = buf_[2];
    std::vector<Run>& runs = runs_[2];
    out.clear();
    runs.clear();
    out.reserve(raw_.size());
    std::uint64_t next = ~std::uint64_t{0};   // the file offset that continues the current run
    auto put = [&](char c) {
      if (offset_ != next) runs.push_back({out.size(), offset_});
      out.push_back(c);
      next = offset_ + 1;
    };
    for (ssize_t k = 0; k < n; ++k, ++offset_) {
      const char c = raw_[static_cast<std::size_t>(k)];
      if (in_string_) {
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') in_string_ = false;
      } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        if (blank_) continue;
        blank_ = true;
        put(' ');
        continue;
      } else {
        in_string_ = c == '"';
      }
      blank_ = false;
      put(c);
    }
    if (out.empty()) return;   // all blanks already given as one: keep the buffers an error may point into
    cur_ = 1 - cur_;
    pos_ = 0;
    std::swap(buf_[cur_], out);
    std::swap(runs_[cur_], runs);
    emitted_ += buf_[cur_].size();
  }

  Source read_;
  std::string file_;
  std::vector<char> raw_;
  std::vector<char> buf_[3];             // what the parser reads: the current buffer, the one before, a scratch one
  std::vector<Run> runs_[3];             // where their characters are in the file
  int cur_ = 0;
  std::size_t pos_ = 0;
  std::uint64_t offset_ = 0, emitted_ = 0;
  bool eof_ = false, in_string_ = false, escaped_ = false, blank_ = false;
};

// An input iterator over FileChunks for nlohmann's SAX parser; the default one is the end.
class FileIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  FileIterator() = default;
  explicit FileIterator(FileChunks* in) : in_(in) {}
  reference operator*() const { return in_->current(); }
  FileIterator& operator++() {
    in_->advance();
    return *this;
  }
  bool operator==(const FileIterator& o) const { return done() == o.done(); }
  bool operator!=(const FileIterator& o) const { return !(*this == o); }

 private:
  bool done() const { return in_ == nullptr || in_->at_end(); }
  FileChunks* in_ = nullptr;
};


// A text in memory as a FileChunks source (parsers of texts and files share one input).
inline FileChunks::Source text_source(std::string_view text) {
  return [text](char* b, std::size_t n, std::uint64_t at) -> ssize_t {
    if (at >= text.size()) return 0;
    const std::size_t k = std::min<std::size_t>(n, text.size() - static_cast<std::size_t>(at));
    std::memcpy(b, text.data() + at, k);
    return static_cast<ssize_t>(k);
  };
}

// An open file descriptor as a FileChunks source (pread: the descriptor's offset is not used).
FileChunks::Source fd_source(int fd);

}  // namespace commfit

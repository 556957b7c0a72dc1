#include "ir/matrix_json_fast.h"

#include "ir/matrix_io.h"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <new>
#include <string_view>

namespace commfit::detail {
namespace {

[[noreturn]] void give_up() { throw FastPathGaveUp{}; }

constexpr int kEnd = -1;   // peek() at the end of the input

bool is_blank(int c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// The top-level keys of docs/FORMAT.md §1, numbered for the set of keys seen.
enum class Key : unsigned { format, version, ranks, messages, dense, memory, topology, cost, name, description };
constexpr const char* kKeys[] = {"format", "version", "ranks", "messages", "dense", "memory",
                                 "topology", "cost", "name", "description"};

// The scanner: one pass over the input, one character of lookahead (peek), giving up by throwing
// FastPathGaveUp. Every read of a character goes through peek(), which refills the buffer when it
// is used up, so a token may be split at any byte; a character is consumed by ++p_ only after
// peek() returned it.
class Scanner {
 public:
  Scanner(const FileChunks::Source& read, std::uint64_t size, std::size_t buffer, const FieldParser& parse_field)
      : read_(read), parse_field_(parse_field), size_(size),
        buf_(static_cast<std::size_t>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(buffer, size + 1)))) {}

  // The whole input: one object of known keys, each once, then nothing but blanks.
  ScannedMatrix matrix() {
    if (next_token() != '{') give_up();
    ++p_;
    unsigned seen = 0;
    do {
      if (next_token() != '"') give_up();   // also "{}": the SAX reader names the missing fields
      const Key k = key();
      const unsigned bit = 1u << static_cast<unsigned>(k);
      if (seen & bit) give_up();
      seen |= bit;
      expect(':');
      if (k == Key::messages || k == Key::dense) {
        if (next_token() != '[') give_up();   // not an array: the SAX reader says so
        pattern_start_ = position();
        if (k == Key::messages) {
          read_messages();
          out_.has_messages = true;
        } else {
          read_dense();
          out_.has_dense = true;
        }
      } else {
        read_field(k);
      }
    } while (another('}'));
    if (next_token() != kEnd) give_up();
    return std::move(out_);
  }

 private:
  // The next character, or kEnd; not consumed.
  int peek() { return p_ != e_ ? static_cast<unsigned char>(*p_) : refill(); }

  // Reads the next bufferful once the buffer is used up: its first character, or kEnd. A read
  // error gives up (the SAX reader reads the file again and names the error).
  int refill() {
    if (eof_) return kEnd;
    ssize_t n = 0;
    do n = read_(buf_.data(), buf_.size(), offset_);
    while (n < 0 && errno == EINTR);
    if (n < 0) give_up();
    if (n == 0) {
      eof_ = true;
      return kEnd;
    }
    offset_ += static_cast<std::uint64_t>(n);
    p_ = buf_.data();
    e_ = p_ + n;
    return static_cast<unsigned char>(*p_);
  }

  // Skips white space (JSON's four blanks): the next character, or kEnd.
  int next_token() {
    int c = peek();
    while (is_blank(c)) {
      ++p_;
      c = peek();
    }
    return c;
  }

  // Consumes the character `c` after blanks, or gives up.
  void expect(char c) {
    if (next_token() != c) give_up();
    ++p_;
  }

  // After blanks, a plain non-negative integer of at most `max`: "0", or a digit 1-9 and at most
  // 15 more. Whatever follows is the caller's, which accepts only a blank, ',' or ']' there: so
  // "01", "1.5", "1e3", "-1" and "1.0" all give up (the SAX reader reads or refuses them).
  std::uint64_t integer(std::uint64_t max) {
    int c = next_token();
    if (c < '0' || c > '9') give_up();
    std::uint64_t v = static_cast<std::uint64_t>(c - '0');
    ++p_;
    if (v != 0) {
      int digits = 1;
      for (c = peek(); c >= '0' && c <= '9'; c = peek()) {
        if (++digits > 16) give_up();   // 16 digits cannot overflow; 2^53 has 16
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
        ++p_;
      }
    }
    if (v > max) give_up();
    return v;
  }

  // A top-level key from its opening quote: its number. A key with an escape or a control
  // character, or one the format does not know, gives up (the SAX reader decodes and names it).
  Key key() {
    ++p_;
    char k[16];
    std::size_t n = 0;
    for (int c = peek(); c != '"'; c = peek()) {
      if (c == kEnd || c == '\\' || c < 0x20 || n == sizeof k) give_up();
      k[n++] = static_cast<char>(c);
      ++p_;
    }
    ++p_;
    const std::string_view s(k, n);
    for (unsigned i = 0; i < std::size(kKeys); ++i)
      if (s == kKeys[i]) return static_cast<Key>(i);
    give_up();
  }

  // One message, in file order. Ranks beyond kMaxRanks - 1 gave up already (out of range for
  // any rank count); the pair before is compared here: the same pair gives up (the SAX reader
  // names both places), a smaller one marks the messages unsorted (duplicates further back are
  // found once they are sorted).
  void add(std::int64_t src, std::int64_t dst, Bytes bytes) {
    std::vector<Message>& m = out_.messages;
    if (m.size() >= kMaxMessages) give_up();
    const Message x{static_cast<Rank>(src), static_cast<Rank>(dst), bytes};
    if (!m.empty()) {
      const Message& last = m.back();
      if (last.src == x.src && last.dst == x.dst) give_up();
      if (last.src > x.src || (last.src == x.src && last.dst > x.dst)) out_.sorted = false;
    }
    out_.max_rank = std::max({out_.max_rank, x.src, x.dst});
    if (m.size() == m.capacity() && m.size() >= kEstimateAfter) reserve_for_the_rest();
    m.push_back(x);
  }

  // Reserves room, when the messages fill their vector, for as many more as the rest of the input
  // would hold at the bytes per message read so far (and a sixteenth more). Growing by doubling
  // instead would touch about twice the final vector's memory, copying it, and fresh pages cost
  // about 1.2 ms a MB here (10^7 messages: 270 MB more). Room reserved and never used costs
  // address space, not memory: its pages are never touched. An estimate of less than a quarter
  // more (the input's size was stale, or the estimate short) leaves the vector to double as
  // usual, and so does a refusal of the address space (a limit on it, and an input that ends in
  // blanks).
  void reserve_for_the_rest() {
    std::vector<Message>& m = out_.messages;
    const std::uint64_t at = position(), read = at - pattern_start_, left = size_ > at ? size_ - at : 0;
    const std::uint64_t more = m.size() * left / std::max<std::uint64_t>(read, 1);
    const std::uint64_t want = std::min<std::uint64_t>(m.size() + more + more / 16, kMaxMessages);
    if (want < m.size() + m.size() / 4) return;
    try {
      m.reserve(static_cast<std::size_t>(want));
    } catch (const std::bad_alloc&) {
    }
  }

  // The input's offset of the next character.
  std::uint64_t position() const { return offset_ - static_cast<std::uint64_t>(e_ - p_); }

  // "messages" from its '[': [[src, dst, bytes], ...], each a plain integer.
  void read_messages() {
    ++p_;
    if (next_token() == ']') {
      ++p_;
      return;
    }
    do {
      if (next_token() != '[') give_up();
      ++p_;
      const std::uint64_t src = integer(kMaxRanks - 1);
      expect(',');
      const std::uint64_t dst = integer(kMaxRanks - 1);
      expect(',');
      const std::uint64_t bytes = integer(kMaxMessageBytes);
      expect(']');
      add(static_cast<std::int64_t>(src), static_cast<std::int64_t>(dst), bytes);
    } while (another(']'));
  }

  // "dense" from its '[': rows of plain integers, all of one length; the nonzero entries become
  // messages (row, column, bytes), in (src, dst) order by construction.
  void read_dense() {
    ++p_;
    if (next_token() == ']') {
      ++p_;
      return;
    }
    std::int64_t row = 0;
    do {
      if (next_token() != '[' || row >= static_cast<std::int64_t>(kMaxRanks)) give_up();
      ++p_;
      std::int64_t cols = 0;
      if (next_token() == ']') {
        ++p_;
      } else {
        do {
          const Bytes b = integer(kMaxMessageBytes);
          if (cols >= static_cast<std::int64_t>(kMaxRanks)) give_up();
          if (b != 0) add(row, cols, b);
          ++cols;
        } while (another(']'));
      }
      if (row == 0) out_.dense_width = cols;
      else if (cols != out_.dense_width) give_up();   // the SAX reader names the row
      out_.dense_rows = ++row;
    } while (another(']'));
  }

  // After an element of a list that `close` ends: true past the ',' when another element follows,
  // false past `close` when the list ends; anything else gives up.
  bool another(char close) {
    const int c = next_token();
    if (c != close && c != ',') give_up();
    ++p_;
    return c == ',';
  }

  // Any other field: its value's text, as `{"KEY":VALUE}`, to the field parser.
  void read_field(Key k) {
    const char* name = kKeys[static_cast<unsigned>(k)];
    text_.assign("{\"").append(name).append("\":");
    copy_value(text_);
    text_.push_back('}');
    std::optional<nlohmann::json> v = parse_field_(name, text_);
    if (!v) give_up();
    out_.fields[name] = std::move(*v);
  }

  // One JSON value after blanks, appended to `out` with each run of blanks outside strings
  // folded into one: a string, an object or array (brackets counted, at most kMaxJsonDepth
  // deep), or a scalar up to the next blank, ',', '}' or ']'. Only its extent is found here: its
  // syntax is the field parser's to check. Longer than kMaxFieldText: gives up.
  void copy_value(std::string& out) {
    int depth = 0;
    for (int c = next_token();; c = peek()) {
      if (c == kEnd) give_up();
      if (c == '"') {
        copy_string(out);
        if (depth == 0) return;
        continue;
      }
      if (is_blank(c)) {
        if (depth == 0) return;
        do ++p_;
        while (is_blank(peek()));
        out.push_back(' ');
        continue;
      }
      if (depth == 0 && (c == ',' || c == '}' || c == ']')) return;
      if (c == '{' || c == '[') {
        if (++depth > kMaxJsonDepth) give_up();
      } else if (c == '}' || c == ']') {
        --depth;
      }
      out.push_back(static_cast<char>(c));
      ++p_;
      if (out.size() > kMaxFieldText) give_up();
      if (depth == 0 && (c == '}' || c == ']')) return;
    }
  }

  // One JSON string from its opening quote to its closing one, appended to `out` as written.
  void copy_string(std::string& out) {
    out.push_back('"');
    ++p_;
    bool escaped = false;
    for (;;) {
      const int c = peek();
      if (c == kEnd) give_up();
      out.push_back(static_cast<char>(c));
      ++p_;
      if (out.size() > kMaxFieldText) give_up();
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') return;
    }
  }

  // Below this many messages the vector grows by doubling: too few to tell the bytes per message.
  static constexpr std::size_t kEstimateAfter = 4096;

  const FileChunks::Source& read_;
  const FieldParser& parse_field_;
  const std::uint64_t size_;  // the input's size, if known (else 0)
  std::vector<char> buf_;
  const char* p_ = nullptr;   // the next character in buf_
  const char* e_ = nullptr;   // the end of what buf_ holds
  std::uint64_t offset_ = 0;  // the input's offset at e_
  std::uint64_t pattern_start_ = 0;   // the offset of "messages" or "dense" '['
  bool eof_ = false;
  std::string text_;          // the current field's text
  ScannedMatrix out_;
};

}  // namespace

ScannedMatrix scan_matrix_json(const FileChunks::Source& read, std::uint64_t size, std::size_t buffer,
                               const FieldParser& parse_field) {
  return Scanner(read, size, buffer, parse_field).matrix();
}

}  // namespace commfit::detail

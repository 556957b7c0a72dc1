// Matrix files in and out (ir/matrix_io.h): the JSON form's streaming SAX reader and its field
// checks, the choice between it and the fast path (ir/matrix_json_fast.h), Matrix Market, the
// bounded reads of regular files every reader opens through, and the writers. One file because
// the three readers share the field checks and the exact messages they give (a file reads the
// same, and fails the same, by every path); a split would move those into a header of internals.
#include "ir/matrix_io.h"

#include "ir/error.h"
#include "ir/json_input.h"
#include "ir/matrix_json_fast.h"
#include "ir/matrix_market.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <charconv>
#include <cmath>
#include <numeric>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace commfit {
namespace {

using json = nlohmann::json;

// Where the SAX parser is: a JSON pointer kept as a stack of frames.
struct Frame {
  bool array = false;
  std::int64_t index = -1;   // current element (arrays)
  std::string key;           // current key (objects)
};

std::string escape_pointer_token(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
  return out;
}

const char* kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a fractional number";
    default: return "a number";
  }
}

// A non-negative integer. Ranks and rank counts must be integers in the JSON text (1.0 is
// refused: a real number where a rank belongs is a generator's bug, not a convenience); sizes and
// memory may be written as whole reals (100.0, 1e3), as float-printing generators write them
// (docs/FORMAT.md §2). "-0" is 0. Returns the problem, or nothing and sets `out`.
enum class Reals { refused, whole_ok };
std::optional<std::string> uint_problem(const json& v, const std::string& what, Reals reals, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
    return std::nullopt;
  }
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() == 0) {   // the parser gives "-0" as a signed 0
      out = 0;
      return std::nullopt;
    }
    return "negative " + what + " " + v.dump();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d < 0) return "negative " + what + " " + v.dump();
    if (d != std::floor(d)) return "fractional " + what + " " + v.dump();
    if (reals == Reals::refused)
      return what + " " + v.dump() + " is a real number: write it as an integer" +
             (d < 2147483648.0 ? " (" + std::to_string(static_cast<std::uint64_t>(d)) + ")" : "");
    if (d > 9007199254740992.0) return what + " " + v.dump() + " is too large";
    out = static_cast<std::uint64_t>(d);
    return std::nullopt;
  }
  return "expected a non-negative integer " + what + ", got " + kind_of(v);
}

// A raw message as read: kept with its index so errors can name /messages/K.
struct RawMessage {
  std::int64_t src, dst;
  Bytes bytes;
  std::int64_t index;   // position in "messages", or row * width + column for dense
};

// Streams the matrix file: "messages" and "dense" go straight into compact vectors, the other
// (small) top-level fields are captured as JSON values for validation afterwards.
class MatrixSax {
 public:
  MatrixSax(const std::string& file) : file_(file) {}

  std::optional<InputError> error;
  json fields = json::object();           // top-level fields other than messages/dense
  std::vector<RawMessage> messages;
  bool has_messages = false, has_dense = false;
  std::int64_t dense_rows = 0;
  std::vector<std::int64_t> dense_row_length;

  // --- nlohmann SAX interface ---
  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return scalar(json(v)); }
  bool string(std::string& v) { return scalar(json(v)); }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) {
    if (!enter()) return false;
    if (stack_.empty()) { stack_.push_back({}); return true; }   // the top-level object
    if (in_stream()) return fail_here(std::string("expected ") + stream_expectation() + ", got an object");
    capture_open(json::object());
    stack_.push_back({});
    return true;
  }
  bool key(std::string& k) {
    Frame& f = stack_.back();
    f.key = k;
    if (!capture_.empty() && capture_.back()->is_object() && capture_.back()->contains(k))
      return fail_here("field appears twice");
    if (stack_.size() == 1) {
      if (fields.contains(k) || (k == "messages" && has_messages) || (k == "dense" && has_dense))
        return fail_at("/" + escape_pointer_token(k), "field appears twice");
      static const char* known[] = {"format", "version", "ranks", "messages", "dense", "memory",
                                    "topology", "cost", "name", "description"};
      if (std::none_of(std::begin(known), std::end(known), [&](const char* n) { return k == n; }))
        return fail_at("/" + escape_pointer_token(k), "unknown field");
    }
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    if (!capture_.empty()) capture_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    if (!enter()) return false;
    if (stack_.empty()) return fail_at("", "expected a JSON object at the top level, got an array");
    const std::size_t depth = stack_.size();
    if (depth == 1 && (top_key() == "messages" || top_key() == "dense")) {
      (top_key() == "messages" ? has_messages : has_dense) = true;
      mode_ = top_key() == "messages" ? Mode::messages : Mode::dense;
      stack_.push_back({true, -1, {}});
      return true;
    }
    if (mode_ == Mode::messages && depth == 2) {
      ++stack_.back().index;
      stack_.push_back({true, -1, {}});
      return true;
    }
    if (mode_ == Mode::dense && depth == 2) {
      ++stack_.back().index;
      dense_rows = stack_.back().index + 1;
      dense_row_length.push_back(0);
      stack_.push_back({true, -1, {}});
      return true;
    }
    if (in_stream()) return fail_here(std::string("expected ") + stream_expectation() + ", got an array");
    capture_open(json::array());
    stack_.push_back({true, -1, {}});
    return true;
  }
  bool end_array() {
    const std::size_t depth = stack_.size();
    if (mode_ == Mode::messages && depth == 3) {
      if (stack_.back().index + 1 != 3)
        return fail_at(pointer_upto(2), "a message is [src, dst, bytes]: expected 3 numbers, got " +
                                            std::to_string(stack_.back().index + 1));
      const std::int64_t k = stack_[1].index;
      if (messages.size() >= kMaxMessages)
        return fail_at(pointer_upto(2), "more than " + std::to_string(kMaxMessages) + " messages, the limit");
      RawMessage& m = triplet_;
      m.index = k;
      messages.push_back(m);
      stack_.pop_back();
      return true;
    }
    stack_.pop_back();
    if (mode_ != Mode::none && depth == 2) { mode_ = Mode::none; return true; }
    if (mode_ == Mode::dense && depth == 3) return true;
    if (!capture_.empty()) capture_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line L, column C: WHAT"
    std::string what = ex.what();
    if (auto p = what.find(": "); p != std::string::npos && what.find("parse error") != std::string::npos)
      what = what.substr(p + 2);
    if (auto p = what.find("] "); p != std::string::npos && what.rfind("[json", 0) == 0)
      what = what.substr(p + 2);
    parse_error_position = position;
    error.emplace(file_, "", "invalid JSON: " + what);
    return false;
  }
  std::optional<std::size_t> parse_error_position;

 private:
  enum class Mode { none, messages, dense };

  bool enter() {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth)
      return fail_at(pointer_upto(2) + "/...", "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  }
  const std::string& top_key() const { return stack_[0].key; }
  bool in_stream() const { return mode_ != Mode::none && stack_.size() <= 3; }
  const char* stream_expectation() const {
    const std::size_t depth = stack_.size();
    if (mode_ == Mode::messages) return depth == 2 ? "a message [src, dst, bytes]" : "a non-negative integer";
    return depth == 2 ? "a row (an array of byte counts)" : "a non-negative integer";
  }

  std::string pointer_upto(std::size_t depth) const {
    std::string p;
    for (std::size_t k = 0; k < depth && k < stack_.size(); ++k) {
      const Frame& f = stack_[k];
      p += "/" + (f.array ? std::to_string(std::max<std::int64_t>(f.index, 0)) : escape_pointer_token(f.key));
    }
    return p;
  }
  bool fail_at(const std::string& place, const std::string& problem) {
    error.emplace(file_, place.empty() ? std::string("/") : place, problem);
    return false;
  }
  bool fail_here(const std::string& problem) { return fail_at(pointer_upto(stack_.size()), problem); }
  bool fail(const std::string& problem) { return fail_at("", problem); }

  // A number or other scalar inside messages/dense.
  bool stream_value(const json& v) {
    const std::size_t depth = stack_.size();
    Frame& f = stack_.back();
    ++f.index;
    if (depth != 3) return fail_here(std::string("expected ") + stream_expectation() + ", got " + kind_of(v));
    const bool is_bytes = mode_ == Mode::dense || f.index == 2;
    if (mode_ == Mode::messages && f.index > 2)
      return fail_at(pointer_upto(2), "a message is [src, dst, bytes]: expected 3 numbers, got more");
    const char* what = is_bytes ? "size" : (f.index == 0 ? "src rank" : "dst rank");
    std::uint64_t value = 0;
    if (auto problem = uint_problem(v, what, is_bytes ? Reals::whole_ok : Reals::refused, value))
      return fail_here(*problem + (is_bytes && problem->starts_with("fractional") ? " (sizes are whole bytes)" : ""));
    if (is_bytes && value > kMaxMessageBytes)
      return fail_here("size " + std::to_string(value) + " exceeds the limit of 2^53 bytes");
    if (!is_bytes && value > 2147483646u)
      return fail_here(std::string(what) + " " + std::to_string(value) + " is out of range");
    if (mode_ == Mode::messages) {
      if (f.index == 0) triplet_.src = static_cast<std::int64_t>(value);
      else if (f.index == 1) triplet_.dst = static_cast<std::int64_t>(value);
      else triplet_.bytes = value;
      return true;
    }
    ++dense_row_length.back();
    if (value != 0 && messages.size() >= kMaxMessages)
      return fail_here("more than " + std::to_string(kMaxMessages) + " nonzero entries (messages), the limit");
    if (value != 0)
      messages.push_back({stack_[1].index, f.index, value, stack_[1].index});
    return true;
  }

  bool scalar(json v) {
    if (stack_.empty()) return fail_at("", std::string("expected a JSON object at the top level, got ") + kind_of(v));
    if (in_stream()) return stream_value(v);
    Frame& f = stack_.back();
    if (f.array) ++f.index;
    if (capture_.empty()) {
      fields[f.key] = std::move(v);
      return true;
    }
    json& parent = *capture_.back();
    if (parent.is_array()) parent.push_back(std::move(v));
    else parent[f.key] = std::move(v);
    return true;
  }
  void capture_open(json v) {
    Frame& f = stack_.back();
    if (f.array) ++f.index;
    json* slot;
    if (capture_.empty()) {
      slot = &(fields[f.key] = std::move(v));
    } else {
      json& parent = *capture_.back();
      if (parent.is_array()) { parent.push_back(std::move(v)); slot = &parent.back(); }
      else slot = &(parent[f.key] = std::move(v));
    }
    capture_.push_back(slot);
  }

  std::string file_;
  std::vector<Frame> stack_;
  std::vector<json*> capture_;
  Mode mode_ = Mode::none;
  RawMessage triplet_{};
};

std::uint64_t require_uint(const json& v, const std::string& file, const std::string& place,
                           const char* what, std::uint64_t max, Reals reals) {
  std::uint64_t value = 0;
  if (auto problem = uint_problem(v, what, reals, value)) throw InputError(file, place, *problem);
  if (value > max) throw InputError(file, place, std::string(what) + " " + v.dump() + " is too large");
  return value;
}

std::string default_name(const std::string& file) {
  std::string stem = std::filesystem::path(file).stem().string();
  return stem.empty() ? "matrix" : stem;
}

void check_duplicates(std::vector<RawMessage>& raw, const std::string& file, bool dense) {
  std::vector<std::size_t> order(raw.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const RawMessage& x = raw[a];
    const RawMessage& y = raw[b];
    return std::tie(x.src, x.dst, x.index) < std::tie(y.src, y.dst, y.index);
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const RawMessage& a = raw[order[k - 1]];
    const RawMessage& b = raw[order[k]];
    if (a.src == b.src && a.dst == b.dst && !dense)
      throw InputError(file, "/messages/" + std::to_string(b.index),
                       "duplicate pair (" + std::to_string(b.src) + ", " + std::to_string(b.dst) +
                           "), first given at /messages/" + std::to_string(a.index));
  }
}

// Totals must fit in 63 bits so that every sum the passes form (r, c, t, phase loads, memory
// balances) is exact in 64-bit arithmetic.
void check_totals(const CommMatrix& m, const std::string& file, const std::string& place) {
  constexpr unsigned __int128 kLimit = static_cast<unsigned __int128>(1) << 63;
  std::vector<unsigned __int128> row(static_cast<std::size_t>(m.ranks), 0), col(static_cast<std::size_t>(m.ranks), 0);
  unsigned __int128 total = 0;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    row[i] += b;
    col[j] += b;
    total += b;
  });
  for (Rank r = 0; r < m.ranks; ++r) {
    if (row[r] > kLimit) throw InputError(file, place, "rank " + std::to_string(r) + " sends more than 2^63 bytes in total");
    if (col[r] > kLimit) throw InputError(file, place, "rank " + std::to_string(r) + " receives more than 2^63 bytes in total");
  }
  if (total > kLimit) throw InputError(file, place, "the matrix moves more than 2^63 bytes in total");
}

}  // namespace

namespace {

// Runs the SAX reader over [first, last); on a syntax error `where(offset)` gives its line and
// column (the text may be a file that is not in memory).
template <class It, class Where>
MatrixFile parse_matrix_json_from(It first, It last, const std::string& file, Where where);

// What the fields say once the whole text is read.
MatrixFile finish_matrix_json(MatrixSax& sax, const std::string& file);

// The fast path (ir/matrix_json_fast.h) over the input `read` of `size` bytes, through a buffer of
// `buffer` bytes: the matrix. Throws FastPathGaveUp when the scanner gave up or the file has any
// problem.
MatrixFile read_matrix_json_fast(const FileChunks::Source& read, std::uint64_t size, std::size_t buffer,
                                 const std::string& file);

// The JSON reader over `read`: the fast path, and where it gives up the SAX reader from the start
// (through FileChunks of `chunk` bytes), whose verdict and message are then the reader's. The
// matrix is returned, never moved: a CommMatrix's Eigen matrix has no move constructor, so a move
// would copy it (160 MB at 10^7 messages).
MatrixFile read_matrix_json(const FileChunks::Source& read, std::uint64_t size, std::size_t chunk,
                            const std::string& file, detail::JsonReader& used) {
  used = detail::JsonReader::fast;
  try {
    return read_matrix_json_fast(read, size, chunk, file);
  } catch (const detail::FastPathGaveUp&) {
  }
  used = detail::JsonReader::sax;
  FileChunks in(read, file, size, chunk);
  return parse_matrix_json_from(FileIterator(&in), FileIterator(), file, [&](std::size_t pos) { return in.line_column(pos); });
}

}  // namespace

MatrixFile parse_matrix_json_in_chunks(std::string_view text, const std::string& file, std::size_t chunk) {
  detail::JsonReader used;
  return read_matrix_json(text_source(text), text.size(), std::max<std::size_t>(chunk, 1), file, used);
}

// Through the same blank-folding input as a file (read_matrix), so that both give the same
// messages and neither holds the blanks twice.
MatrixFile parse_matrix_json(std::string_view text, const std::string& file) {
  return parse_matrix_json_in_chunks(text, file, FileChunks::kChunk);
}

namespace detail {

std::optional<MatrixFile> parse_matrix_json_fast(std::string_view text, const std::string& file, std::size_t buffer) {
  try {
    return read_matrix_json_fast(text_source(text), text.size(), std::max<std::size_t>(buffer, 1), file);
  } catch (const FastPathGaveUp&) {
    return std::nullopt;
  }
}

MatrixFile parse_matrix_json_sax(std::string_view text, const std::string& file, std::size_t chunk) {
  FileChunks in(text_source(text), file, text.size(), std::max<std::size_t>(chunk, 1));
  return parse_matrix_json_from(FileIterator(&in), FileIterator(), file, [&](std::size_t pos) { return in.line_column(pos); });
}

}  // namespace detail

namespace {

template <class It, class Where>
MatrixFile parse_matrix_json_from(It first, It last, const std::string& file, Where where) {
  MatrixSax sax(file);
  const bool ok = json::sax_parse(first, last, &sax, json::input_format_t::json, true);
  if (sax.error) {
    if (sax.parse_error_position) {
      auto [line, col] = where(*sax.parse_error_position == 0 ? 0 : *sax.parse_error_position - 1);
      throw InputError(file, "line " + std::to_string(line) + ", column " + std::to_string(col),
                       sax.error->problem());
    }
    throw *sax.error;
  }
  commfit_assert(ok, "parse_matrix_json", "SAX parse failed without an error");
  return finish_matrix_json(sax, file);
}

// "format", "version" and "ranks" of the top-level fields `f`: the rank count p.
Rank matrix_ranks(const json& f, const std::string& file) {
  auto need = [&](const char* key) -> const json& {
    if (!f.contains(key)) throw InputError(file, "/", std::string("missing required field \"") + key + "\"");
    return f.at(key);
  };
  const json& format = need("format");
  if (!format.is_string() || format.get<std::string>() != "commfit-matrix")
    throw InputError(file, "/format", "expected \"commfit-matrix\", got " + format.dump());
  const json& version = need("version");
  if (!version.is_number() || version.get<double>() != 1.0)
    throw InputError(file, "/version", "unsupported version " + version.dump() + " (this commfit reads version 1)");
  const json& ranks_v = need("ranks");
  const std::uint64_t ranks = require_uint(ranks_v, file, "/ranks", "rank count", 2147483647u, Reals::refused);
  if (ranks == 0) throw InputError(file, "/ranks", "rank count must be at least 1");
  if (ranks > kMaxRanks)
    throw InputError(file, "/ranks", std::to_string(ranks) + " ranks is over the limit of " + std::to_string(kMaxRanks) + " (a plan needs memory and a file per rank)");
  return static_cast<Rank>(ranks);
}

// The matrix of the messages `msgs` (in range, no pair twice) among p ranks and what the other
// top-level fields `f` say: checked in the order the SAX reader has always checked them, the
// totals named at `pattern` ("/messages" or "/dense").
MatrixFile finish_matrix(const json& f, Rank p, std::vector<Message> msgs, const char* pattern, const std::string& file) {
  MatrixFile out{make_matrix(p, std::move(msgs)), {}, {}};   // built in place: CommMatrix has no move (Eigen)
  CommMatrix& m = out.matrix;
  check_totals(m, file, pattern);

  if (f.contains("memory")) {
    const json& mem = f.at("memory");
    if (mem.is_array()) {
      if (mem.size() != static_cast<std::size_t>(p))
        throw InputError(file, "/memory", "expected " + std::to_string(p) + " entries (one per rank), got " + std::to_string(mem.size()));
      m.memory.reserve(mem.size());
      for (std::size_t k = 0; k < mem.size(); ++k)
        m.memory.push_back(require_uint(mem[k], file, "/memory/" + std::to_string(k), "memory size", ~std::uint64_t{0} >> 1, Reals::whole_ok));
    } else {
      m.memory.assign(static_cast<std::size_t>(p), require_uint(mem, file, "/memory", "memory size", ~std::uint64_t{0} >> 1, Reals::whole_ok));
    }
  }
  for (const char* key : {"name", "description"}) {
    if (!f.contains(key)) continue;
    if (!f.at(key).is_string()) throw InputError(file, std::string("/") + key, std::string("expected a string, got ") + kind_of(f.at(key)));
  }
  m.name = f.contains("name") ? f.at("name").get<std::string>() : default_name(file);
  if (f.contains("description")) m.description = f.at("description").get<std::string>();
  if (f.contains("topology")) {
    const json& t = f.at("topology");
    if (!t.is_string() && !t.is_object()) throw InputError(file, "/topology", std::string("expected a string or an object, got ") + kind_of(t));
    out.topology = t;
  }
  if (f.contains("cost")) {
    const json& c = f.at("cost");
    if (!c.is_object()) throw InputError(file, "/cost", std::string("expected an object, got ") + kind_of(c));
    for (auto& [k, v] : c.items()) {
      if (k != "tau_s" && k != "bandwidth_Bps") throw InputError(file, "/cost/" + escape_pointer_token(k), "unknown field");
      if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
        throw InputError(file, "/cost/" + k, "expected a positive number, got " + v.dump());
    }
    out.cost = c;
  }
  return out;
}

MatrixFile finish_matrix_json(MatrixSax& sax, const std::string& file) {
  const json& f = sax.fields;
  const Rank p = matrix_ranks(f, file);

  if (sax.has_messages && sax.has_dense)
    throw InputError(file, "/", "give either \"messages\" or \"dense\", not both");
  if (!sax.has_messages && !sax.has_dense) {
    if (f.contains("messages") || f.contains("dense"))
      throw InputError(file, f.contains("messages") ? "/messages" : "/dense", "expected an array");
    throw InputError(file, "/", "missing the pattern: a \"messages\" or a \"dense\" array");
  }
  if (sax.has_dense) {
    if (sax.dense_rows != p)
      throw InputError(file, "/dense", "expected " + std::to_string(p) + " rows (ranks), got " + std::to_string(sax.dense_rows));
    for (std::int64_t i = 0; i < p; ++i)
      if (sax.dense_row_length[i] != p)
        throw InputError(file, "/dense/" + std::to_string(i),
                         "expected " + std::to_string(p) + " entries (ranks), got " + std::to_string(sax.dense_row_length[i]));
  } else {
    for (const RawMessage& m : sax.messages) {
      if (m.src >= p) throw InputError(file, "/messages/" + std::to_string(m.index) + "/0", "src rank " + std::to_string(m.src) + " is out of range (ranks = " + std::to_string(p) + ")");
      if (m.dst >= p) throw InputError(file, "/messages/" + std::to_string(m.index) + "/1", "dst rank " + std::to_string(m.dst) + " is out of range (ranks = " + std::to_string(p) + ")");
    }
    check_duplicates(sax.messages, file, false);
  }

  std::vector<Message> msgs;
  msgs.reserve(sax.messages.size());
  for (const RawMessage& r : sax.messages)
    msgs.push_back({static_cast<Rank>(r.src), static_cast<Rank>(r.dst), r.bytes});
  sax.messages = {};
  return finish_matrix(f, p, std::move(msgs), sax.has_dense ? "/dense" : "/messages", file);
}

// One top-level field's text `{"KEY":VALUE}` through the SAX reader, as it reads that field inside
// a file (the same value, the same refusals: a key twice, nesting, syntax): the field parser of
// the fast path.
std::optional<json> parse_field_with_sax(const std::string& key, const std::string& text) {
  MatrixSax sax("");
  json::sax_parse(text, &sax, json::input_format_t::json, true);
  if (sax.error || !sax.fields.contains(key)) return std::nullopt;
  return std::move(sax.fields[key]);
}

MatrixFile read_matrix_json_fast(const FileChunks::Source& read, std::uint64_t size, std::size_t buffer,
                                 const std::string& file) {
  detail::ScannedMatrix s = detail::scan_matrix_json(read, size, buffer, parse_field_with_sax);
  // The SAX reader's checks, without their places: any problem is the SAX reader's to name.
  try {
    const Rank p = matrix_ranks(s.fields, file);
    if (s.has_messages == s.has_dense) throw detail::FastPathGaveUp{};
    if (s.has_dense && (s.dense_rows != p || s.dense_width != p)) throw detail::FastPathGaveUp{};
    if (s.max_rank >= p) throw detail::FastPathGaveUp{};
    std::vector<Message>& msgs = s.messages;
    if (!s.sorted) {   // then a duplicate pair may be anywhere: sort, and compare neighbours
      std::sort(msgs.begin(), msgs.end(), [](const Message& a, const Message& b) {
        return a.src != b.src ? a.src < b.src : a.dst < b.dst;
      });
      const auto same_pair = [](const Message& a, const Message& b) { return a.src == b.src && a.dst == b.dst; };
      if (std::adjacent_find(msgs.begin(), msgs.end(), same_pair) != msgs.end()) throw detail::FastPathGaveUp{};
    }
    return finish_matrix(s.fields, p, std::move(msgs), s.has_dense ? "/dense" : "/messages", file);
  } catch (const InputError&) {
    throw detail::FastPathGaveUp{};
  }
}

}  // namespace

MatrixFile parse_matrix_market(std::string_view text, const std::string& file) {
  MatrixMarketReader in(text, file);
  MatrixMarketLimits limits;
  limits.max_entries = static_cast<std::int64_t>(std::min<std::uint64_t>(text.size() / 4 + 1, kMaxMessages));
  const MatrixMarketHeader h = in.header({"integer", "real"}, {"general", "symmetric"}, limits);
  if (h.rows != h.cols)
    in.fail("the matrix is " + std::to_string(h.rows) + " x " + std::to_string(h.cols) + "; a communication matrix is square (ranks x ranks)");
  if (h.rows == 0) in.fail("rank count must be at least 1");
  if (static_cast<std::uint64_t>(h.rows) > kMaxRanks)
    in.fail(std::to_string(h.rows) + " ranks is over the limit of " + std::to_string(kMaxRanks) + " (a plan needs memory and a file per rank)");
  const Rank p = static_cast<Rank>(h.rows);
  const bool symmetric = h.symmetry == "symmetric";

  std::vector<RawMessage> raw;
  raw.reserve(static_cast<std::size_t>(h.entries) * (symmetric ? 2 : 1));
  std::vector<std::size_t> line_of;
  std::vector<std::string_view> tok;
  while (in.next_entry(tok)) {
    if (tok.size() != 3) in.fail("expected \"ROW COLUMN SIZE\"");
    const std::int64_t i = in.integer(tok[0], "row", 1, h.rows);
    const std::int64_t j = in.integer(tok[1], "column", 1, h.cols);
    Bytes b = 0;
    const std::string value(tok[2]);
    if (h.field == "integer") {
      if (!value.empty() && value[0] == '-') in.fail("negative size " + value);
      std::uint64_t v = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size()) in.fail("expected a non-negative integer size, got \"" + value + "\"");
      if (v > kMaxMessageBytes) in.fail("size " + value + " exceeds the limit of 2^53 bytes");
      b = v;
    } else {
      char* end = nullptr;
      const double d = std::strtod(value.c_str(), &end);
      if (end != value.c_str() + value.size() || !std::isfinite(d)) in.fail("expected a finite size, got \"" + value + "\"");
      if (d < 0) in.fail("negative size " + value);
      if (d > static_cast<double>(kMaxMessageBytes)) in.fail("size " + value + " exceeds the limit of 2^53 bytes");
      b = static_cast<Bytes>(std::ceil(d));   // real sizes are rounded up to whole bytes
    }
    const auto idx = static_cast<std::int64_t>(line_of.size());
    line_of.push_back(in.line());
    raw.push_back({i - 1, j - 1, b, idx});
    if (symmetric && i != j) raw.push_back({j - 1, i - 1, b, idx});
  }
  {
    std::vector<std::size_t> order(raw.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(raw[a].src, raw[a].dst, raw[a].index) < std::tie(raw[b].src, raw[b].dst, raw[b].index);
    });
    for (std::size_t k = 1; k < order.size(); ++k) {
      const RawMessage& a = raw[order[k - 1]];
      const RawMessage& b = raw[order[k]];
      if (a.src == b.src && a.dst == b.dst)
        throw InputError(file, "line " + std::to_string(line_of[b.index]),
                         "duplicate entry (" + std::to_string(b.src + 1) + ", " + std::to_string(b.dst + 1) +
                             "), first given on line " + std::to_string(line_of[a.index]));
    }
  }
  std::vector<Message> msgs;
  msgs.reserve(raw.size());
  for (const RawMessage& r : raw) msgs.push_back({static_cast<Rank>(r.src), static_cast<Rank>(r.dst), r.bytes});
  MatrixFile out{make_matrix(p, std::move(msgs)), {}, {}};   // built in place: CommMatrix has no move (Eigen)
  check_totals(out.matrix, file, "");
  out.matrix.name = default_name(file);
  return out;
}

namespace {

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

// Checks that the open `fd` is a regular file of at most `limit` bytes and returns its size;
// closes it and throws InputError otherwise (a device such as /dev/zero would never end).
std::uint64_t check_regular(int fd, const std::string& file, std::size_t limit) {
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError(file, "", std::string("cannot read the file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(file, "", "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw InputError(file, "", "not a regular file (a FIFO, device or socket is refused)");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > limit)
    throw InputError(file, "", "file is " + std::to_string(size) + " bytes, over the limit of " + std::to_string(limit));
  closer.fd = -1;
  return size;
}

// Reads the open regular file `fd` of `size` bytes (named `file` in messages), closing it.
std::string read_text_fd(const int fd, const std::string& file, std::uint64_t size) {
  FdCloser closer{fd};
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(file, "", std::string("cannot read the file: ") + std::strerror(errno));
    if (n == 0) throw InputError(file, "", "the file shrank while it was read");
    done += static_cast<std::size_t>(n);
  }
  return text;
}

}  // namespace

// O_NONBLOCK: a FIFO is refused instead of waiting for a writer.
int open_regular_file(const std::string& file, std::size_t limit, std::uint64_t& size) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(file, "", std::string("cannot open the file: ") + std::strerror(errno));
  size = check_regular(fd, file, limit);
  return fd;
}

int open_regular_file_at(int dir_fd, const std::string& name, const std::string& shown, std::size_t limit, std::uint64_t& size) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(shown, "", std::string("cannot open the file: ") + std::strerror(errno));
  size = check_regular(fd, shown, limit);
  return fd;
}

FileChunks::Source fd_source(int fd) {
  return [fd](char* b, std::size_t n, std::uint64_t at) { return ::pread(fd, b, n, static_cast<off_t>(at)); };
}

std::string read_text_file(const std::filesystem::path& path, std::size_t limit) {
  const std::string file = path.string();
  std::uint64_t size = 0;
  const int fd = open_regular_file(file, limit, size);
  return read_text_fd(fd, file, size);
}

std::string read_text_file_at(int dir_fd, const std::string& name, const std::string& shown, std::size_t limit) {
  std::uint64_t size = 0;
  const int fd = open_regular_file_at(dir_fd, name, shown, limit, size);
  return read_text_fd(fd, shown, size);
}

bool has_mtx_extension(const std::string& file) {
  std::string ext = std::filesystem::path(file).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".mtx";
}

MatrixFormat detect_matrix_format(std::string_view head, const std::string& file) {
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && head[first] == '{') return MatrixFormat::json;
  if (!head.empty() && head[0] == '%') return MatrixFormat::matrix_market;
  return has_mtx_extension(file) ? MatrixFormat::matrix_market : MatrixFormat::json;
}

std::string read_standard_input(std::size_t limit) {
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(kStandardInput, "", std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > limit)
      throw InputError(kStandardInput, "", "more than " + std::to_string(limit) + " bytes, the input limit");
    text.append(buf, static_cast<std::size_t>(n));
  }
}

MatrixFile read_matrix(const std::filesystem::path& path, std::optional<MatrixFormat> format) {
  detail::JsonReader used;
  return detail::read_matrix(path, format, used);
}

MatrixFile detail::read_matrix(const std::filesystem::path& path, std::optional<MatrixFormat> format, JsonReader& used) {
  used = JsonReader::none;
  if (path == "-") {   // standard input: read whole (a pipe cannot be read twice), then by content
    const std::string text = read_standard_input(kMaxInputBytes);
    if (text.empty()) throw InputError(kStandardInput, "", "no input");
    return format.value_or(detect_matrix_format(std::string_view(text).substr(0, 4096), "")) == MatrixFormat::matrix_market
               ? parse_matrix_market(text, kStandardInput)
               : read_matrix_json(text_source(text), text.size(), FileChunks::kChunk, kStandardInput, used);
  }
  const std::string file = path.string();
  std::uint64_t size = 0;
  const FdCloser closer{open_regular_file(file, kMaxInputBytes, size)};
  if (size == 0) throw InputError(file, "", "file is empty");
  // The format from the first bytes (a JSON object, or Matrix Market's %% banner), else the
  // extension, whatever its case.
  if (!format) {
    char head[4096];
    ssize_t got;
    do got = ::pread(closer.fd, head, sizeof head, 0);
    while (got < 0 && errno == EINTR);
    if (got < 0) throw InputError(file, "", std::string("cannot read the file: ") + std::strerror(errno));
    format = detect_matrix_format(std::string_view(head, static_cast<std::size_t>(got)), file);
  }
  if (*format == MatrixFormat::matrix_market) {
    const int copy = ::dup(closer.fd);   // read_text_fd closes what it is given
    if (copy < 0) throw InputError(file, "", std::string("cannot read the file: ") + std::strerror(errno));
    const std::string text = read_text_fd(copy, file, size);
    return parse_matrix_market(text, file);
  }
  // JSON is parsed as it is read (the readers keep the messages, not the text).
  return read_matrix_json(fd_source(closer.fd), size, FileChunks::kChunk, file, used);
}

std::string matrix_market(const CommMatrix& m) {
  if (!m.memory.empty()) throw UsageError("Matrix Market carries no memory limits: write this matrix as JSON");
  std::string out = "%%MatrixMarket matrix coordinate integer general\n";
  // Comments: the name and description, one line each; entry (i, j) = bytes rank i-1 sends to j-1.
  for (const std::string* text : {&m.name, &m.description}) {
    if (text->empty()) continue;
    std::string line = *text;
    for (char& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    out += "% " + line + "\n";
  }
  out += "% commfit communication matrix: entry (i, j) = bytes rank i-1 sends to rank j-1\n";
  out += std::to_string(m.ranks) + " " + std::to_string(m.ranks) + " " + std::to_string(m.nnz()) + "\n";
  m.for_each([&](Rank i, Rank j, Bytes b) { out += std::to_string(i + 1) + " " + std::to_string(j + 1) + " " + std::to_string(b) + "\n"; });
  return out;
}

std::string matrix_json(const CommMatrix& m) {
  std::string out = "{\"format\": \"commfit-matrix\", \"version\": 1, \"ranks\": " + std::to_string(m.ranks);
  if (!m.name.empty()) out += ", \"name\": " + json(m.name).dump();
  if (!m.description.empty()) out += ", \"description\": " + json(m.description).dump();
  if (!m.memory.empty()) out += ", \"memory\": " + json(m.memory).dump();
  out += ",\n \"messages\": [";
  bool first = true;
  m.for_each([&](Rank i, Rank j, Bytes b) {
    out += first ? "\n  [" : ",\n  [";
    first = false;
    out += std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(b) + "]";
  });
  out += "\n ]}\n";
  return out;
}

}  // namespace commfit

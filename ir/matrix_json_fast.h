// The fast path of the JSON matrix reader (ir/matrix_io.cpp; docs/HARDENING.md, "Special files
// and threads"): a strict scanner for the shape commfit's own writers and every sane generator
// give a matrix file. It reads the file forward through one fixed buffer, takes "messages"
// ([src, dst, bytes] triples) and "dense" rows of plain non-negative integers in a tight loop,
// and hands every other top-level field's value to a parser the caller gives (the SAX reader's).
//
// It is a strict subset of the reader: on anything it is not sure of (a '-', '.' or exponent in a
// number, a leading zero, a number or rank beyond the limits, an escape in a key, a duplicate or
// unknown key, a duplicate pair, a triple that is not three numbers, too many messages, a field
// larger than kMaxFieldText, any syntax error, any read error) it gives up, and the SAX reader
// reads the file from its start: so every error message and limit stays the SAX reader's.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/json_input.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace commfit::detail {

// What the scanner read of a matrix file: the fields the SAX reader also checks, and the pattern.
struct ScannedMatrix {
  nlohmann::json fields = nlohmann::json::object();   // format, version, ranks, memory, ... as the SAX reader keeps them
  std::vector<Message> messages;   // "messages" in file order (zero sizes kept), or the nonzero "dense" entries
  bool has_messages = false, has_dense = false;
  std::int64_t dense_rows = 0;     // "dense": the number of rows,
  std::int64_t dense_width = 0;    // and the length of every one of them
  Rank max_rank = -1;              // the largest src or dst
  bool sorted = true;              // messages in strictly increasing (src, dst) order
};

// The largest text of one field other than "messages" and "dense" the scanner hands on (blanks
// folded); a larger one (a memory array of a million ranks) is left to the SAX reader.
inline constexpr std::size_t kMaxFieldText = std::size_t{16} << 20;

// Parses the text `{"KEY":VALUE}` (one top-level field, blanks folded) as the SAX reader parses
// that field inside the file: its value, or nothing when the SAX reader would refuse it there.
using FieldParser = std::function<std::optional<nlohmann::json>(const std::string& key, const std::string& text)>;

// Thrown when the fast path gives up on an input; the JSON reader then runs the SAX reader.
struct FastPathGaveUp {};

// Scans the input `read` (like pread(2); `size` bytes if known, for the buffer's size) through a
// buffer of `buffer` bytes (any size from 1: a token may be split at any byte): the fields and the
// pattern. Throws FastPathGaveUp when it gives up.
ScannedMatrix scan_matrix_json(const FileChunks::Source& read, std::uint64_t size, std::size_t buffer,
                               const FieldParser& parse_field);

}  // namespace commfit::detail

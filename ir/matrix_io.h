// Reading the communication matrix: the JSON format of docs/FORMAT.md §1 (schemas/matrix.schema.json)
// and Matrix Market coordinate files (.mtx). Every problem is an InputError naming the file,
// the place (JSON pointer or line) and what is wrong; limits are checked before allocating.
#pragma once

#include "ir/comm_matrix.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace commfit {

struct MatrixFile {
  CommMatrix matrix;
  nlohmann::json topology;   // the file's "topology" default (null when absent)
  nlohmann::json cost;       // the file's "cost" default (null when absent)
};

inline constexpr std::size_t kMaxInputBytes = std::size_t{1} << 32;   // 4 GiB
inline constexpr int kMaxJsonDepth = 64;
// Largest rank count accepted: a plan holds a row index entry, a schedule and a file per rank,
// so larger counts are refused up front rather than dying allocating (16,777,216 ranks).
inline constexpr std::uint64_t kMaxRanks = std::uint64_t{1} << 24;
// Largest message count accepted (134,217,728): the reader holds each message while it checks
// them, and planning that many needs ~100 GB (planner/limits.h), so more is refused while reading.
inline constexpr std::uint64_t kMaxMessages = std::uint64_t{1} << 27;

// Parses by content; `file` is used in messages and for the default name.
MatrixFile parse_matrix_json(std::string_view text, const std::string& file);
// The same, the text fed to the readers `chunk` bytes at a time as read_matrix feeds a file (64 KiB):
// for the tests of every buffer boundary. Same verdict, same matrix, same message for any chunk.
MatrixFile parse_matrix_json_in_chunks(std::string_view text, const std::string& file, std::size_t chunk);
MatrixFile parse_matrix_market(std::string_view text, const std::string& file);

enum class MatrixFormat { json, matrix_market };

// The format of a matrix file from its first bytes `head`: a JSON object ('{' after blanks) or
// Matrix Market (a '%' line first); neither: by the extension of `file` (.mtx in any case:
// Matrix Market, else JSON, so that either reader names the problem).
MatrixFormat detect_matrix_format(std::string_view head, const std::string& file);
bool has_mtx_extension(const std::string& file);

// How standard input is named in messages.
inline constexpr const char* kStandardInput = "<stdin>";

// Reads a matrix file, its format detected as above unless `format` is given; "-" reads standard
// input (whole, at most kMaxInputBytes).
MatrixFile read_matrix(const std::filesystem::path& path, std::optional<MatrixFormat> format = std::nullopt);

// Reads a whole file with a size limit; throws InputError when unreadable or too large.
std::string read_text_file(const std::filesystem::path& path, std::size_t limit = kMaxInputBytes);

// The same for `name` inside the open directory `dir_fd` (openat), named `shown` in messages:
// the files of one directory read this way all come from that directory even if its path is
// renamed or swapped meanwhile.
std::string read_text_file_at(int dir_fd, const std::string& name, const std::string& shown,
                              std::size_t limit = kMaxInputBytes);

// Opens `file`, or `name` inside the open directory `dir_fd` (named `shown` in messages), for
// reading: a regular file of at most `limit` bytes (no FIFO, device, socket or directory; a FIFO
// is not waited on). Returns the descriptor, which the caller closes, and sets `size`.
int open_regular_file(const std::string& file, std::size_t limit, std::uint64_t& size);
int open_regular_file_at(int dir_fd, const std::string& name, const std::string& shown, std::size_t limit,
                         std::uint64_t& size);

// The JSON reader's two paths, for the tests and the fuzz target. A JSON matrix is read first by
// a strict scanner (ir/matrix_json_fast.h) that accepts only what it is sure of; on anything
// else (every error among it) the SAX reader reads it again from the start, so every verdict and
// message is the SAX reader's whenever the scanner does not accept the file.
namespace detail {

// Which reader gave read_matrix's result or error (none: the file was not read as JSON).
enum class JsonReader { none, fast, sax };

// read_matrix, saying which reader gave the result or the error.
MatrixFile read_matrix(const std::filesystem::path& path, std::optional<MatrixFormat> format, JsonReader& used);

// The scanner alone over `text`, through a buffer of `buffer` bytes: the matrix when it accepts
// the text (then it must equal the SAX reader's), nothing when it gives up.
std::optional<MatrixFile> parse_matrix_json_fast(std::string_view text, const std::string& file, std::size_t buffer);

// The SAX reader alone over `text`, fed `chunk` bytes at a time.
MatrixFile parse_matrix_json_sax(std::string_view text, const std::string& file, std::size_t chunk);

}  // namespace detail

// Writes a matrix as JSON (sparse "messages" triplets); used by generators and tests.
std::string matrix_json(const CommMatrix& m);
// Writes a matrix as Matrix Market (coordinate integer general, 1-based, name and description as
// comments); refuses a matrix with memory limits, which the format cannot carry.
std::string matrix_market(const CommMatrix& m);

}  // namespace commfit

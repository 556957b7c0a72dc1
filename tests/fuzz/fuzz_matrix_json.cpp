// libFuzzer target: the matrix JSON reader must accept or throw InputError, never crash, hang or
// allocate without bound. Accepted matrices are also fingerprinted and planned when small.
// Differential, twice:
// - the fast path against the SAX reader (ir/matrix_json_fast.h): wherever the fast path accepts
//   an input, through a buffer of 64 KiB or of 1-7 bytes, the SAX reader must accept it too and
//   give the same file, every field of it; and the reader (fast path first) must give the SAX
//   reader's verdict, its message byte for byte;
// - the reader against its buffer: it refills a 64 KiB buffer from the file and folds runs of
//   blanks across refills; fed a few bytes at a time (every boundary in a short input) it must
//   reach the same verdict, the same matrix or the same message.
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/pipeline.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

// Every field of a MatrixFile (JSON values with their types: 1 and 1.0 differ in dump()).
std::string describe(const commfit::MatrixFile& f) {
  std::string s = "ok ranks " + std::to_string(f.matrix.ranks) + " " + commfit::matrix_fingerprint(f.matrix) + " memory";
  for (commfit::Bytes b : f.matrix.memory) s += " " + std::to_string(b);
  return s + " name " + f.matrix.name + " description " + f.matrix.description + " topology " + f.topology.dump() +
         " cost " + f.cost.dump();
}

// The fast path through a buffer of `buffer` bytes must give what the SAX reader gives, when it
// accepts the input at all.
void check_fast_path(std::string_view text, std::size_t buffer, const std::string& sax) {
  const std::optional<commfit::MatrixFile> f = commfit::detail::parse_matrix_json_fast(text, "fuzz.json", buffer);
  if (!f) return;
  const std::string fast = describe(*f);
  if (fast != sax) {
    std::fprintf(stderr, "the fast path (buffer %zu) and the SAX reader differ:\n  fast: %s\n  sax:  %s\n", buffer, fast.c_str(), sax.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t chunk = 1 + size % 7;
  std::string sax;
  try {
    sax = describe(commfit::detail::parse_matrix_json_sax(text, "fuzz.json", std::size_t{1} << 16));
  } catch (const commfit::InputError& e) {
    sax = std::string("error ") + e.what();
  }
  check_fast_path(text, std::size_t{1} << 16, sax);
  if (size <= 4096) check_fast_path(text, chunk, sax);

  std::string whole;
  try {
    const commfit::MatrixFile f = commfit::parse_matrix_json(text, "fuzz.json");
    whole = describe(f);
    if (f.matrix.ranks <= 64 && f.matrix.nnz() <= 512) (void)commfit::make_plan(f.matrix, {});
  } catch (const commfit::InputError& e) {
    whole = std::string("error ") + e.what();
  } catch (const commfit::UsageError&) {
  }
  if (!whole.empty() && whole != sax) {   // the reader is the SAX reader, where the fast path gives up too
    std::fprintf(stderr, "the reader and the SAX reader differ:\n  reader: %s\n  sax:    %s\n", whole.c_str(), sax.c_str());
    std::abort();
  }
  if (size > 4096) return 0;   // long inputs: the boundary test costs more than it finds (tests/test_matrix_io.cpp has the fixtures)
  std::string pieces;
  try {
    pieces = describe(commfit::parse_matrix_json_in_chunks(text, "fuzz.json", chunk));
  } catch (const commfit::InputError& e) {
    pieces = std::string("error ") + e.what();
  }
  if (!whole.empty() && whole != pieces) {
    std::fprintf(stderr, "the reader depends on its buffer (chunk %zu):\n  whole:  %s\n  pieces: %s\n", chunk, whole.c_str(), pieces.c_str());
    std::abort();
  }
  return 0;
}

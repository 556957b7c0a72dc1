// libFuzzer target: the matrix JSON reader must accept or throw InputError, never crash, hang or
// allocate without bound. Accepted matrices are also fingerprinted and planned when small.
// Differential: the reader refills a 64 KiB buffer from the file and folds runs of blanks across
// refills; fed a few bytes at a time (every boundary in a short input) it must reach the same
// verdict, the same matrix or the same message.
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/pipeline.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string whole;
  try {
    const commfit::MatrixFile f = commfit::parse_matrix_json(text, "fuzz.json");
    whole = "ok " + commfit::matrix_fingerprint(f.matrix) + " " + f.matrix.name + " " + f.topology.dump() + " " + f.cost.dump();
    if (f.matrix.ranks <= 64 && f.matrix.nnz() <= 512) (void)commfit::make_plan(f.matrix, {});
  } catch (const commfit::InputError& e) {
    whole = std::string("error ") + e.what();
  } catch (const commfit::UsageError&) {
  }
  if (size > 4096) return 0;   // long inputs: the boundary test costs more than it finds (tests/test_matrix_io.cpp has the fixtures)
  const std::size_t chunk = 1 + size % 7;
  std::string pieces;
  try {
    const commfit::MatrixFile f = commfit::parse_matrix_json_in_chunks(text, "fuzz.json", chunk);
    pieces = "ok " + commfit::matrix_fingerprint(f.matrix) + " " + f.matrix.name + " " + f.topology.dump() + " " + f.cost.dump();
  } catch (const commfit::InputError& e) {
    pieces = std::string("error ") + e.what();
  }
  if (!whole.empty() && whole != pieces) {
    std::fprintf(stderr, "the reader depends on its buffer (chunk %zu):\n  whole:  %s\n  pieces: %s\n", chunk, whole.c_str(), pieces.c_str());
    std::abort();
  }
  return 0;
}

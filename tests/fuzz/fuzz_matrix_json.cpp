// libFuzzer target: the matrix JSON reader must accept or throw InputError, never crash, hang or
// allocate without bound. Accepted matrices are also fingerprinted and planned when small.
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "planner/pipeline.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const commfit::MatrixFile f = commfit::parse_matrix_json(text, "fuzz.json");
    (void)commfit::matrix_fingerprint(f.matrix);
    if (f.matrix.ranks <= 64 && f.matrix.nnz() <= 512) (void)commfit::make_plan(f.matrix, {});
  } catch (const commfit::InputError&) {
  } catch (const commfit::UsageError&) {
  }
  return 0;
}

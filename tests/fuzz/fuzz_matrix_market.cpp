// libFuzzer target: the Matrix Market reader accepts or throws InputError, nothing else.
#include "ir/error.h"
#include "ir/matrix_io.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)commfit::parse_matrix_market(text, "fuzz.mtx");
  } catch (const commfit::InputError&) {
  }
  return 0;
}

// libFuzzer target: commfit extract's readers of a sparse matrix's pattern (Matrix Market) and of
// a partition vector file accept or throw InputError, nothing else. The first two bytes choose
// the partition's vertex count and part count; the rest is the file.
#include "ir/error.h"
#include "workloads/mtx_pattern.h"
#include "workloads/partition.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)commfit::parse_mtx_pattern(text, "fuzz.mtx");
  } catch (const commfit::InputError&) {
  }
  if (size < 2) return 0;
  try {
    (void)commfit::parse_partition(text.substr(2), "fuzz.part", 1 + data[0] % 64, data[1] % 9);
  } catch (const commfit::InputError&) {
  }
  return 0;
}

// libFuzzer target: the binary plan reader (backends/plan_binary.h) accepts or throws InputError,
// never crashes, hangs or allocates without bound. The input is written to a scratch file and
// read three ways (whole plan, manifest, rank 0's slice), as given and once more with every
// checksum recomputed, so that the fuzzer gets past the checksums into the layout checks and the
// slice decoder. A plan the whole-plan reader accepts is written again: its slices and index must
// come out byte for byte as they went in (the decoder accepts the canonical encoding only).
#include "backends/plan_binary.h"
#include "ir/error.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}
std::uint32_t get_u32(const std::uint8_t* p) {
  return p[0] | p[1] << 8 | p[2] << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) p[k] = static_cast<std::uint8_t>(v >> (8 * k));
}

// Recomputes the header checksum, the manifest checksum and each index entry's check (bytes
// 52..55) and checksum (56..63) whose entry and slice lie inside the data (offsets as in
// docs/FORMAT.md §3.3: the index offset at header byte 40, its entry count at 236).
void fix_checksums(std::vector<std::uint8_t>& d) {
  const std::size_t header = commfit::kPlanBinaryHeaderBytes, entry = commfit::kPlanBinaryIndexEntryBytes;
  if (d.size() < header) return;
  const std::uint64_t manifest_offset = get_u64(&d[48]), manifest_bytes = get_u64(&d[56]);
  if (manifest_offset <= d.size() && manifest_bytes <= d.size() - manifest_offset)
    put_u64(&d[64], commfit::plan_binary_checksum(d.data() + manifest_offset, manifest_bytes));
  const std::uint64_t index = get_u64(&d[40]), entries = get_u32(&d[236]);
  for (std::uint64_t k = 0; k < entries && index <= d.size() && (k + 1) * entry <= d.size() - index; ++k) {
    std::uint8_t* e = &d[index + k * entry];
    const auto check = static_cast<std::uint32_t>(commfit::plan_binary_checksum(e, 52));
    for (int b = 0; b < 4; ++b) e[52 + b] = static_cast<std::uint8_t>(check >> (8 * b));
    const std::uint64_t off = get_u64(e), bytes = get_u64(e + 8);
    if (off > d.size() || bytes > d.size() - off) continue;
    put_u64(e + 56, commfit::plan_binary_checksum(d.data() + off, bytes, commfit::plan_binary_checksum(e, 56)));
  }
  put_u64(&d[248], commfit::plan_binary_checksum(d.data(), 248));
}

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Bytes [header end, manifest offset) of a file the reader accepted: the slices and the index.
std::vector<std::uint8_t> slices_and_index(const std::vector<std::uint8_t>& d) {
  return {d.begin() + commfit::kPlanBinaryHeaderBytes, d.begin() + static_cast<std::ptrdiff_t>(get_u64(&d[48]))};
}

void read_all_ways(const std::string& path, const std::vector<std::uint8_t>& data) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  try {
    const commfit::Plan plan = commfit::read_plan_binary(path);
    // Accepted: writing it again gives the same slices and index (the manifest's text may differ).
    static const std::string again = path + ".again.cfp";
    commfit::write_plan_binary(plan, again);
    if (slices_and_index(slurp(again)) != slices_and_index(data)) std::abort();
  } catch (const commfit::InputError&) {
  }
  try {
    (void)commfit::read_manifest_binary(path);
  } catch (const commfit::InputError&) {
  }
  try {
    (void)commfit::read_rank_schedule_binary(path, 0);
  } catch (const commfit::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/commfit-fuzz-plan-binary-" + std::to_string(::getpid()) + ".cfp";
  std::vector<std::uint8_t> d(data, data + size);
  read_all_ways(path, d);
  fix_checksums(d);
  read_all_ways(path, d);
  return 0;
}

// Writes one communication matrix of the SMPI benchmark (bench/smpi/run.sh) as commfit JSON.
//
//   bench_smpi_patterns KIND P BYTES OUT.json
//
// KIND (BYTES = the typical message size):
//   uniformD     Ranka-Wang §7.1: every rank sends and receives D messages of BYTES (D = 4, 16, 64, ...)
//   nonuniformD  Ranka-Wang §7.2 set 1 on the same pattern, sizes uniform in 0..2*BYTES (unit 2*BYTES/P)
//   stencil27    3D 27-point halo exchange on a near-cubic process grid (periodic): faces BYTES,
//                edges BYTES/16, corners BYTES/256 (at least 8 bytes)
//   samplesort   last step of a sample sort of Zipf(1.1) keys (P/16 records of BYTES per rank, so at
//                most P/16 destinations per rank; one popular key makes a hot bucket)
//   moe          mixture-of-experts dispatch: 1 expert per rank, 16 tokens of BYTES per rank, top-2,
//                Zipf(1.0) expert popularity
//   dense        every rank sends BYTES to every other rank
#include "ir/matrix_io.h"
#include "workloads/generators.h"
#include "workloads/skewed.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace commfit;

namespace {

std::array<int, 3> grid3(int p) {
  std::array<int, 3> best{p, 1, 1};
  for (int a = 1; a <= p; ++a)
    for (int b = a; a * b <= p; ++b)
      if (p % (a * b) == 0) {
        const int c = p / (a * b);
        if (c < b) continue;
        if (c - a < best[0] - best[2] || best[1] == 1) best = {c, b, a};
      }
  return best;
}

CommMatrix stencil27(Rank p, Bytes face) {
  const auto g = grid3(p);
  std::map<std::pair<Rank, Rank>, Bytes> sum;   // on small grids two directions reach the same rank
  for (Rank r = 0; r < p; ++r) {
    const int x = r % g[0], y = (r / g[0]) % g[1], z = r / (g[0] * g[1]);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nz = std::abs(dx) + std::abs(dy) + std::abs(dz);
          if (nz == 0) continue;
          const int X = (x + dx + g[0]) % g[0], Y = (y + dy + g[1]) % g[1], Z = (z + dz + g[2]) % g[2];
          const Rank q = X + g[0] * (Y + g[1] * Z);
          if (q == r) continue;
          const Bytes b = nz == 1 ? face : nz == 2 ? std::max<Bytes>(face / 16, 8) : std::max<Bytes>(face / 256, 8);
          sum[{r, q}] += b;
        }
  }
  std::vector<Message> msgs;
  for (const auto& [pair, b] : sum) msgs.push_back({pair.first, pair.second, b});
  return make_matrix(p, std::move(msgs));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: bench_smpi_patterns KIND P BYTES OUT.json\n");
    return 2;
  }
  const std::string kind = argv[1];
  const Rank p = std::atoi(argv[2]);
  const Bytes bytes = std::strtoull(argv[3], nullptr, 10);
  const std::uint64_t seed = 20261122;
  CommMatrix m;
  if (kind.rfind("uniform", 0) == 0) m = gen_uniform(p, std::atoi(kind.c_str() + 7), bytes, seed);
  else if (kind.rfind("nonuniform", 0) == 0) m = gen_nonuniform(p, std::atoi(kind.c_str() + 10), std::max<Bytes>(2 * bytes / p, 1), seed);
  else if (kind == "stencil27") m = stencil27(p, bytes);
  else if (kind == "samplesort") m = gen_sample_sort_skewed(p, std::max(p / 16, 4), bytes, 1.1, 16, seed);
  else if (kind == "moe") m = gen_moe_dispatch(p, 1, 16, 2, 1.0, bytes, seed);
  else if (kind == "dense") m = gen_uniform(p, p - 1, bytes, seed);
  else {
    std::fprintf(stderr, "bench_smpi_patterns: unknown kind %s\n", kind.c_str());
    return 2;
  }
  m.name = kind + "-" + std::to_string(p) + "-" + std::to_string(bytes);
  std::ofstream(argv[4]) << matrix_json(m);
  return 0;
}

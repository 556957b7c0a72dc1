// bench_signature: the PMPI interposer's local work per call (runtime/pmpi_signature.h), at the
// communicator sizes the interposer's per-call target names (p <= 1024), without MPI: the
// agreement's MPI_Allreduce comes on top (docs/EXECUTOR.md). Three rows per p, interleaved block
// by block: the same counts as the last call (the steady state: one comparison), counts that change
// on every call (the hashes recomputed), and a baseline that hashes every call's counts in one mix
// chain per hash.
//
//   bench_signature [--blocks 9]
#include "runtime/pmpi_signature.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using commfit::pmpi::mix;

volatile std::uint64_t sink;

// The interposer before this benchmark: two serial chains of mix() over all p peers on every call.
void baseline(int p, const int* sc, const int* rc, std::int64_t* sb, std::int64_t* rb) {
  std::uint64_t h = mix(static_cast<std::uint64_t>(p)), z = h;
  for (int j = 0; j < p; ++j) {
    sb[j] = sc[j], rb[j] = rc[j];
    h = mix(h ^ static_cast<std::uint64_t>(sb[j])) + static_cast<std::uint64_t>(rb[j]);
    z = mix(z ^ ((sb[j] > 0 ? 1u : 0u) | (rb[j] > 0 ? 2u : 0u)));
  }
  sink = h + z;
}

template <class F>
double per_call_us(F f, int iters) {
  const auto t = std::chrono::steady_clock::now();
  for (int k = 0; k < iters; ++k) f(k);
  return 1e6 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count() / iters;
}

}  // namespace

int main(int argc, char** argv) {
  int blocks = 9;
  for (int k = 1; k < argc; ++k)
    if (!std::strcmp(argv[k], "--blocks") && k + 1 < argc) blocks = std::max(1, std::atoi(argv[++k]));
  std::printf("%6s %14s %14s %14s   (us per call, median of %d blocks)\n", "p", "same counts", "changed", "baseline", blocks);
  for (int p : {8, 64, 256, 1024, 4096}) {
    const auto n = static_cast<std::size_t>(p);
    std::vector<int> sc(n), rc(n), sc2(n);
    for (int j = 0; j < p; ++j) sc[j] = (j * 7) % 3 ? 100 + j : 0, rc[j] = j % 5 ? 7 * j : 0, sc2[j] = sc[j] + 1;
    std::vector<std::int64_t> sb(n), rb(n);
    commfit::pmpi::CountView view;
    const int iters = std::max(1000, 4000000 / p);
    std::vector<double> same, changed, base;
    for (int b = 0; b < blocks; ++b) {
      same.push_back(per_call_us([&](int) { view.see(p, sc.data(), 1, rc.data(), 1); sink = view.sizes(); }, iters));
      changed.push_back(per_call_us([&](int k) { view.see(p, (k & 1 ? sc2 : sc).data(), 1, rc.data(), 1); sink = view.sizes(); }, iters));
      base.push_back(per_call_us([&](int) { baseline(p, sc.data(), rc.data(), sb.data(), rb.data()); }, iters));
    }
    for (auto* v : {&same, &changed, &base}) std::sort(v->begin(), v->end());
    const std::size_t m = same.size() / 2;
    std::printf("%6d %14.3f %14.3f %14.3f\n", p, same[m], changed[m], base[m]);
  }
}

// bench_adapt: pattern reuse against re-planning (docs/EXECUTOR.md "Pattern reuse"). For each
// pattern and strategy, a plan is made once; then the same sparsity pattern with new sizes is
// (a) re-planned with make_plan, as `commfit plan` would, and (b) adapted, every rank's schedule
// by adapt_schedule (what each rank does on its own in adapt_or_plan, here all ranks in one
// process). Both are timed `--repeat` times (std::chrono::steady_clock, best and median); the
// collective part of adapt_or_plan (one MPI_Allreduce of the phase maxima, the executor's load
// checks) is not in (b).
//
//   bench_adapt [--repeat N] [--quick]
#include "ir/comm_matrix.h"
#include "planner/pipeline.h"
#include "runtime/adapt.hpp"
#include "workloads/generators.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace commfit;

namespace {

double seconds_of(const std::function<void()>& f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The same nonzero pattern with every size changed (deterministically).
CommMatrix resized(const CommMatrix& m) {
  std::vector<Message> out;
  for (const Message& x : messages_of(m)) out.push_back({x.src, x.dst, x.bytes / 2 + 1 + Bytes(x.src * 7 + x.dst) % 512});
  return make_matrix(m.ranks, std::move(out));
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  bool quick = false;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--repeat") && k + 1 < argc) repeat = std::max(1, std::atoi(argv[++k]));
    else if (!std::strcmp(argv[k], "--quick")) quick = true;
    else {
      std::fprintf(stderr, "usage: bench_adapt [--repeat N] [--quick]\n");
      return 2;
    }
  }
  struct Case {
    std::string name;
    CommMatrix m;
  };
  std::vector<Case> cases;
  cases.push_back({"uniform p=256 d=16", gen_uniform(256, 16, 4096, 1)});
  cases.push_back({"random p=1024 density 0.02", gen_random_sparse(1024, 0.02, 65536, 1)});
  if (!quick) cases.push_back({"uniform p=4096 d=32", gen_uniform(4096, 32, 4096, 1)});
  std::printf("| pattern | messages | strategy | phases | re-plan (make_plan), best / median | adapt (all ranks), best / median | re-plan / adapt |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    const CommMatrix next = resized(c.m);
    for (const char* strategy : {"async", "direct", "bounded"}) {
      PlanOptions o;
      o.strategy = strategy;
      const Plan plan = make_plan(c.m, o);
      std::vector<std::vector<std::int64_t>> rows(static_cast<std::size_t>(c.m.ranks)), cols(rows.size());
      for (auto& r : rows) r.assign(static_cast<std::size_t>(c.m.ranks), 0);
      for (auto& r : cols) r.assign(static_cast<std::size_t>(c.m.ranks), 0);
      next.for_each([&](Rank i, Rank j, Bytes b) {
        rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = static_cast<std::int64_t>(b);
        cols[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = static_cast<std::int64_t>(b);
      });
      std::vector<double> replan, adapt;
      std::size_t adapted = 0;
      for (int k = 0; k < repeat; ++k) {
        replan.push_back(seconds_of([&] { (void)make_plan(next, o); }));
        adapt.push_back(seconds_of([&] {
          adapted = 0;
          for (const RankSchedule& r : plan.ranks)
            adapted += runtime::adapt_schedule(r, rows[static_cast<std::size_t>(r.rank)].data(), cols[static_cast<std::size_t>(r.rank)].data(),
                                            plan.manifest.matrix_fingerprint)
                           .has_value();
        }));
      }
      std::sort(replan.begin(), replan.end());
      std::sort(adapt.begin(), adapt.end());
      const double rb = replan.front(), rm = replan[replan.size() / 2], ab = adapt.front(), am = adapt[adapt.size() / 2];
      if (adapted != plan.ranks.size()) {
        std::printf("| %s | %lld | %s | %u | %.4f s / %.4f s | not adaptable (%zu of %zu ranks) | |\n", c.name.c_str(),
                    static_cast<long long>(c.m.nnz()), strategy, plan.manifest.phases, rb, rm, adapted, plan.ranks.size());
        continue;
      }
      std::printf("| %s | %lld | %s | %u | %.4f s / %.4f s | %.5f s / %.5f s | %.0f |\n", c.name.c_str(), static_cast<long long>(c.m.nnz()),
                  strategy, plan.manifest.phases, rb, rm, ab, am, rm / am);
    }
  }
  return 0;
}

// Fixture of the C API test and the Fortran example: writes OUT/formula.plan and OUT/formula.cfp,
// the plan of the pattern bytes(i, j) = ((3i + 5j) mod 7) * 100 on P ranks (0 = no message).
// Usage: exec_write_plan OUT P
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "planner/pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

int main(int argc, char** argv) {
  using namespace commfit;
  if (argc != 3) {
    std::fprintf(stderr, "usage: exec_write_plan OUT P\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  const Rank p = std::atoi(argv[2]);
  std::vector<Message> msgs;
  for (Rank i = 0; i < p; ++i)
    for (Rank j = 0; j < p; ++j) msgs.push_back({i, j, Bytes((3 * i + 5 * j) % 7) * 100});
  const Plan plan = make_plan(make_matrix(p, msgs), {});
  std::filesystem::create_directories(out);
  write_plan_dir(plan, out / "formula.plan");
  write_plan_binary(plan, out / "formula.cfp");
  std::printf("wrote %s/formula.plan and formula.cfp (%d ranks, %u phases)\n", out.c_str(), p, plan.manifest.phases);
  return 0;
}

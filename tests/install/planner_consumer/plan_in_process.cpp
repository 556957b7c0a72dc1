// plan_in_process MATRIX PLAN_DIR: reads a matrix, plans it with the default options and writes
// the plan directory, through the installed headers ("planner/pipeline.h") and libraries; also
// partitions a small grid with METIS (commfit::workloads) so that its link is exercised.
#include "backends/plan_dir.h"
#include "ir/matrix_io.h"
#include "planner/pipeline.h"
#include "workloads/halo.h"
#include "workloads/partition.h"

#include <cstdio>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: plan_in_process MATRIX PLAN_DIR\n");
    return 2;
  }
  const commfit::MatrixFile f = commfit::read_matrix(argv[1]);
  const commfit::Plan plan = commfit::make_plan(f.matrix, commfit::PlanOptions{});
  commfit::write_plan_dir(plan, argv[2]);

  // A 4 x 4 grid's 5-point pattern, in two parts.
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      if (x + 1 < 4) pairs.emplace_back(4 * y + x, 4 * y + x + 1);
      if (y + 1 < 4) pairs.emplace_back(4 * y + x, 4 * y + x + 4);
    }
  const auto graph = commfit::symmetric_graph(commfit::pattern_from_pairs(16, std::move(pairs)));
  const auto part = commfit::partition_metis(graph, 2, 1);
  std::printf("plan_in_process: %d ranks, %u phases; METIS parts of vertex 0 and 15: %d %d\n",
              plan.manifest.ranks, plan.manifest.phases, part[0], part[15]);
  return part.size() == 16 ? 0 : 1;
}

// A hostile user's edit of a plan, for the interposer's test (tests/mpi/pmpi_edited_plan.cmake):
// reads a plan (directory or binary file, its hash not checked), changes one figure it declares,
// and writes it to OUT in the form OUT's name asks for (.cfp: binary) with the manifest as it was,
// recorded plan hash included, so that only the edit differs.
// Usage: plan_edit IN OUT FIELD RANK VALUE
//   FIELD staging_bytes | max_outstanding: that rank's figure (and the manifest's staging maximum);
//   FIELD phases: the phase count of the manifest and of every rank (RANK is ignored).
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"

#include <algorithm>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  using namespace commfit;
  if (argc != 6) {
    std::fprintf(stderr, "usage: plan_edit IN OUT staging_bytes|max_outstanding|phases RANK VALUE\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2], field = argv[3];
  const Rank rank = std::stoi(argv[4]);
  const std::uint64_t value = std::stoull(argv[5]);
  try {
    Plan plan = is_plan_binary(in) ? read_plan_binary(in, false) : read_plan_dir(in, false);
    if (field == "phases") {
      plan.manifest.phases = static_cast<Phase>(value);
      for (RankSchedule& rs : plan.ranks) rs.phases = static_cast<Phase>(value);
    } else if (rank < 0 || rank >= plan.manifest.ranks) {
      throw std::runtime_error("rank " + std::to_string(rank) + " out of range");
    } else if (field == "staging_bytes") {
      plan.ranks[rank].staging_bytes = value;
      plan.manifest.staging_bytes_max = std::max(plan.manifest.staging_bytes_max, value);
    } else if (field == "max_outstanding") {
      plan.ranks[rank].max_outstanding = static_cast<std::uint32_t>(value);
    } else {
      throw std::runtime_error("unknown field " + field);
    }
    if (out.size() > 4 && out.compare(out.size() - 4, 4, ".cfp") == 0) write_plan_binary(plan, out);
    else write_plan_dir(plan, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_edit: %s\n", e.what());
    return 1;
  }
  return 0;
}

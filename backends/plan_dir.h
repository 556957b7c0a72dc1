// The plan directory of docs/FORMAT.md §3: manifest.json and one rank-NNNNN.json per rank.
// Writing is atomic: everything goes to a temporary sibling directory that is swapped with the
// target only when complete. Reading validates every field and throws InputError naming the
// file, the JSON pointer and the problem.
#pragma once

#include "ir/plan.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace commfit {

// "rank-00003.json": five digits, more when ranks > 99999.
std::string rank_file_name(Rank rank, Rank ranks);

std::string manifest_json(const Manifest& m);
std::string rank_schedule_json(const RankSchedule& r);

Manifest parse_manifest(std::string_view text, const std::string& file);
RankSchedule parse_rank_schedule(std::string_view text, const std::string& file);

// A rank schedule read from a plan's files (the directory's rank file, the binary form's slice)
// against its manifest: rank r, and the manifest's rank count, phase count and fingerprint.
// InputError(file, place) naming the field otherwise.
void check_rank_of_manifest(const Manifest& m, const RankSchedule& rs, Rank r, const std::string& file);

// The manifest's plan_hash (when it has one) against the rank schedules: InputError(file, place)
// naming both hashes when they differ.
void check_plan_hash(const Plan& plan, const std::string& file, const std::string& place);

Manifest read_manifest(const std::filesystem::path& dir);
RankSchedule read_rank_schedule(const std::filesystem::path& file);
// check_hash: compare the manifest's plan_hash with the rank schedules (check_plan_hash); `commfit
// verify` reads without it and reports a mismatch beside the verifier's findings.
Plan read_plan_dir(const std::filesystem::path& dir, bool check_hash = true);

// Throws UsageError unless `dir` is missing or a commfit plan directory: a real directory (not a
// symbolic link) holding a manifest.json of the plan format and nothing but manifest.json and
// rank-N.json regular files. Only such a directory is ever replaced.
void refuse_unless_plan_dir(const std::filesystem::path& dir);

// The checks write_plan_dir makes before it writes: a name (not "." or ".."), an existing parent
// directory, refuse_unless_plan_dir. Returns the directory (a trailing '/' dropped).
std::filesystem::path check_plan_dir_output(const std::filesystem::path& dir);

// Writes a plan directory one rank schedule at a time, as the planner makes them
// (planner/pipeline.h), so that the plan is never held whole: everything goes to a temporary
// sibling that finish() swaps in (backends/atomic_output.h), so a reader of `dir` sees the old
// plan or the new one; without finish() (an exception, an internal error) the temporary goes and
// `dir` is untouched. Refuses to replace anything refuse_unless_plan_dir refuses. With threads > 1
// (and more than 64 ranks a thread) the rank files are formatted and written by that many
// threads, the schedules handed over through a bounded queue; the files are the same whatever
// the count.
class PlanDirWriter {
 public:
  // A plan of `ranks` ranks.
  PlanDirWriter(const std::filesystem::path& dir, Rank ranks, unsigned threads = 1);
  ~PlanDirWriter();
  PlanDirWriter(const PlanDirWriter&) = delete;
  PlanDirWriter& operator=(const PlanDirWriter&) = delete;

  // rank-N.json for rs.rank.
  void add(RankSchedule&& rs);
  // manifest.json, then the directory swapped in. The first error a writing thread met is thrown here.
  void finish(const Manifest& m);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A whole plan through a PlanDirWriter.
void write_plan_dir(const Plan& plan, const std::filesystem::path& dir, unsigned threads = 1);

}  // namespace commfit

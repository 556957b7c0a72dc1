// Limits checked up front: the memory a plan would need, estimated from the matrix and
// the strategy before any expensive pass runs, so that `commfit plan` refuses with the estimate
// (exit 2) instead of dying while it allocates. The estimate is an upper bound calibrated on
// measured peak resident sets (docs/HARDENING.md "Memory estimate"), not a prediction.
#pragma once

#include "planner/pipeline.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace commfit {

struct MemoryEstimate {
  std::uint64_t bytes = 0;    // peak bytes the process would need, saturating
  std::uint64_t pieces = 0;   // transfers the strategy's schedule holds (each becomes two steps)
};

// Bytes per piece (the schedule's transfer, the passes' work on it, the lowering's index and the
// verifier's kept half; the plan itself streams to its file, planner/pipeline.h), per network
// message of the matrix, per rank, and the process's base. Calibrated on measured peaks
// (docs/HARDENING.md "Memory estimate"): about twice them.
inline constexpr std::uint64_t kEstimateBytesPerPiece = 160;
inline constexpr std::uint64_t kEstimateBytesPerMessage = 64;
inline constexpr std::uint64_t kEstimateBytesPerRank = 1024;
inline constexpr std::uint64_t kEstimateBaseBytes = std::uint64_t{16} << 20;

// Out of proportion: the estimate's per-rank part above the floor and above this many bytes per
// message (a plan of mostly idle ranks: more than 16 ranks per message).
inline constexpr std::uint64_t kProportionFloorBytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kProportionBytesPerMessage = std::uint64_t{16} << 10;

MemoryEstimate plan_memory_estimate(const CommMatrix& m, const PlanOptions& o);

// Throws InputError(file, "whole matrix", ...) with the estimate when it exceeds `limit`
// (--max-memory; physical memory when not given), or, when no limit is given, when the estimate
// is out of proportion to the messages (above). The check `plan` and `compare` run first.
void check_plan_memory(const CommMatrix& m, const PlanOptions& o, const std::string& file, std::optional<std::uint64_t> limit);

// The default of --max-memory: the least of the machine's physical memory (sysconf), the memory
// limit of the process's cgroup and its ancestors (v2 memory.max, v1 memory.limit_in_bytes) and
// Slurm's allocation (SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE, in MiB);
// 2^63 when none is known. `source` names where the limit came from, for messages.
struct MemoryLimit {
  std::uint64_t bytes = std::uint64_t{1} << 63;
  std::string source = "unknown";
};
MemoryLimit default_memory_limit();

// The same from given sources, for tests: the text of /proc/self/cgroup, the directory cgroup
// file systems are mounted under (/sys/fs/cgroup), the environment and the physical memory.
MemoryLimit memory_limit_from(const std::string& proc_cgroup, const std::filesystem::path& cgroup_root,
                              const std::function<const char*(const char*)>& getenv, std::uint64_t physical);

// The default of --threads (plan --strategy auto, compare): the CPUs this process may use, not the
// machine's: its affinity mask (sched_getaffinity; taskset, Slurm's and mpirun's binding) and the
// CPU quota of its cgroup v2 and every ancestor (cpu.max, as docker --cpus and systemd's
// CPUQuota write it), whichever is less; at least 1.
unsigned usable_cpus();

// --threads as given (at least 1, else a UsageError), or usable_cpus() when not given.
unsigned threads_or_default(std::optional<int> given);

// The same from given sources, for tests: the CPUs in the affinity mask, the text of
// /proc/self/cgroup and the directory cgroup file systems are mounted under (/sys/fs/cgroup).
unsigned usable_cpus_from(unsigned affinity, const std::string& proc_cgroup, const std::filesystem::path& cgroup_root);

// The CPUs one cpu.max line allows: "QUOTA PERIOD" (microseconds) is QUOTA / PERIOD rounded up,
// at least 1; nullopt for "max PERIOD" (no quota) and for nonsense.
std::optional<std::uint64_t> cpu_max_cpus(const std::string& line);

}  // namespace commfit

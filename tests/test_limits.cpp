// planner/limits.h: what the planner may use of the machine by default (memory, CPUs).
#include "planner/limits.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

using namespace commfit;

namespace {

// A cgroup file system of our own making under the temporary directory, removed at the end.
struct ScratchCgroups {
  const std::filesystem::path root = std::filesystem::temp_directory_path() / ("commfit-cgroup-" + std::to_string(::getpid()));
  ScratchCgroups() { std::filesystem::remove_all(root); }
  ~ScratchCgroups() { std::filesystem::remove_all(root); }
  void put(const std::string& file, const std::string& text) const {
    std::filesystem::create_directories((root / file).parent_path());
    std::ofstream(root / file) << text << "\n";
  }
};

}  // namespace

// planner/limits.h: the default --max-memory is the least of physical memory, the cgroup's limit
// (v1 or v2, the tightest ancestor) and Slurm's allocation.
TEST_CASE("memory_limit_reads_cgroups_and_slurm") {
  const ScratchCgroups cgroups;
  const std::filesystem::path& root = cgroups.root;
  auto put = [&](const std::filesystem::path& file, const std::string& text) { cgroups.put(file.lexically_relative(root).string(), text); };
  const auto no_env = [](const char*) -> const char* { return nullptr; };
  const std::uint64_t phys = std::uint64_t{64} << 30;
  // Nothing mounted: physical memory.
  MemoryLimit l = memory_limit_from("0::/job\n", root, no_env, phys);
  CHECK(l.bytes == phys);
  CHECK(l.source == "physical memory");
  // v2: the job's memory.max, and a tighter parent's.
  put(root / "job/memory.max", "8589934592");
  put(root / "memory.max", "max");
  l = memory_limit_from("0::/job\n", root, no_env, phys);
  CHECK(l.bytes == std::uint64_t{8} << 30);
  CHECK(l.source == "cgroup " + (root / "job/memory.max").string());
  put(root / "slurm/memory.max", "4294967296");
  put(root / "slurm/step/memory.max", "max");
  CHECK(memory_limit_from("0::/slurm/step\n", root, no_env, phys).bytes == std::uint64_t{4} << 30);
  // v1: the memory controller's limit_in_bytes; "no limit" is 2^63 rounded to a page.
  put(root / "memory/docker/abc/memory.limit_in_bytes", "2147483648");
  put(root / "memory/memory.limit_in_bytes", "9223372036854771712");
  l = memory_limit_from("12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n", root, no_env, phys);
  CHECK(l.bytes == std::uint64_t{2} << 30);
  // Slurm: MiB per node, or per CPU times the CPUs.
  auto env = [](const char* name) -> const char* {
    const std::string n = name;
    return n == "SLURM_MEM_PER_CPU" ? "1000" : n == "SLURM_CPUS_ON_NODE" ? "3" : nullptr;
  };
  l = memory_limit_from("", root, env, phys);
  CHECK(l.bytes == std::uint64_t{3000} << 20);
  CHECK(l.source == "SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE");
  // Garbage is ignored, never a limit of 0.
  put(root / "bad/memory.max", "lots");
  CHECK(memory_limit_from("0::/bad\n", root, no_env, phys).bytes == phys);
}

// planner/limits.h: the default --threads is the least of the affinity mask and the CPU quota of
// the cgroup (v2) and its ancestors, rounded up, at least 1.
TEST_CASE("usable_cpus_reads_affinity_and_cpu_max") {
  CHECK(cpu_max_cpus("200000 100000") == 2u);
  CHECK(cpu_max_cpus("150000 100000") == 2u);   // 1.5 CPUs: rounded up
  CHECK(cpu_max_cpus("1000 100000") == 1u);     // a hundredth of a CPU: still one thread
  CHECK(cpu_max_cpus("400000 50000") == 8u);
  for (const char* none : {"max 100000", "max", "", "100000", "100000 0", "-5 100000", "2e5 100000", "200000 100000 7", "lots"}) {
    CAPTURE(none);
    CHECK_FALSE(cpu_max_cpus(none));
  }
  const ScratchCgroups cgroups;
  CHECK(usable_cpus_from(8, "0::/job\n", cgroups.root) == 8);   // nothing mounted: the affinity mask
  CHECK(usable_cpus_from(0, "", cgroups.root) == 1);
  cgroups.put("job/cpu.max", "max 100000");
  cgroups.put("cpu.max", "max 100000");
  CHECK(usable_cpus_from(8, "0::/job\n", cgroups.root) == 8);
  cgroups.put("job/cpu.max", "250000 100000");   // docker --cpus 2.5
  CHECK(usable_cpus_from(8, "0::/job\n", cgroups.root) == 3);
  CHECK(usable_cpus_from(2, "0::/job\n", cgroups.root) == 2);   // the mask is tighter
  cgroups.put("slurm/cpu.max", "100000 100000");               // a tighter ancestor
  cgroups.put("slurm/step/cpu.max", "max 100000");
  CHECK(usable_cpus_from(8, "0::/slurm/step/\n", cgroups.root) == 1);
  cgroups.put("unified/hybrid/cpu.max", "400000 100000");      // hybrid systems mount v2 at unified/
  CHECK(usable_cpus_from(8, "4:cpu,cpuacct:/hybrid\n0::/hybrid\n", cgroups.root) == 4);
  CHECK(usable_cpus() >= 1);
}

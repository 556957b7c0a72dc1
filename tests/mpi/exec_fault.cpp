// A misused or damaged plan, one fault per mode: the executor must raise a clear error on every
// rank (never hang). Like an application would, this program prints the error and exits with
// status 2; tests/mpi/expect_error.cmake checks the status and that every rank printed it.
// Usage: mpirun -np N exec_fault MODE   (modes: see `faults` below)
#include "backends/exec/migrate.hpp"
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "handmade_plans.h"
#include "planner/pipeline.h"
#include "support.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <thread>

#include <sys/stat.h>

using namespace commfit;
using namespace commfit::mpitest;
namespace fs = std::filesystem;

namespace {

int rank = 0, size = 0;
fs::path scratch;

CommMatrix matrix_a(Rank p) { return random_matrix(p, 0.6, 5000, 101, true); }
CommMatrix matrix_b(Rank p) { return random_matrix(p, 0.6, 5000, 202, true); }

// Rank 0 writes, everyone waits.
fs::path write_dir(const Plan& plan, const std::string& name) {
  const fs::path dir = scratch / name;
  if (rank == 0) write_plan_dir(plan, dir);
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}
fs::path write_bin(const Plan& plan, const std::string& name) {
  const fs::path file = scratch / name;
  if (rank == 0) write_plan_binary(plan, file);
  MPI_Barrier(MPI_COMM_WORLD);
  return file;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
// Rank 0 rewrites a file, everyone waits.
void rewrite(const fs::path& p, const std::function<std::string(std::string)>& edit) {
  if (rank == 0) {
    const std::string text = edit(slurp(p));
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(text.data(), std::streamsize(text.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A throttled plan (window 4) whose rank 1 file says window 8: every other check passes it.
fs::path edited_window_plan(const std::string& name) {
  PlanOptions o;
  o.strategy = "throttled";
  o.max_outstanding = 4;
  const fs::path dir = write_dir(make_plan(matrix_a(size), o), name);
  rewrite(dir / rank_file_name(1, size), [](std::string s) {
    const std::size_t at = s.find("\"max_outstanding\": 4,");
    if (at == std::string::npos) std::abort();
    return s.replace(at, 21, "\"max_outstanding\": 8,");
  });
  return dir;
}

// How far this process's memory rose while a refused load ran, in KiB. The plain build reads the
// peak resident set (VmHWM) before and after. Under AddressSanitizer the resident set is no
// measure (its allocator's quarantine and shadow pages grow it by a few MiB, more or less on each
// run, whatever the plan declares), so the peak of the live heap is counted instead, exactly, by
// the sanitizer's malloc and free hooks.
#if defined(COMMFIT_TEST_ASAN)
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void*, std::size_t),
                                                         void (*)(const volatile void*));
extern "C" std::size_t __sanitizer_get_allocated_size(const volatile void*);
std::atomic<long long> heap_live{0}, heap_peak{0};
void on_malloc(const volatile void*, std::size_t size) {
  const long long now = heap_live += static_cast<long long>(size);
  long long peak = heap_peak.load();
  while (now > peak && !heap_peak.compare_exchange_weak(peak, now)) {}
}
void on_free(const volatile void* p) { heap_live -= static_cast<long long>(__sanitizer_get_allocated_size(p)); }
constexpr const char* kMeasure = "peak heap";
long memory_mark() {   // starts counting (the hooks see every allocation from here on)
  static const bool installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
  (void)installed;
  heap_peak = heap_live.load();
  return static_cast<long>(heap_peak.load() / 1024);
}
long memory_now() { return static_cast<long>(heap_peak.load() / 1024); }
#else
long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
constexpr const char* kMeasure = "peak RSS";
long memory_mark() { return peak_rss_kib(); }
long memory_now() { return peak_rss_kib(); }
#endif

// A plan that declares more than its steps use: an honest plan of matrix_a, and the same with
// `edit` applied, in the form `binary` asks for. Loads the honest one, then the edited one, which
// must be refused: the refusal is raised again with how far this rank's memory rose above the
// honest load's, so that the test sees both (nothing above 1 MiB more may be allocated).
constexpr long kSlackKiB = 1024;
void refused_within_1mib(const std::string& strategy, const std::function<void(Plan&)>& edit, bool binary) {
  PlanOptions o;
  o.strategy = strategy;
  Plan plan = make_plan(matrix_a(size), o);
  const fs::path honest = binary ? write_bin(plan, "honest.cfp") : write_dir(plan, "honest.plan");
  edit(plan);
  const fs::path edited = binary ? write_bin(plan, "edited.cfp") : write_dir(plan, "edited.plan");
  { exec::Executor::load(honest.string(), MPI_COMM_WORLD); }
  const long before = memory_mark();
  try {
    exec::Executor::load(edited.string(), MPI_COMM_WORLD);
  } catch (const exec::Error& e) {
    const long grew = memory_now() - before;
    throw exec::Error(e.kind(), e.first_rank(), std::string(e.what()) + " (" + kMeasure + " +" + std::to_string(grew) +
                                                    " KiB over the honest plan's load: " +
                                                    (grew <= kSlackKiB ? "within 1 MiB)" : "MORE than the bound)"));
  }
}
void staging_3gib(Plan& plan) {   // rank 1's staging area, and the manifest's maximum with it
  plan.ranks[1].staging_bytes = Bytes{3} << 30;
  plan.manifest.staging_bytes_max = Bytes{3} << 30;
}
void phases_2e24(Plan& plan) {   // the phase count of the plan and of every rank
  plan.manifest.phases = kMaxPhases;
  for (RankSchedule& rs : plan.ranks) rs.phases = kMaxPhases;
}
void window_2e20(Plan& plan) { plan.ranks[1].max_outstanding = kMaxWindow; }   // rank 1's request window

void execute_with(exec::Executor& ex, const CommMatrix& m, std::uint64_t iter = 0) {
  Buffers b = make_buffers(m, rank);
  fill_send(b, rank, iter);
  ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
}

const std::map<std::string, std::function<void()>> faults = {
    {"other_counts", [] {   // a plan for other counts
       auto ex = exec::Executor::load(write_dir(round_robin_plan(matrix_a(size)), "a.plan").string(), MPI_COMM_WORLD);
       execute_with(ex, matrix_b(size));
     }},
    {"other_p_more", [] {   // a plan for p + 1 ranks
       exec::Executor::load(write_dir(round_robin_plan(matrix_a(size + 1)), "big.plan").string(), MPI_COMM_WORLD);
     }},
    {"other_p_fewer", [] {   // a plan for p - 1 ranks: the last rank has no file
       exec::Executor::load(write_dir(round_robin_plan(matrix_a(size - 1)), "small.plan").string(), MPI_COMM_WORLD);
     }},
    {"other_p_binary", [] {
       exec::Executor::load(write_bin(round_robin_plan(matrix_a(size + 1)), "big.cfp").string(), MPI_COMM_WORLD);
     }},
    {"truncated_json", [] {   // rank 1's file cut in half
       const fs::path dir = write_dir(two_hop_plan(matrix_a(size)), "t.plan");
       rewrite(dir / rank_file_name(1, size), [](std::string s) { return s.substr(0, s.size() / 2); });
       exec::Executor::load(dir.string(), MPI_COMM_WORLD);
     }},
    {"corrupted_json", [] {   // a byte of rank 2's file overwritten
       const fs::path dir = write_dir(two_hop_plan(matrix_a(size)), "c.plan");
       rewrite(dir / rank_file_name(2, size), [](std::string s) { s[s.size() / 3] = '#'; return s; });
       exec::Executor::load(dir.string(), MPI_COMM_WORLD);
     }},
    {"edited_json_bytes", [] {   // rank 1 receives one byte less of a message: locally detectable
       const fs::path dir = write_dir(round_robin_plan(matrix_a(size)), "e.plan");
       rewrite(dir / rank_file_name(1, size), [](std::string s) {
         std::smatch m;
         const std::string text = s;
         std::regex_search(text, m, std::regex("\"op\": \"recv\"[^}]*\"bytes\": (\\d+)"));
         return s.replace(std::size_t(m.position(1)), std::size_t(m.length(1)), std::to_string(std::stoull(m.str(1)) - 1));
       });
       exec::Executor::load(dir.string(), MPI_COMM_WORLD);
     }},
    {"edited_json_phase", [] {   // rank 1 sends a message in another phase: only the peer can tell
       // The step moves to the last phase and the steps stay in order, so rank 1's file alone is
       // well formed (a step out of order is caught by the rank's own check, ir/plan.h).
       Plan plan = two_hop_plan(matrix_a(size));
       std::vector<Step>& steps = plan.ranks[1].steps;
       const auto send = std::find_if(steps.begin(), steps.end(), [](const Step& s) { return s.phase == 0 && s.op == Op::send && s.buffer == Buffer::send; });
       if (send == steps.end() || plan.manifest.phases < 2) std::abort();
       send->phase = plan.manifest.phases - 1;
       std::stable_sort(steps.begin(), steps.end(), step_less);
       exec::Executor::load(write_dir(plan, "f.plan").string(), MPI_COMM_WORLD);
     }},
    {"staging_digit", [] {   // one digit of a forwarding step's stage_offset (1156 -> 1157)
       Plan plan = two_hop_plan(matrix_a(size));
       for (RankSchedule& rs : plan.ranks)
         for (Step& s : rs.steps)
           if (s.op == Op::send && s.buffer == Buffer::stage) {
             s.stage_offset += 1;
             exec::Executor::load(write_dir(plan, "d.plan").string(), MPI_COMM_WORLD);
             return;
           }
       std::abort();
     }},
    {"forward_before_arrival", [] {   // a staged forward and its receive moved to phase 0
       Plan plan = two_hop_plan(matrix_a(size));
       for (RankSchedule& rs : plan.ranks) {
         auto fwd = std::find_if(rs.steps.begin(), rs.steps.end(), [](const Step& s) { return s.op == Op::send && s.buffer == Buffer::stage; });
         if (fwd == rs.steps.end()) continue;
         std::vector<Step>& peer = plan.ranks[std::size_t(fwd->peer)].steps;
         const auto recv = std::find_if(peer.begin(), peer.end(), [&](const Step& s) {
           return s.op == Op::recv && s.peer == rs.rank && s.phase == fwd->phase && s.src == fwd->src && s.dst == fwd->dst && s.offset == fwd->offset;
         });
         if (recv == peer.end()) std::abort();
         fwd->phase = recv->phase = 0;
         std::stable_sort(rs.steps.begin(), rs.steps.end(), step_less);
         std::stable_sort(peer.begin(), peer.end(), step_less);
         exec::Executor::load(write_dir(plan, "b.plan").string(), MPI_COMM_WORLD);
         return;
       }
       std::abort();
     }},
    {"truncated_binary", [] {
       const fs::path file = write_bin(two_hop_plan(matrix_a(size)), "t.cfp");
       rewrite(file, [](std::string s) { return s.substr(0, s.size() - 10); });
       exec::Executor::load(file.string(), MPI_COMM_WORLD);
     }},
    {"corrupted_binary", [] {   // a byte of rank 2's slice flipped
       const fs::path file = write_bin(two_hop_plan(matrix_a(size)), "c.cfp");
       rewrite(file, [](std::string s) {
         auto u64 = [&](std::size_t at) {
           std::uint64_t v = 0;
           for (int k = 7; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(s[at + k]);
           return v;
         };
         const std::size_t entry2 = u64(40) + 2 * kPlanBinaryIndexEntryBytes;   // the index starts at header byte 40's offset
         const std::uint64_t middle = u64(entry2) + u64(entry2 + 8) / 2;          // the middle of the slice
         s[middle] = static_cast<char>(s[middle] ^ 0x40);
         return s;
       });
       exec::Executor::load(file.string(), MPI_COMM_WORLD);
     }},
    {"fifo_rank_file", [] {   // rank 1's file is a FIFO nobody writes: refused, not waited on
       const fs::path dir = write_dir(round_robin_plan(matrix_a(size)), "fifo.plan");
       const fs::path file = dir / rank_file_name(1, size);
       if (rank == 0 && (!fs::remove(file) || mkfifo(file.c_str(), 0644) != 0)) MPI_Abort(MPI_COMM_WORLD, 1);
       MPI_Barrier(MPI_COMM_WORLD);
       exec::Executor::load(dir.string(), MPI_COMM_WORLD);
     }},
    {"two_threads", [] {   // rank 0 calls execute from a second thread while the first is inside it
       // Rank 1 enters 2 s late, so rank 0's first call (it receives from every rank) is still
       // waiting when the second thread calls, 0.3 s in. Only the second call fails.
       const CommMatrix m = random_matrix(size, 1.0, 5000, 303, true);
       auto ex = exec::Executor::load(write_dir(round_robin_plan(m), "th.plan").string(), MPI_COMM_WORLD);
       if (rank == 1) std::this_thread::sleep_for(std::chrono::seconds(2));
       if (rank != 0) return execute_with(ex, m);
       std::thread first([&] { execute_with(ex, m); });
       std::this_thread::sleep_for(std::chrono::milliseconds(300));
       std::optional<exec::Error> second;
       try {
         execute_with(ex, m);
       } catch (const exec::Error& e) {
         second = e;
       }
       first.join();
       if (second) throw *second;
     }},
    {"mixed_plans", [] {   // odd ranks load a plan of another matrix
       const fs::path a = write_dir(round_robin_plan(matrix_a(size)), "a.plan");
       const fs::path b = write_dir(round_robin_plan(matrix_b(size)), "b.plan");
       exec::Executor::load((rank % 2 ? b : a).string(), MPI_COMM_WORLD);
     }},
    {"mixed_same_matrix", [] {   // odd ranks load another plan of the same matrix
       const fs::path a = write_dir(round_robin_plan(matrix_a(size)), "a.plan");
       const fs::path b = write_dir(two_hop_plan(matrix_a(size)), "h.plan");
       exec::Executor::load((rank % 2 ? b : a).string(), MPI_COMM_WORLD);
     }},
    {"edited_window", [] {   // one rank file's request window changed: only the plan hash can tell
       exec::Executor::load(edited_window_plan("w.plan").string(), MPI_COMM_WORLD);
     }},
    {"edited_window_binary", [] {   // the same in a .cfp, its checksums recomputed
       PlanOptions o;
       o.strategy = "throttled";
       o.max_outstanding = 4;
       Plan plan = make_plan(matrix_a(size), o);
       plan.ranks[1].max_outstanding = 8;
       exec::Executor::load(write_bin(plan, "w.cfp").string(), MPI_COMM_WORLD);
     }},
    {"edited_window_migration", [] {   // the same plan loaded by the migration interface
       exec::Migration::load(edited_window_plan("m.plan").string(), MPI_COMM_WORLD);
     }},
    {"staging_3gib", [] { refused_within_1mib("two-stage", staging_3gib, false); }},
    {"staging_3gib_binary", [] { refused_within_1mib("two-stage", staging_3gib, true); }},
    {"phases_2e24", [] { refused_within_1mib("two-stage", phases_2e24, false); }},
    {"phases_2e24_binary", [] { refused_within_1mib("two-stage", phases_2e24, true); }},
    {"window_2e20", [] { refused_within_1mib("throttled", window_2e20, false); }},
    {"window_2e20_binary", [] { refused_within_1mib("throttled", window_2e20, true); }},
    {"missing_plan", [] { exec::Executor::load((scratch / "nothing.plan").string(), MPI_COMM_WORLD); }},
    {"bad_options", [] {
       exec::Options o;
       o.max_outstanding = rank == 1 ? 1 : 0;   // wrong on one rank only
       exec::Executor::load(write_dir(round_robin_plan(matrix_a(size)), "a.plan").string(), MPI_COMM_WORLD, o);
     }},
    {"mixed_options", [] {   // rank 1 uses another protocol
       exec::Options o;
       if (rank == 1) o.protocol = exec::Protocol::handshake;
       exec::Executor::load(write_dir(round_robin_plan(matrix_a(size)), "a.plan").string(), MPI_COMM_WORLD, o);
     }},
    {"mixed_coalesce", [] {   // rank 1 packs other messages than its peers would unpack
       exec::Options o;
       if (rank == 1) o.coalesce = 0;
       exec::Executor::load(write_dir(round_robin_plan(matrix_a(size)), "a.plan").string(), MPI_COMM_WORLD, o);
     }},
    {"bad_datatype", [] {   // rank 1 passes a strided type
       auto ex = exec::Executor::load(write_dir(round_robin_plan(matrix_a(size)), "a.plan").string(), MPI_COMM_WORLD);
       Buffers b = make_buffers(matrix_a(size), rank);
       MPI_Datatype strided;   // one byte every two: size 1, extent 2
       MPI_Type_create_resized(MPI_BYTE, 0, 2, &strided);
       MPI_Type_commit(&strided);
       MPI_Datatype t = rank == 1 ? strided : MPI_BYTE;
       ex.execute(b.send.data(), b.sc.data(), b.sd.data(), t, b.recv.data(), b.rc.data(), b.rd.data(), t);
     }},
    {"counts_changed", [] {   // the second call has other counts on rank 2 only
       auto ex = exec::Executor::load(write_dir(round_robin_plan(matrix_a(size)), "a.plan").string(), MPI_COMM_WORLD);
       execute_with(ex, matrix_a(size));
       Buffers b = make_buffers(matrix_a(size), rank);
       if (rank == 2) b.rc[0] += 1;
       ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
     }},
    {"counts_changed_first_call", [] {   // same, with count_check = first_call: the job aborts
       exec::Options o;
       o.count_check = exec::CountCheck::first_call;
       auto ex = exec::Executor::load(write_dir(round_robin_plan(matrix_a(size)), "a.plan").string(), MPI_COMM_WORLD, o);
       execute_with(ex, matrix_a(size));
       Buffers b = make_buffers(matrix_a(size), rank);
       if (rank == 2) b.sc[1] += 1;
       ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
     }},
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto it = argc == 2 ? faults.find(argv[1]) : faults.end();
  if (it == faults.end() || size < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -np N (N >= 3) exec_fault MODE\n");
    MPI_Finalize();
    return 64;
  }
  char path[256] = {};
  if (rank == 0) {
    std::snprintf(path, sizeof path, "%s/commfit-fault-XXXXXX", fs::temp_directory_path().c_str());
    if (!mkdtemp(path)) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  scratch = path;
  int status = 0;
  try {
    it->second();
    std::printf("rank %d: no error\n", rank);
  } catch (const exec::Error& e) {
    std::fprintf(stderr, "commfit exec: error: %s\n", e.what());
    status = 2;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(scratch);
  MPI_Finalize();
  return status;
}

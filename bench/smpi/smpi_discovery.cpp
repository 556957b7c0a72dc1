// smpi_discovery: finding owners from global ids at scale, under SMPI (docs/PERFORMANCE.md "Finding
// owners from global ids"). Each rank owns one part of a METIS-partitioned mesh and needs its halo
// (bench_smpi_mesh_ids writes the ids). The program times, in simulated seconds:
//   discover  runtime/owner_lookup.hpp's find_owners with each lookup method (`auto` too, when
//             --lookups names it: a comment line says what it ran) and each reverse
//             method (the directories' registrations and queries use it too): every rank starts at a common instant after a barrier
//             (smpi_bench.h aligned_start); the time is the last rank's finish; the median of --reps
//             runs. check = the same owners, indices and served lists as the hashed directory's.
//   collectives  the same runs' time in find_owners' collectives (OwnerLookup::collective_seconds:
//             the agreements and the sparse exchanges' count reductions, waits for the last rank
//             included), the longest rank, the median of --reps.
//   reverse   the rings' reverse step alone (OwnerLookup::reverse_seconds, the longest rank), and,
//             when built with MPI Advance (build_discovery.sh MPIA_CHECKOUT), MPIL_Alltoallv_crs's
//             methods on the same messages, timed the same way: from the MPI_Allreduce before it to
//             each rank's return, the longest rank, the median of --reps.
//   gather    one gather of 8-byte values on the discovered exchange, per call (--calls calls from an
//             aligned start, the median of --reps): the pattern's (commfit::runtime::Pattern, planned
//             in the job with the --pattern-option words, replayed by the executor, whose default
//             count check is an MPI_Iallreduce per call), the same plan replayed with the check on
//             the first call only (commfit-first-call), and AC, a hand-written MPI_Irecv /
//             MPI_Isend / MPI_Waitall loop. check = every value received is its id's.
// Prints CSV lines `label,p,step,method,reverse,sim_s,check` on rank 0 (reverse "-" where none
// applies); exit status 1 when any check fails. bench/smpi/discovery.sh runs it with run.py's
// SMPI_CFG, a 0.5 us poll cost and Open MPI's collective algorithms. It calls find_owners, internal
// to commfit_runtime, directly: build_discovery.sh compiles the runtime's sources with it.
//
//   smpirun ... smpi_discovery --ids FILE [--label TEXT] [--reps N] [--calls N] [--lookups M,...]
//                              [--reverses R,...] [--pattern-option KEY=VALUE]... [--mpia M,...|none]
// --mpia (built with MPI Advance; default both): personalized (an MPI_Allreduce of counts, then the
// messages), nonblocking (NBX).
#include "bench/smpi/smpi_bench.h"
#include "runtime/commfit_pattern.hpp"
#include "runtime/in_job.hpp"
#include "runtime/owner_lookup.hpp"

#include <mpi.h>

#ifdef COMMFIT_WITH_MPI_ADVANCE
#include <locality_aware.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace commfit::smpi_bench;
using commfit::runtime::find_owners;
using commfit::runtime::LookupMethod;
using commfit::runtime::LookupOptions;
using commfit::runtime::OwnerLookup;
using I64 = std::int64_t;

// This rank's part of bench_smpi_mesh_ids's file (its format is described there).
void read_part(const std::string& path, int rank, int p, std::vector<I64>& owned, std::vector<I64>& needed) {
  std::ifstream in(path, std::ios::binary);
  char tag[8] = {};
  I64 head[2] = {0, 0};
  in.read(tag, 8);
  in.read(reinterpret_cast<char*>(head), sizeof head);
  if (!in || std::string(tag, 8) != "cfids001") throw std::runtime_error(path + ": not an ids file of bench_smpi_mesh_ids");
  if (head[0] != p) throw std::runtime_error(path + ": " + std::to_string(head[0]) + " parts, the job has " + std::to_string(p) + " ranks");
  const std::streamoff words_start = 8 + 8 * (2 + 2 * I64{p} + 1);
  I64 off[3];
  in.seekg(8 + 8 * (2 + 2 * I64{rank}));
  in.read(reinterpret_cast<char*>(off), sizeof off);
  owned.resize(static_cast<std::size_t>(off[1] - off[0]));
  needed.resize(static_cast<std::size_t>(off[2] - off[1]));
  in.seekg(words_start + 8 * off[0]);
  in.read(reinterpret_cast<char*>(owned.data()), static_cast<std::streamsize>(owned.size() * 8));
  in.read(reinterpret_cast<char*>(needed.data()), static_cast<std::streamsize>(needed.size() * 8));
  if (!in) throw std::runtime_error(path + ": truncated");
}

// The value of id v that every method moves (exact in a double).
double value_of(I64 v) { return static_cast<double>(v) * 2.0 + 0.5; }

bool any_rank(bool mine) {
  int m = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&m, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return all != 0;
}

// Runs `once` reps times from an aligned start and returns (on rank 0) the median of the last
// rank's finishes; `seconds(start)` gives this rank's time of one run (default: now - start).
// -1 when a rank reached an aligned start late.
double median_of_runs(int reps, const std::function<void()>& once, const std::function<double(double)>& seconds = nullptr) {
  std::vector<double> mine(static_cast<std::size_t>(reps)), last(mine.size());
  bool late_any = false;
  for (int k = 0; k < reps; ++k) {
    bool late = false;
    const double start = aligned_start(MPI_COMM_WORLD, late);
    once();
    mine[static_cast<std::size_t>(k)] = seconds ? seconds(start) : MPI_Wtime() - start;
    late_any |= late;
  }
  MPI_Reduce(mine.data(), last.data(), reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (any_rank(late_any)) return -1;
  std::sort(last.begin(), last.end());
  return last[last.size() / 2];
}

struct Row {
  std::string label;
  int p = 0;
  void print(const char* step, const std::string& method, const std::string& reverse, double s, bool wrong) const {
    std::printf("%s,%d,%s,%s,%s,%.9g,%s\n", label.c_str(), p, step, method.c_str(), reverse.c_str(), s, wrong ? "WRONG" : "ok");
    std::fflush(stdout);
  }
};

// AC on the discovered exchange: the owner sends each needer its values (served, by needer then
// position), the needer receives from each owner (needed[] by owner, then position).
struct HandGather {
  std::vector<int> to, to_count, from, from_count;
  std::vector<I64> send_index, recv_slot;
  std::vector<double> send, recv;
  std::vector<MPI_Request> requests;

  HandGather(const OwnerLookup& f, int me) {
    for (const auto& s : f.served) {
      if (s.needer == me) continue;   // a halo has no own ids; a self block would be a copy
      if (to.empty() || to.back() != s.needer) to.push_back(static_cast<int>(s.needer)), to_count.push_back(0);
      ++to_count.back(), send_index.push_back(s.index);
    }
    std::vector<std::pair<int, I64>> by_owner;
    for (std::size_t j = 0; j < f.owner.size(); ++j) by_owner.emplace_back(f.owner[j], static_cast<I64>(j));
    std::sort(by_owner.begin(), by_owner.end());
    for (const auto& [o, j] : by_owner) {
      if (from.empty() || from.back() != o) from.push_back(o), from_count.push_back(0);
      ++from_count.back(), recv_slot.push_back(j);
    }
    send.resize(send_index.size()), recv.resize(recv_slot.size());
    requests.resize(to.size() + from.size());
  }

  // The same exchange as MPI_Alltoallv's counts and displacements (elements), p entries each.
  void alltoallv_counts(int p, std::vector<int>& sc, std::vector<int>& sd, std::vector<int>& rc, std::vector<int>& rd) const {
    sc.assign(static_cast<std::size_t>(p), 0), sd = sc, rc = sc, rd = sc;
    for (std::size_t k = 0; k < to.size(); ++k) sc[static_cast<std::size_t>(to[k])] = to_count[k];
    for (std::size_t k = 0; k < from.size(); ++k) rc[static_cast<std::size_t>(from[k])] = from_count[k];
    for (int q = 1; q < p; ++q) sd[q] = sd[q - 1] + sc[q - 1], rd[q] = rd[q - 1] + rc[q - 1];
  }

  void run(const double* owned_values, double* needed_values) {
    std::size_t r = 0, at = 0;
    for (std::size_t k = 0; k < from.size(); at += static_cast<std::size_t>(from_count[k]), ++k)
      MPI_Irecv(recv.data() + at, from_count[k], MPI_DOUBLE, from[k], 7, MPI_COMM_WORLD, &requests[r++]);
    for (std::size_t k = 0; k < send_index.size(); ++k) send[k] = owned_values[send_index[k]];
    at = 0;
    for (std::size_t k = 0; k < to.size(); at += static_cast<std::size_t>(to_count[k]), ++k)
      MPI_Isend(send.data() + at, to_count[k], MPI_DOUBLE, to[k], 7, MPI_COMM_WORLD, &requests[r++]);
    MPI_Waitall(static_cast<int>(r), requests.data(), MPI_STATUSES_IGNORE);
    for (std::size_t k = 0; k < recv_slot.size(); ++k) needed_values[recv_slot[k]] = recv[k];
  }
};

struct Args {
  std::string ids, label = "mesh", pattern_options;
  int reps = 3, calls = 20;
  std::vector<std::string> lookups, reverses{"nbx", "allreduce", "reduce-scatter"}, mpia;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) throw std::runtime_error("option " + k + " needs a value");
    const std::string v = argv[++i];
    if (k == "--ids") a.ids = v;
    else if (k == "--label") a.label = v;
    else if (k == "--reps") a.reps = std::max(1, std::stoi(v));
    else if (k == "--calls") a.calls = std::max(1, std::stoi(v));
    else if (k == "--lookups") a.lookups = split(v, ',');
    else if (k == "--reverses") a.reverses = split(v, ',');
    else if (k == "--pattern-option") a.pattern_options += " " + v;
    else if (k == "--mpia") a.mpia = split(v, ',');
    else throw std::runtime_error("unknown option " + k);
  }
  if (a.ids.empty()) throw std::runtime_error("--ids FILE is required");
#ifdef COMMFIT_WITH_MPI_ADVANCE
  if (a.mpia.empty()) a.mpia = {"personalized", "nonblocking"};   // the default with MPI Advance: both
#endif
  if (a.mpia == std::vector<std::string>{"none"}) a.mpia.clear();
  return a;
}

// The ring variants a grid of p allows: ring3d and ring4d only when every dimension of
// MPI_Dims_create's grid is above 1 (otherwise they are a ring2d or ring3d already run).
std::vector<std::string> default_lookups(int p) {
  std::vector<std::string> l{"directory", "directory-block", "ring", "ring2d"};
  for (int d = 3; d <= 4; ++d) {
    std::vector<int> dims(static_cast<std::size_t>(d), 0);
    MPI_Dims_create(p, d, dims.data());
    if (*std::min_element(dims.begin(), dims.end()) > 1) l.push_back("ring" + std::to_string(d) + "d");
  }
  return l;
}

LookupOptions options_of(const std::string& lookup, const std::string& reverse) {
  std::string words = "lookup=" + lookup + " reverse=" + (reverse == "-" ? "auto" : reverse);
  return commfit::runtime::take_lookup_options(words);
}

int run(int argc, char** argv) {
  int me = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const Args a = parse(argc, argv);
  std::vector<I64> owned, needed;
  read_part(a.ids, me, p, owned, needed);
  const Row row{a.label, p};
  bool failed = false;
  MPI_Comm comm;   // the lookups' own communicator (owner_lookup.hpp: tags below 100)
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  // The reference: the hashed directory, untimed.
  const OwnerLookup ref = find_owners(comm, owned, needed, options_of("directory", "-"), "");

  // 1. Owner discovery, every method.
  for (const std::string& lookup : a.lookups.empty() ? default_lookups(p) : a.lookups) {
    for (const std::string& reverse : a.reverses) {
      const LookupOptions o = options_of(lookup, reverse);
      OwnerLookup got;
      std::vector<double> reverse_mine, collective_mine;
      const double s = median_of_runs(a.reps, [&] {
        got = find_owners(comm, owned, needed, o, "");
        reverse_mine.push_back(got.reverse_seconds);
        collective_mine.push_back(got.collective_seconds);
      });
      const bool wrong = any_rank(!same_owners(got, ref));
      failed |= wrong;
      // The longest rank's seconds of one run, the median over the runs.
      const auto longest = [&](const std::vector<double>& mine) {
        std::vector<double> last(mine.size());
        MPI_Reduce(mine.data(), last.data(), static_cast<int>(last.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        std::sort(last.begin(), last.end());
        return last.empty() ? 0.0 : last[last.size() / 2];
      };
      const double collective_max = longest(collective_mine);
      if (me == 0) row.print("discover", lookup, reverse, s, wrong);
      if (me == 0) row.print("collectives", lookup, reverse, collective_max, wrong);
      if (me == 0 && o.method == LookupMethod::automatic)
        std::printf("# %s p=%d: lookup=auto ran %s\n", a.label.c_str(), p, commfit::runtime::lookup_name(got.method));
      if (got.method != LookupMethod::directory && got.method != LookupMethod::directory_block) {   // a ring: its reverse step
        const double reverse_max = longest(reverse_mine);
        if (me == 0) row.print("reverse", lookup, reverse, reverse_max, wrong);
      }
    }
  }

#ifdef COMMFIT_WITH_MPI_ADVANCE
  // 2. MPI Advance's MPIL_Alltoallv_crs on the reverse step's messages: (position, index) pairs
  //    from each owner to each needer, timed as the rings' reverse step (from an MPI_Allreduce).
  if (!a.mpia.empty()) {
    std::vector<int> dest, counts, displs;
    std::vector<I64> words;
    for (const auto& s : ref.served) {
      if (s.needer == me) continue;
      if (dest.empty() || dest.back() != s.needer)
        dest.push_back(static_cast<int>(s.needer)), counts.push_back(0), displs.push_back(static_cast<int>(words.size()));
      counts.back() += 2, words.insert(words.end(), {s.position, s.index});
    }
    MPIL_Comm* xcomm = nullptr;
    MPIL_Info* xinfo = nullptr;
    MPIL_Comm_init(&xcomm, MPI_COMM_WORLD);
    MPIL_Info_init(&xinfo);
    const std::pair<const char*, AlltoallvCRSMethod> methods[] = {{"personalized", ALLTOALLV_CRS_PERSONALIZED},
                                                                  {"nonblocking", ALLTOALLV_CRS_NONBLOCKING}};
    for (const std::string& name : a.mpia) {
      const auto m = std::find_if(std::begin(methods), std::end(methods), [&](const auto& e) { return name == e.first; });
      if (m == std::end(methods)) throw std::runtime_error("--mpia: unknown method " + name + " (personalized, nonblocking)");
      MPIL_Set_alltoallv_crs(m->second);
      bool bad = false;
      std::vector<double> mine, last;
      for (int k = 0; k < a.reps; ++k) {
        int n_src = 0, n_words = 0, *src = nullptr, *rcounts = nullptr, *rdispls = nullptr;
        void* rvals = nullptr;
        int one = 1, all = 0;
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        MPIL_Alltoallv_crs(static_cast<int>(dest.size()), static_cast<int>(words.size()), dest.data(), counts.data(), displs.data(), MPI_INT64_T,
                           words.data(), &n_src, &n_words, &src, &rcounts, &rdispls, MPI_INT64_T, &rvals, xinfo, xcomm);
        mine.push_back(MPI_Wtime() - t0);
        // Check: every needed position answered once, with the reference's owner and index.
        std::vector<int> answered(needed.size(), 0);
        const I64* v = static_cast<const I64*>(rvals);
        for (int s = 0; s < n_src; ++s)
          for (int w = rdispls[s]; w + 1 < rdispls[s] + rcounts[s]; w += 2) {
            const auto j = static_cast<std::size_t>(v[w]);
            bad |= j >= needed.size() || ref.owner[j] != src[s] || ref.owner_index[j] != v[w + 1];
            if (j < needed.size()) ++answered[j];
          }
        for (std::size_t j = 0; j < needed.size(); ++j) bad |= ref.owner[j] != me && answered[j] != 1;
        MPIL_Free(src), MPIL_Free(rcounts), MPIL_Free(rdispls), MPIL_Free(rvals);
        MPI_Barrier(MPI_COMM_WORLD);
      }
      last.resize(mine.size());
      MPI_Reduce(mine.data(), last.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      std::sort(last.begin(), last.end());
      const bool wrong = any_rank(bad);
      failed |= wrong;
      if (me == 0) row.print("reverse", std::string("mpia:alltoallv_crs/") + name, "-", last[last.size() / 2], wrong);
    }
    MPIL_Info_free(&xinfo);
    MPIL_Comm_free(&xcomm);
  }
#else
  if (!a.mpia.empty() && me == 0) std::fprintf(stderr, "smpi_discovery: built without MPI Advance: --mpia ignored\n");
#endif

  // 3. The gather on the discovered exchange: the pattern's (planned in the job) against AC.
  std::vector<double> owned_values(owned.size()), needed_values(needed.size());
  for (std::size_t i = 0; i < owned.size(); ++i) owned_values[i] = value_of(owned[i]);
  const auto wrong_values = [&] {
    bool bad = false;
    for (std::size_t j = 0; j < needed.size(); ++j) bad |= needed_values[j] != value_of(needed[j]);
    std::fill(needed_values.begin(), needed_values.end(), 0.0);
    return any_rank(bad);
  };
  {
    commfit::runtime::Pattern pattern =
        commfit::runtime::Pattern::from_ids(MPI_COMM_WORLD, owned, needed, "lookup=directory" + a.pattern_options);
    pattern.gather(owned_values.data(), needed_values.data(), MPI_DOUBLE);   // warm-up, checked
    bool wrong = wrong_values();
    const double s = median_of_runs(a.reps, [&] {
      for (int c = 0; c < a.calls; ++c) pattern.gather(owned_values.data(), needed_values.data(), MPI_DOUBLE);
    });
    wrong |= wrong_values();
    failed |= wrong;
    if (me == 0) row.print("gather", "commfit", "-", s < 0 ? s : s / a.calls, wrong);
  }
  {
    // The same replay without the per-call count check: the exchange planned in the job as the
    // pattern plans it (same options), its executor with CountCheck::first_call (what smpi_driver
    // times), the values packed and unpacked as AC does.
    HandGather h(ref, me);
    std::vector<int> sc, sd, rc, rd;
    h.alltoallv_counts(p, sc, sd, rc, rd);
    std::vector<I64> sbytes(sc.begin(), sc.end()), rbytes(rc.begin(), rc.end());
    for (int q = 0; q < p; ++q) sbytes[q] *= 8, rbytes[q] *= 8;
    commfit::runtime::InJobOptions o = commfit::runtime::parse_in_job_options(a.pattern_options);
    o.exec.count_check = commfit::exec::CountCheck::first_call;
    commfit::runtime::InJobReport report;
    commfit::exec::Executor ex = commfit::runtime::plan_in_job(MPI_COMM_WORLD, sbytes.data(), rbytes.data(), o, &report, {}, 8);
    if (me == 0)
      std::printf("# %s p=%d: the gather's plan: strategy %s%s%s, %u phases, estimate %.3g s\n", a.label.c_str(), p, report.strategy.c_str(),
                  report.chosen.empty() ? "" : " chose ", report.chosen.c_str(), report.phases, report.estimate_s);
    const auto once = [&] {
      for (std::size_t k = 0; k < h.send_index.size(); ++k) h.send[k] = owned_values[static_cast<std::size_t>(h.send_index[k])];
      ex.execute(h.send.data(), sc.data(), sd.data(), MPI_DOUBLE, h.recv.data(), rc.data(), rd.data(), MPI_DOUBLE);
      for (std::size_t k = 0; k < h.recv_slot.size(); ++k) needed_values[static_cast<std::size_t>(h.recv_slot[k])] = h.recv[k];
    };
    once();
    bool wrong = wrong_values();
    const double s = median_of_runs(a.reps, [&] {
      for (int c = 0; c < a.calls; ++c) once();
    });
    wrong |= wrong_values();
    failed |= wrong;
    if (me == 0) row.print("gather", "commfit-first-call", "-", s < 0 ? s : s / a.calls, wrong);
  }
  {
    HandGather ac(ref, me);
    ac.run(owned_values.data(), needed_values.data());
    bool wrong = wrong_values();
    const double s = median_of_runs(a.reps, [&] {
      for (int c = 0; c < a.calls; ++c) ac.run(owned_values.data(), needed_values.data());
    });
    wrong |= wrong_values();
    failed |= wrong;
    if (me == 0) row.print("gather", "ac", "-", s < 0 ? s : s / a.calls, wrong);
  }
  MPI_Comm_free(&comm);
  return failed ? 1 : 0;
}

}  // namespace

// SimGrid 3.32's MPI_Ibarrier can complete on a rank before every rank has entered it (seen at 8
// ranks: two ranks left the barrier while five had not entered), so NBX, which counts on it, lost
// messages or hung. The program is linked with -Wl,--wrap=MPI_Ibarrier,--wrap=MPI_Test
// (build_discovery.sh): its MPI_Ibarrier, find_owners' and MPI Advance's, is a dissemination
// barrier (ceil(log2 p) rounds of zero-byte messages: rank r sends to r + 2^k and receives from
// r - 2^k, as MPI libraries' own), and MPI_Test on its request advances it. The handle the caller
// holds is always the current round's live receive request.
namespace {
struct Dissemination {
  MPI_Comm comm;
  int me, p, distance;
  MPI_Request send, recv;
};
std::vector<Dissemination> pending_barriers;   // per rank (SMPI privatizes globals)
constexpr int kBarrierTag = 99;                // below find_owners' 100, unused by it

void post_round(Dissemination& d) {
  MPI_Isend(nullptr, 0, MPI_BYTE, (d.me + d.distance) % d.p, kBarrierTag, d.comm, &d.send);
  MPI_Irecv(nullptr, 0, MPI_BYTE, ((d.me - d.distance) % d.p + d.p) % d.p, kBarrierTag, d.comm, &d.recv);
}
}  // namespace

extern "C" int __real_MPI_Test(MPI_Request* request, int* flag, MPI_Status* status);

extern "C" int __wrap_MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  Dissemination d{comm, 0, 1, 1, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Comm_rank(comm, &d.me);
  MPI_Comm_size(comm, &d.p);
  *request = MPI_REQUEST_NULL;
  if (d.p == 1) return MPI_SUCCESS;
  post_round(d);
  *request = d.recv;
  pending_barriers.push_back(d);
  return MPI_SUCCESS;
}

extern "C" int __wrap_MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const auto it = std::find_if(pending_barriers.begin(), pending_barriers.end(), [&](const Dissemination& d) { return d.recv == *request; });
  if (*request == MPI_REQUEST_NULL || it == pending_barriers.end()) return __real_MPI_Test(request, flag, status);
  *flag = 0;
  int done = 0;
  if (it->send != MPI_REQUEST_NULL) __real_MPI_Test(&it->send, &done, MPI_STATUS_IGNORE);
  if (it->send != MPI_REQUEST_NULL) return MPI_SUCCESS;
  __real_MPI_Test(&it->recv, &done, MPI_STATUS_IGNORE);   // the round is over when its receive is
  if (!done) return MPI_SUCCESS;
  it->distance *= 2;
  if (it->distance < it->p) {
    post_round(*it);
    *request = it->recv;
    return MPI_SUCCESS;
  }
  pending_barriers.erase(it);
  *request = MPI_REQUEST_NULL;
  *flag = 1;
  if (status != MPI_STATUS_IGNORE) *status = MPI_Status{};
  return MPI_SUCCESS;
}

// As in smpi_driver.cpp: SMPI 3.32's MPI_Iallreduce is linear (p^2 simulated messages); replay.cpp
// is compiled to call this blocking stand-in instead (build_discovery.sh).
extern "C" int commfit_smpi_iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                       MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Allreduce(send, recv, count, type, op, comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smpi_discovery: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);   // the other ranks may wait in a collective
  }
  MPI_Finalize();
  return status;
}

// SMPI driver of the at-scale benchmark (docs/PERFORMANCE.md "Simulated clusters"). Built with
// smpicxx by bench/smpi/build.sh, run under smpirun on a platform of bench/smpi/platforms.py.
// One run loads a commfit matrix, and for each method asked for: runs it from an aligned start
// (barrier, then every rank sleeps to the same simulated instant) and checks the received bytes
// against the byte pattern (every method, every byte, unless the buffers are too big for this
// machine, see --check-limit); the time is the last rank's finish minus that instant. The
// executor runs once before that, untimed (its first call agrees on the counts). Rank 0 also computes the bandwidth lower bounds on SimGrid's own
// routes: LB_inj (max over ranks of bytes sent or received / the host link's bandwidth) and
// LB_link (the most loaded directed link's bytes / its bandwidth, over Host::route_to).
//
//   smpirun ... smpi_driver --matrix M.json [--plan NAME=PLAN]... [--methods ac,acN,alltoallv,exec,neighbor]
//   (acN: AC with at most N requests outstanding per rank, e.g. ac4, ac16)
//           [--alg LABEL] [--label TEXT] [--lb] [--check-limit BYTES] [--no-pairwise] [--coalesce BYTES]
//
// Prints one CSV line per method: label,method,sim_s,check (check = ok | WRONG | skipped), and
// with --lb one line label,lb,LB_inj,LB_link. Exit status 1 when any method delivered wrong data.
#include "backends/exec/commfit_exec.hpp"
#include "bench/smpi/smpi_bench.h"

#include <mpi.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

// SMPI 3.32's MPI_Iallreduce is a linear exchange (p^2 simulated messages: many minutes of wall
// time at 1024 ranks). The executor's one count-check collective (first execute only, with
// CountCheck::first_call; untimed here) is compiled to call this instead (bench/smpi/build.sh
// builds replay.cpp with -DMPI_Iallreduce=commfit_smpi_iallreduce): a blocking MPI_Allreduce at
// the same point of every rank, then an already-complete request. Same result, same matching.
extern "C" int commfit_smpi_iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                                       MPI_Comm comm, MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Allreduce(send, recv, count, type, op, comm);
}

namespace {

using namespace commfit::smpi_bench;

struct Args {
  std::string matrix;
  std::vector<std::pair<std::string, std::string>> plans;   // name, path
  std::vector<std::string> methods = {"ac", "alltoallv", "exec"};
  std::string alg = "default";
  std::string label = "run";
  bool lb = false;
  bool pairwise = true;   // the executor's Options::pairwise
  int coalesce = commfit::exec::Options{}.coalesce;   // the executor's Options::coalesce
  double check_limit = 2e9;   // total bytes of all ranks' buffers above which SMPI_SHARED_MALLOC is used
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  Args a;
  for (int k = 1; k < argc; ++k) {
    const std::string s = argv[k];
    auto next = [&]() -> std::string { return k + 1 < argc ? argv[++k] : ""; };
    if (s == "--matrix") a.matrix = next();
    else if (s == "--plan") {
      const std::string v = next();
      const auto eq = v.find('=');
      if (eq == std::string::npos) a.plans.emplace_back("exec", v);
      else a.plans.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (s == "--methods") a.methods = split(next(), ',');
    else if (s == "--alg") a.alg = next();
    else if (s == "--label") a.label = next();
    else if (s == "--lb") a.lb = true;
    else if (s == "--no-pairwise") a.pairwise = false;
    else if (s == "--coalesce") a.coalesce = std::atoi(next().c_str());
    else if (s == "--check-limit") a.check_limit = std::atof(next().c_str());
    else {
      if (rank == 0) std::fprintf(stderr, "smpi_driver: unknown argument %s\n", s.c_str());
      MPI_Finalize();
      return 2;
    }
  }

  Exchange x;
  if (const int status = load_exchange(a.matrix, a.check_limit, "smpi_driver", x); status != 0) {
    MPI_Finalize();
    return status;
  }
  const std::vector<int>& all_sc = x.all_sc;
  std::vector<int>&sc = x.sc, &rc = x.rc, &sd = x.sd, &rd = x.rd;
  unsigned char* sb = x.sb;
  unsigned char* rb = x.rb;

  // Lower bounds on SimGrid's routes (rank 0 walks every message's route).
  if (a.lb) {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    std::vector<char> names(rank == 0 ? std::size_t(p) * MPI_MAX_PROCESSOR_NAME : 1);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::vector<simgrid::s4u::Host*> host(p);
      for (int r = 0; r < p; ++r) host[r] = simgrid::s4u::Host::by_name(std::string(&names[std::size_t(r) * MPI_MAX_PROCESSOR_NAME]));
      std::map<simgrid::s4u::Link*, double> load;
      std::vector<double> out(p, 0), in(p, 0);
      double inj_bw = 0;
      for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j) {
          const int b = all_sc[std::size_t(i) * p + j];
          if (b == 0 || i == j) continue;
          out[i] += b;
          in[j] += b;
          std::vector<simgrid::s4u::Link*> links;
          double lat = 0;
          host[i]->route_to(host[j], links, &lat);
          for (simgrid::s4u::Link* l : links) load[l] += b;
          if (!links.empty() && inj_bw == 0) inj_bw = links.front()->get_bandwidth();
        }
      double lb_link = 0, lb_inj = 0;
      for (const auto& [l, bytes] : load)
        if (l->get_sharing_policy() != simgrid::s4u::Link::SharingPolicy::FATPIPE) lb_link = std::max(lb_link, bytes / l->get_bandwidth());
      for (int r = 0; r < p; ++r) lb_inj = std::max(lb_inj, std::max(out[r], in[r]) / std::max(inj_bw, 1.0));
      std::printf("%s,lb,%.9g,%.9g\n", a.label.c_str(), lb_inj, lb_link);
      std::fflush(stdout);
    }
  }

  // The methods.
  std::vector<std::pair<std::string, std::function<void()>>> methods;
  std::vector<commfit::exec::Executor> executors;
  executors.reserve(a.plans.size());
  commfit::exec::AllAtOnce ac(MPI_COMM_WORLD);
  std::deque<commfit::exec::AllAtOnce> throttled;
  MPI_Comm graph = MPI_COMM_NULL;
  std::vector<int> nsrc, nsc, nsd, ndst, nrc, nrd;
  for (const std::string& name : a.methods) {
    if (name == "ac") {
      methods.emplace_back("AC", [&] { ac.execute(sb, sc.data(), sd.data(), rb, rc.data(), rd.data()); });
    } else if (name.size() > 2 && name.rfind("ac", 0) == 0 && name.find_first_not_of("0123456789", 2) == std::string::npos) {
      // acN: AC with at most N requests outstanding per rank (the executor's max_outstanding).
      throttled.emplace_back(MPI_COMM_WORLD, std::stoi(name.substr(2)));
      commfit::exec::AllAtOnce* t = &throttled.back();
      methods.emplace_back("AC/" + name.substr(2), [t, &sb, &rb, &sc, &sd, &rc, &rd] {
        t->execute(sb, sc.data(), sd.data(), rb, rc.data(), rd.data());
      });
    } else if (name == "alltoallv") {
      methods.emplace_back("alltoallv:" + a.alg, [&] {
        MPI_Alltoallv(sb, sc.data(), sd.data(), MPI_BYTE, rb, rc.data(), rd.data(), MPI_BYTE, MPI_COMM_WORLD);
      });
    } else if (name == "neighbor") {
      // SimGrid 3.32 aborts here ("Not yet implemented: PMPI_Dist_graph_create_adjacent", and
      // PMPI_Neighbor_alltoallv likewise): kept for SMPI versions that have them; run.py skips it.
      // Neighbours: the nonzero entries, self included when nonzero.
      for (int q = 0; q < p; ++q) {
        if (rc[q] > 0) { nsrc.push_back(q); nrc.push_back(rc[q]); nrd.push_back(rd[q]); }
        if (sc[q] > 0) { ndst.push_back(q); nsc.push_back(sc[q]); nsd.push_back(sd[q]); }
      }
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(nsrc.size()), nsrc.data(), MPI_UNWEIGHTED,
                                     static_cast<int>(ndst.size()), ndst.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
      methods.emplace_back("neighbor_alltoallv", [&] {
        MPI_Neighbor_alltoallv(sb, nsc.data(), nsd.data(), MPI_BYTE, rb, nrc.data(), nrd.data(), MPI_BYTE, graph);
      });
    } else if (name == "exec") {
      for (const auto& [pname, path] : a.plans) {
        commfit::exec::Options o;
        o.count_check = commfit::exec::CountCheck::first_call;   // no per-call allreduce in the timed run
        o.pairwise = a.pairwise;
        o.coalesce = a.coalesce;
        // The load-time consistency proof is one MPI_Alltoall (p^2 simulated messages): off; the
        // plans come from `commfit plan` (verified) and every byte received is checked anyway.
        o.check_consistency = false;
        try {
          executors.push_back(commfit::exec::Executor::load(path, MPI_COMM_WORLD, o));
        } catch (const std::exception& e) {
          if (rank == 0) std::fprintf(stderr, "smpi_driver: %s: %s\n", path.c_str(), e.what());
          MPI_Abort(MPI_COMM_WORLD, 2);
        }
        commfit::exec::Executor* ex = &executors.back();
        methods.emplace_back("commfit:" + pname, [ex, &sb, &rb, &sc, &sd, &rc, &rd] {
          ex->execute(sb, sc.data(), sd.data(), rb, rc.data(), rd.data());
        });
      }
    } else {
      if (rank == 0) std::fprintf(stderr, "smpi_driver: unknown method %s\n", name.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }

  int any_wrong = 0;
  for (const auto& [name, run] : methods) {
    // The executor runs once untimed first (its first call agrees on the counts); the others only
    // once: the simulation is deterministic and has no caches, and the baselines' runs are the
    // expensive ones in wall time.
    if (name.rfind("commfit:", 0) == 0) run();
    any_wrong |= measure(a.label, name, run, x);
  }
  executors.clear();
  if (graph != MPI_COMM_NULL) MPI_Comm_free(&graph);
  x.release();
  MPI_Finalize();
  return any_wrong ? 1 : 0;
}

// In-job planning (docs/EXECUTOR.md, "Planning inside the job"): commfit::runtime::plan gathers
// the count matrix of one MPI_Alltoallv, plans it on one rank with the planner `commfit plan` runs
// (same options, same deterministic plans), scatters each rank its schedule and returns an
// executor (commfit::exec::Executor, the executor library's) of that plan:
//
//   commfit::runtime::InJobOptions o = commfit::runtime::parse_in_job_options("strategy=auto");
//   auto ex = commfit::runtime::plan(MPI_COMM_WORLD, sendcounts, recvcounts, o);  // bytes
//   for (...) ex.execute(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls);
//
// Library commfit_runtime (CMake commfit::runtime, pkg-config commfit-runtime): the layer above the
// executor and the planner, using each through its public API. Programs that only replay plans
// made offline link commfit::exec alone.
#pragma once

#include "commfit_exec.hpp"
#include "ir/comm_matrix.h"
#include "planner/pipeline.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace commfit::runtime {

struct InJobOptions {
  commfit::PlanOptions plan;   // what `commfit plan` takes: strategy and its options, topology,
                               // cost and network model, memory per rank, seed
  commfit::exec::Options exec; // the executor's options
  std::string keep;            // non-empty: the root writes KEEP/matrix.json and the plan
                               // KEEP/plan (a directory) for `commfit verify`, `report`, `plan`
  int root = 0;                // the rank that plans
  std::int64_t memory_per_rank = -1;   // >= 0: free bytes of every rank (the memory strategy)
  // No topology given (the "topology" key clears it, and a plan.topology other than full is kept):
  // the ranks that share memory
  // (MPI_Comm_split_type SHARED) are asked for; when they sit on two or more nodes in blocks of
  // N consecutive ranks (the last block may be smaller), the plan's machine is full+nodeN
  // (detect_nodes below).
  bool detect_nodes = true;
  // The keys set_in_job_option was given: a strategy option the strategy does not read
  // (algorithm=rs_n under strategy=bounded) is refused, as on the command line.
  std::vector<std::string> given;
};

// Collective: the machine of `comm`'s ranks as MPI places them, for planning (what detect_nodes
// above plans with): the ranks that share memory (MPI_Comm_split_type SHARED) make the nodes,
// full+nodeN or a node map when they sit on two or more; on one node, full+nodeP when it holds
// more ranks P than `cores_per_node` (NetworkOptions: they share its cores), else the crossbar
// (Topology(): each rank its own port).
Topology detect_nodes(MPI_Comm comm, std::uint32_t cores_per_node);

// Options from "key=value" words separated by blanks (the C and Fortran bindings and the PMPI
// interposer's COMMFIT_* variables use the same keys): strategy, algorithm, variant, method,
// concurrency, max-outstanding, chunk, memory (per rank, with a unit: 8MiB), topology (which also
// turns off detect_nodes), network (flow | ib), tau, bandwidth, overhead (with units), seed, keep,
// root, machine (a machine file, planner/machine_file.h: its figures where no key gives one, read
// on the calling rank). Throws UsageError naming an unknown key (with a suggestion) or a bad
// value, InputError for a machine file that cannot be read or is not one.
InJobOptions parse_in_job_options(const std::string& spec);

// Applies one key=value to `o` (what parse_in_job_options does for each word).
void set_in_job_option(InJobOptions& o, const std::string& key, const std::string& value);

// Throws UsageError for options the planner would refuse (planner/plan_option.h
// check_plan_option_keys): in-job planning asks on every rank before it gathers anything.
void check_in_job_options(const InJobOptions& o);

// What in-job planning did, for the interposer's summary and the tests (valid on every rank).
struct InJobReport {
  std::uint64_t messages = 0;   // network messages of the matrix
  std::uint32_t phases = 0;
  double estimate_s = 0;        // the plan's estimate under its cost model
  double plan_seconds = 0;      // wall time of the whole collective planning on this rank
  std::string strategy;         // as the manifest names it ("auto" with "chosen" below)
  std::string chosen;           // --strategy auto: the candidate chosen
  std::string topology;         // the machine the plan was made for (its spec)
  RankSchedule schedule;        // this rank's schedule (for pattern reuse, runtime/adapt.hpp)
};

// Collective: the count matrix of one MPI_Alltoallv on `root` (the others get an empty matrix),
// each rank contributing its row; every rank's receive counts are checked against what the others
// send it. Throws exec::Error (counts) on every rank when they disagree. For recording patterns.
CommMatrix gather_matrix(MPI_Comm comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes, int root);

// Collective: in-job planning from MPI_Alltoallv's counts as they are (bytes: each rank's row and
// column of the matrix), with the checks and agreements of plan_in_job below. Returns this rank's
// executor of the plan.
exec::Executor plan(MPI_Comm comm, const int* sendcounts, const int* recvcounts, const InJobOptions& options);

// plan with 64-bit counts and a report. The counts are this rank's row and column of the matrix
// in bytes (MPI_Alltoallv's counts times the datatypes' sizes): 64-bit so that a message of more
// than 2^31 - 1 bytes is planned rather than truncated (the executor then splits it). Every rank
// must pass the same options (root, machine, strategy and its options, executor options): they
// are compared with rank 0's before anything else, and a difference ends the call on every rank
// with the same exec::Error (usage) naming the rank and the option. So does the planner's memory
// estimate when it exceeds this machine's memory (planner/limits.h).
exec::Executor plan_in_job(MPI_Comm comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes,
                           const InJobOptions& options, InJobReport* report = nullptr);

// plan_in_job in two collective halves, for a caller that goes on with its calls while the root
// plans: the constructor agrees on the arguments, gathers the matrix on the root and, with
// `background`, starts the planner there on a thread of its own (the planner makes no MPI call);
// ready() says on the root when the plan is made; finish() (collective, every rank in the same
// call) waits for it, raises the root's error on every rank or sends each rank its schedule, and
// builds the executor. The caller learns that the root is ready by its own agreement. The
// destructor joins the thread.
class PlanningJob {
 public:
  PlanningJob(MPI_Comm comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes, const InJobOptions& options, bool background,
              const std::string& caller_error = {}, int elem_size = 1);
  PlanningJob(const PlanningJob&) = delete;
  PlanningJob& operator=(const PlanningJob&) = delete;
  ~PlanningJob();
  bool ready() const;            // the root's plan is made (or failed); true on the other ranks
  void wait();                   // until ready()
  double root_seconds() const;   // on the root, once ready: the planner's own wall time; else 0
  bool on_thread() const;        // the root plans on a thread of its own, beside the calls
  exec::Executor finish(InJobReport* report = nullptr);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The bindings' form: `caller_error`, when not empty, is this rank's own problem with its
// arguments (a bad option string, null counts), raised on every rank instead of returned by this
// rank alone (the others would wait in the collective); `sendbytes` and `recvbytes` may then be
// null. `elem_size` (the counts' unit) is compared across ranks like the options.
exec::Executor plan_in_job(MPI_Comm comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes,
                           const InJobOptions& options, InJobReport* report, const std::string& caller_error, int elem_size);

}  // namespace commfit::runtime

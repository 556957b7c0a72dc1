// In-job planning (runtime/in_job.hpp): gather the count matrix on the root, plan it there with
// make_plan, send each rank its schedule, build the executors.
#include "runtime/in_job.hpp"

#include "backends/atomic_output.h"
#include "backends/exec/exec_support.h"
#include "backends/plan_dir.h"
#include "ir/comm_matrix.h"
#include "ir/error.h"
#include "ir/matrix_io.h"
#include "ir/network_sim.h"
#include "planner/limits.h"
#include "planner/machine_file.h"
#include "planner/near_miss.h"
#include "planner/plan_option.h"
#include "planner/units.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <filesystem>
#include <new>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

namespace commfit::runtime {

// The executor's public face (commfit_exec.hpp) and what it offers the layers above (exec_support.h).
using exec::agree;
using exec::Error;
using exec::Executor;
using exec::first_failing_rank;
using exec::raise_agreed;

namespace {

// The keys of in-job planning besides the planning options (planner/plan_option.h).
constexpr const char* kInJobKeys[] = {"memory", "keep", "root", "machine"};

// Frees the planning's own duplicate of the communicator on every way out.
struct CommGuard {
  MPI_Comm comm = MPI_COMM_NULL;
  ~CommGuard() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

// This rank's nonzero counts as (peer, bytes) pairs, flattened; a problem goes to `error`.
std::vector<std::int64_t> nonzero_pairs(const std::int64_t* bytes, int size, const char* what, std::string& error) {
  std::vector<std::int64_t> out;
  for (int j = 0; j < size; ++j) {
    if (bytes[j] < 0 || static_cast<std::uint64_t>(bytes[j]) > kMaxMessageBytes) {
      if (error.empty()) error = std::string(what) + "[" + std::to_string(j) + "] = " + std::to_string(bytes[j]) + " bytes: not a message size";
      continue;
    }
    if (bytes[j] > 0) out.insert(out.end(), {j, bytes[j]});
  }
  return out;
}

// Every rank's pairs on the root (empty elsewhere); `per_rank` gets each rank's pair count there.
std::vector<std::int64_t> gather_pairs(MPI_Comm comm, int root, const std::vector<std::int64_t>& mine, std::vector<int>& per_rank,
                                       std::string& root_error) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(rank == root ? static_cast<std::size_t>(size) : 0), displs(counts.size());
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) displs[r] = static_cast<int>(std::min<std::int64_t>(total, INT_MAX)), total += counts[r];
  // MPI counts are int: a matrix of more than 2^30 messages would need several gathers.
  int too_many = rank == root && total > INT_MAX;
  MPI_Bcast(&too_many, 1, MPI_INT, root, comm);
  if (too_many) {
    if (rank == root) root_error = "the matrix has more than 2^30 messages: plan it offline with commfit plan";
    return {};
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(total));
  MPI_Gatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, root, comm);
  per_rank = std::move(counts);
  return all;
}

// The matrix from the gathered rows, checked against the gathered columns: every rank's receive
// counts must be what the others send it.
CommMatrix matrix_from(int size, const std::vector<std::int64_t>& rows, const std::vector<int>& row_counts, const std::vector<std::int64_t>& cols,
                       const std::vector<int>& col_counts, std::string& error) {
  std::vector<Message> sent, expected;
  std::size_t k = 0;
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < row_counts[static_cast<std::size_t>(r)]; i += 2, k += 2)
      sent.push_back({r, static_cast<Rank>(rows[k]), static_cast<Bytes>(rows[k + 1])});
  k = 0;
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < col_counts[static_cast<std::size_t>(r)]; i += 2, k += 2)
      expected.push_back({static_cast<Rank>(cols[k]), r, static_cast<Bytes>(cols[k + 1])});
  auto order = [](const Message& a, const Message& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); };
  std::sort(expected.begin(), expected.end(), order);   // `sent` is in (src, dst) order already
  const auto [a, b] = std::mismatch(sent.begin(), sent.end(), expected.begin(), expected.end());
  if (a != sent.end() || b != expected.end()) {
    // The first pair (src, dst) where the two sides disagree.
    const bool from_sender = b == expected.end() || (a != sent.end() && !order(*b, *a));
    const Message& m = from_sender ? *a : *b;
    Bytes other = 0;
    if (from_sender && b != expected.end() && b->src == m.src && b->dst == m.dst) other = b->bytes;
    if (!from_sender && a != sent.end() && a->src == m.src && a->dst == m.dst) other = a->bytes;
    const Bytes sends = from_sender ? m.bytes : other, receives = from_sender ? other : m.bytes;
    error = "rank " + std::to_string(m.src) + " sends " + std::to_string(sends) + " bytes to rank " + std::to_string(m.dst) +
            ", which expects " + std::to_string(receives) + ": the counts are not one MPI_Alltoallv's";
    return {};
  }
  return make_matrix(size, std::move(sent));
}

void send_text(MPI_Comm comm, int to, const std::string& text) {
  const std::int64_t n = static_cast<std::int64_t>(text.size());
  MPI_Send(&n, 1, MPI_INT64_T, to, 1, comm);
  for (std::int64_t at = 0; at < n; at += INT_MAX)
    MPI_Send(text.data() + at, static_cast<int>(std::min<std::int64_t>(INT_MAX, n - at)), MPI_CHAR, to, 2, comm);
}

std::string recv_text(MPI_Comm comm, int from) {
  std::int64_t n = 0;
  MPI_Recv(&n, 1, MPI_INT64_T, from, 1, comm, MPI_STATUS_IGNORE);
  std::string text(static_cast<std::size_t>(n), '\0');
  for (std::int64_t at = 0; at < n; at += INT_MAX)
    MPI_Recv(text.data() + at, static_cast<int>(std::min<std::int64_t>(INT_MAX, n - at)), MPI_CHAR, from, 2, comm, MPI_STATUS_IGNORE);
  return text;
}

// The arguments of one in-job planning call that every rank must pass alike, as (name, text)
// pairs: a collective entered with different roots, machines or strategies would hang or end in
// MPI's fatal truncation errors. `keep` is read by the root alone and is not compared.
std::vector<std::pair<std::string, std::string>> argument_fields(const InJobOptions& o, int elem_size) {
  auto num = [](double x) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", x);
    return std::string(b);
  };
  const PlanOptions& p = o.plan;
  const NetworkOptions& n = p.cost.network;
  std::string memory;
  for (const Bytes b : p.memory) memory += std::to_string(b) + ",";
  const exec::Options& e = o.exec;
  return {{"strategy", p.strategy},
          {"algorithm", p.algorithm},
          {"variant", p.variant},
          {"method", p.method},
          {"concurrency", std::to_string(p.concurrency)},
          {"max-outstanding", std::to_string(p.max_outstanding)},
          {"steps", std::to_string(p.steps)},
          {"chunk", std::to_string(p.chunk)},
          {"memory", std::to_string(o.memory_per_rank) + "/" + memory},
          {"topology", p.topology.spec() + (o.detect_nodes ? " (nodes detected)" : "")},
          {"seed", std::to_string(p.seed)},
          {"machine", p.machine},
          {"network", to_string(n.model)},
          {"tau", num(p.cost.tau_s)},
          {"bandwidth", num(p.cost.bandwidth_Bps)},
          {"overhead", num(n.overhead_s)},
          {"network parameters", num(n.eager_limit) + " " + format_ib_factors(n.ib) + " " + num(n.link_latency_s) + " " +
                                     num(n.window_bytes) + " " + num(n.rtt_weight_bytes) + " " + num(n.intra_latency_s) + " " +
                                     num(n.intra_bandwidth_Bps)},
          {"root", std::to_string(o.root)},
          {"executor options", std::string(exec::to_string(e.protocol)) + " " + std::to_string(e.barrier) + std::to_string(e.pairwise) + " " +
                                   std::to_string(e.max_outstanding) + " " + std::to_string(e.max_message) + " " +
                                   std::to_string(static_cast<int>(e.count_check)) + std::to_string(e.check_consistency) + " " +
                                   std::to_string(e.coalesce) + std::to_string(e.persistent)},
          {"elem_size", std::to_string(elem_size)}};
}

// Collective, before anything else in-job planning does: a rank's own problem (`local_error`) or
// arguments other than rank 0's end the call on every rank with the same Error, naming the rank
// and the argument.
void agree_arguments(MPI_Comm comm, const std::string& local_error, const InJobOptions& o, int elem_size) {
  agree(comm, Error::Kind::usage, local_error);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto fields = argument_fields(o, elem_size);
  std::string text;
  for (const auto& [name, value] : fields) text += value + '\n';
  std::int64_t n = static_cast<std::int64_t>(text.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, comm);
  std::string first = rank == 0 ? text : std::string(static_cast<std::size_t>(std::min<std::int64_t>(n, INT_MAX)), '\0');
  MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_CHAR, 0, comm);
  std::string differs;
  std::istringstream theirs(first);
  for (const auto& [name, value] : fields) {
    std::string line;
    std::getline(theirs, line);
    if (line != value && differs.empty())
      differs = "in-job planning: this rank passes " + name + " \"" + value + "\" but rank 0 passes \"" + line +
                "\": every rank must pass the same options, root, element size and machine";
  }
  agree(comm, Error::Kind::usage, differs);
}

}  // namespace

void set_in_job_option(InJobOptions& o, const std::string& key, const std::string& value) {
  if (set_plan_option(o.plan, key, value)) {
    if (key == "topology") o.detect_nodes = false;
    o.given.push_back(key);
    return;
  }
  if (key == "memory") {
    const double bytes = option_quantity(key, value, Quantity::bytes, "a size in bytes (or with a unit: 8MiB)");
    if (bytes > 0x1p62) throw UsageError(key + "=" + value + ": more than 4 EiB");
    o.memory_per_rank = static_cast<std::int64_t>(bytes);
    o.given.push_back(key);
  } else if (key == "machine") {
    // The file's figures for every option not given, before or after it (each later key sets its own).
    apply_machine_file(read_machine_file(value), o.plan, o.given);
  } else if (key == "keep") o.keep = value;
  else if (key == "root") o.root = static_cast<int>(std::min<std::uint64_t>(option_whole(key, value, "a rank"), INT_MAX));
  else {
    std::vector<std::string> keys = plan_option_keys();
    keys.insert(keys.end(), std::begin(kInJobKeys), std::end(kInJobKeys));
    std::string list;
    for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
    throw UsageError("unknown in-job planning option \"" + key + "\"" + did_you_mean(key, keys) + " (keys: " + list + ")");
  }
}

void check_in_job_options(const InJobOptions& o) { check_plan_option_keys(o.plan, o.given); }

InJobOptions parse_in_job_options(const std::string& spec) {
  InJobOptions o;
  std::istringstream words(spec);
  for (std::string word; words >> word;) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("\"" + word + "\": expected key=value");
    set_in_job_option(o, word.substr(0, eq), word.substr(eq + 1));
  }
  return o;
}

CommMatrix gather_matrix(MPI_Comm comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes, int root) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string local;
  const std::vector<std::int64_t> row = nonzero_pairs(sendbytes, size, "sendcounts", local);
  const std::vector<std::int64_t> col = nonzero_pairs(recvbytes, size, "recvcounts", local);
  agree(comm, Error::Kind::usage, local);
  std::string root_error;
  std::vector<int> row_counts, col_counts;
  const std::vector<std::int64_t> rows = gather_pairs(comm, root, row, row_counts, root_error);
  const std::vector<std::int64_t> cols = root_error.empty() ? gather_pairs(comm, root, col, col_counts, root_error) : std::vector<std::int64_t>{};
  CommMatrix m;
  if (rank == root && root_error.empty()) m = matrix_from(size, rows, row_counts, cols, col_counts, root_error);
  agree(comm, Error::Kind::counts, root_error);
  return m;
}

Topology detect_nodes(MPI_Comm comm, std::uint32_t cores_per_node) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  CommGuard node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node.comm);
  int first = rank;   // the lowest rank of this rank's node
  MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, node.comm);
  std::vector<Rank> firsts(static_cast<std::size_t>(size));
  const Rank mine = first;
  MPI_Allgather(&mine, 1, MPI_INT32_T, firsts.data(), 1, MPI_INT32_T, comm);
  // One node holding more ranks than cores: its ranks share its memory and its cores.
  if (cores_per_node > 0 && size > static_cast<int>(cores_per_node) && std::all_of(firsts.begin(), firsts.end(), [](Rank f) { return f == 0; }))
    return Topology::parse("full+node" + std::to_string(size));
  return placement_machine(firsts);
}

Executor plan_in_job(MPI_Comm user_comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes, const InJobOptions& options,
                     InJobReport* report) {
  return plan_in_job(user_comm, sendbytes, recvbytes, options, report, "", 1);
}

// What a planning job holds between its two collective halves.
struct PlanningJob::State {
  MPI_Comm user_comm = MPI_COMM_NULL;
  CommGuard guard;   // the gathers and the schedules travel on a duplicate: never matched by the application
  int rank = 0, size = 0, root = 0;
  InJobOptions options;
  double start = 0;
  // The root's: the matrix, the plan made from it on `worker` (or at once), or its error.
  CommMatrix m;
  Topology nodes;
  Plan plan;
  std::string root_error;
  double plan_seconds = 0;
  std::thread worker;
  std::atomic<bool> done{false};
  bool background = false;

  void make() {   // the root's planning: no MPI in here (it may run on a thread of its own)
    const auto t0 = std::chrono::steady_clock::now();
    try {
      PlanOptions po = options.plan;
      if (options.memory_per_rank >= 0) po.memory.assign(static_cast<std::size_t>(size), static_cast<Bytes>(options.memory_per_rank));
      if (nodes.ranks_per_node() > 1) po.topology = nodes;
      // The offline planner's memory estimate, against what this machine and its cgroup allow:
      // refused on every rank before the root starts building.
      check_plan_memory(m, po, "in-job planning", std::nullopt);
      plan = make_plan(m, po);
      if (!options.keep.empty()) {   // a directory of this user's (made 0700 when missing), not one others may write in
        const Directory keep = Directory::private_dir(options.keep, false);
        write_file_atomic(matrix_json(m), keep, "matrix.json", 0644);
        write_plan_dir(plan, keep.path() / "plan");
      }
    } catch (const std::bad_alloc&) {
      root_error = "out of memory while planning";
    } catch (const std::exception& e) {
      root_error = e.what();
    }
    m = CommMatrix{};
    plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    done.store(true, std::memory_order_release);
  }
};

PlanningJob::PlanningJob(MPI_Comm user_comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes, const InJobOptions& options,
                         bool background, const std::string& caller_error, int elem_size)
    : s_(std::make_unique<State>()) {
  State& st = *s_;
  st.start = MPI_Wtime();
  st.user_comm = user_comm;
  st.options = options;
  int is_inter = 0;
  MPI_Comm_test_inter(user_comm, &is_inter);
  if (is_inter) throw Error(Error::Kind::usage, 0, "in-job planning needs an intracommunicator");
  MPI_Comm_dup(user_comm, &st.guard.comm);
  const MPI_Comm comm = st.guard.comm;
  MPI_Comm_rank(comm, &st.rank);
  MPI_Comm_size(comm, &st.size);
  std::string local_error = caller_error;
  if (local_error.empty()) {
    try {
      check_in_job_options(options);
    } catch (const UsageError& e) {
      local_error = e.what();
    }
  }
  agree_arguments(comm, local_error, options, elem_size);
  st.root = options.root;
  agree(comm, Error::Kind::usage,
        st.root < 0 || st.root >= st.size ? "root " + std::to_string(st.root) + " is not a rank of the communicator (" + std::to_string(st.size) + " ranks)"
                                         : "");
  st.m = gather_matrix(comm, sendbytes, recvbytes, st.root);
  // A machine given in options.plan (C++ callers fill it directly) is kept as given.
  st.nodes = options.detect_nodes && options.plan.topology == Topology() ? detect_nodes(comm, options.plan.cost.network.cores_per_node) : Topology();
  if (st.rank != st.root) {
    st.done = true;
  } else if (background) {
    st.background = true;
    st.worker = std::thread([&st] { st.make(); });
  } else {
    st.make();
  }
}

PlanningJob::~PlanningJob() {
  if (s_ && s_->worker.joinable()) s_->worker.join();
}

bool PlanningJob::ready() const { return s_->done.load(std::memory_order_acquire); }

void PlanningJob::wait() {
  if (s_->worker.joinable()) s_->worker.join();
}

double PlanningJob::root_seconds() const { return s_->rank == s_->root && ready() ? s_->plan_seconds : 0.0; }

bool PlanningJob::on_thread() const { return s_->background; }

Executor PlanningJob::finish(InJobReport* report) {
  State& st = *s_;
  if (st.worker.joinable()) st.worker.join();
  const MPI_Comm comm = st.guard.comm;
  const int rank = st.rank, size = st.size, root = st.root;
  // Anything the root threw becomes every rank's error.
  const int failed = first_failing_rank(comm, !st.root_error.empty());
  if (failed >= 0) raise_agreed(comm, failed, Error::Kind::plan, st.root_error);

  // Each rank its schedule (as its rank file holds it), and everyone the plan's summary.
  std::string mine, summary, local;
  if (rank == root) {
    Plan& plan = st.plan;
    for (int r = 0; r < size; ++r) {
      std::string text = rank_schedule_json(plan.ranks[static_cast<std::size_t>(r)]);
      if (r == root) mine = std::move(text);
      else send_text(comm, r, text);
    }
    nlohmann::json s = {{"phases", plan.manifest.phases}, {"estimate_s", plan.manifest.cost.estimate_s}, {"strategy", plan.manifest.strategy},
                        {"topology", plan.manifest.contract.topology.empty() ? "full" : plan.manifest.contract.topology},
                        {"chosen", plan.manifest.contract.chosen}};
    std::uint64_t messages = 0;
    for (const RankSchedule& r : plan.ranks)
      for (const PeerBytes& pb : r.sends) messages += pb.peer != r.rank;
    s["messages"] = messages;
    summary = s.dump();
    plan = Plan{};   // the schedules are out: free the rest before the executors are built
  } else {
    mine = recv_text(comm, root);
  }
  std::int64_t n = static_cast<std::int64_t>(summary.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, root, comm);
  summary.resize(static_cast<std::size_t>(n));
  MPI_Bcast(summary.data(), static_cast<int>(n), MPI_CHAR, root, comm);

  RankSchedule schedule;
  try {
    schedule = parse_rank_schedule(mine, "in-job plan, rank " + std::to_string(rank));
  } catch (const std::exception& e) {
    local = e.what();
  }
  agree(comm, Error::Kind::plan, local);
  Executor ex = Executor::from_schedule(schedule, st.user_comm, st.options.exec, "in-job plan");
  if (report) {
    report->schedule = std::move(schedule);
    const nlohmann::json s = nlohmann::json::parse(summary);
    report->messages = s.at("messages").get<std::uint64_t>();
    report->phases = s.at("phases").get<std::uint32_t>();
    report->estimate_s = s.at("estimate_s").get<double>();
    report->strategy = s.at("strategy").get<std::string>();
    report->chosen = s.at("chosen").get<std::string>();
    report->topology = s.at("topology").get<std::string>();
    report->plan_seconds = MPI_Wtime() - st.start;
  }
  return ex;
}

Executor plan_in_job(MPI_Comm user_comm, const std::int64_t* sendbytes, const std::int64_t* recvbytes, const InJobOptions& options,
                     InJobReport* report, const std::string& caller_error, int elem_size) {
  return PlanningJob(user_comm, sendbytes, recvbytes, options, false, caller_error, elem_size).finish(report);
}

Executor plan(MPI_Comm comm, const int* sendcounts, const int* recvcounts, const InJobOptions& options) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<std::int64_t> s(sendcounts, sendcounts + size), r(recvcounts, recvcounts + size);
  return plan_in_job(comm, s.data(), r.data(), options);
}

}  // namespace commfit::runtime

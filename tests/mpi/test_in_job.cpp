// In-job planning (runtime/in_job.hpp): runtime::plan and the C binding commfit_exec_plan on
// every small pattern of support.h under several strategies, each replayed and compared with
// MPI_Alltoallv byte for byte. Also: the plan equals the one `commfit plan` makes of the same
// matrix (make_plan on every rank here), keep= writes a matrix and a plan that verify (through no
// planted link, and only into a directory of the user's), and inconsistent counts or bad options
// fail on every rank with one message.
// Usage: mpirun -np N test_in_job
#include "backends/atomic_output.h"
#include "backends/exec/commfit_exec.h"
#include "backends/plan_dir.h"
#include "ir/matrix_io.h"
#include "passes/verify.h"
#include "runtime/adapt.hpp"
#include "runtime/in_job.hpp"
#include "support.h"

#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>
#include <iterator>
#include <tuple>

using namespace commfit;
using namespace commfit::mpitest;

namespace {

void replay_and_compare(Checker& chk, exec::Executor& ex, const Pattern& pat, Buffers& b, int rank, const std::string& what) {
  for (std::uint64_t k = 0; k < 2; ++k) {
    fill_send(b, rank, k);
    reference(b, MPI_COMM_WORLD);
    ex.execute(b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data());
    const std::string diff = compare(b, rank, k);
    chk.check(diff.empty(), what + " " + pat.name + ": " + diff);
  }
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const exec::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker chk(MPI_COMM_WORLD);
  for (const Pattern& pat : patterns(size, false)) {
    Buffers b = make_buffers(pat.matrix, rank);
    for (const char* spec : {"", "strategy=auto", "strategy=bounded concurrency=2", "strategy=direct algorithm=rs_n chunk=1KiB",
                             "strategy=throttled max-outstanding=8 network=ib"}) {
      const std::string what = std::string("runtime::plan(\"") + spec + "\")";
      runtime::InJobOptions o = runtime::parse_in_job_options(spec);
      runtime::InJobReport report;
      std::vector<std::int64_t> s(b.sc.begin(), b.sc.end()), r(b.rc.begin(), b.rc.end());
      exec::Executor ex = runtime::plan_in_job(MPI_COMM_WORLD, s.data(), r.data(), o, &report);
      replay_and_compare(chk, ex, pat, b, rank, what);
      // The same plan as the offline planner's: same phases and estimate.
      const Plan offline = make_plan(pat.matrix, o.plan);
      chk.check(report.phases == offline.manifest.phases && report.estimate_s == offline.manifest.cost.estimate_s,
                what + " " + pat.name + ": the in-job plan differs from make_plan's");
      chk.check(ex.stats().phases == offline.manifest.phases, what + ": the executor's phases");
    }
    // runtime::plan itself (int counts), and the C binding with counts in 4-byte elements when
    // they divide.
    exec::Executor ex = runtime::plan(MPI_COMM_WORLD, b.sc.data(), b.rc.data(), runtime::parse_in_job_options("strategy=async"));
    replay_and_compare(chk, ex, pat, b, rank, "runtime::plan");
    commfit_exec_t cex = nullptr;
    const int rc = commfit_exec_plan(MPI_COMM_WORLD, b.sc.data(), b.rc.data(), 1, "strategy=auto seed=3", nullptr, &cex);
    chk.check(rc == COMMFIT_EXEC_SUCCESS && cex, std::string("commfit_exec_plan: ") + commfit_exec_last_error());
    if (cex) {
      for (std::uint64_t k = 0; k < 2; ++k) {
        fill_send(b, rank, k);
        reference(b, MPI_COMM_WORLD);
        chk.check(commfit_exec_execute(cex, b.send.data(), b.sc.data(), b.sd.data(), b.recv.data(), b.rc.data(), b.rd.data()) ==
                      COMMFIT_EXEC_SUCCESS,
                  std::string("commfit_exec_execute: ") + commfit_exec_last_error());
        const std::string diff = compare(b, rank, k);
        chk.check(diff.empty(), "commfit_exec_plan " + pat.name + ": " + diff);
      }
      commfit_exec_free(&cex);
    }
  }

  // Pattern reuse: the same sparsity pattern with other sizes keeps the plan's structure (an async
  // plan always can: one phase, whole messages); another pattern is re-planned. Either way the
  // bytes are MPI_Alltoallv's.
  for (const Pattern& pat : patterns(size, false)) {
    for (const char* spec : {"strategy=async", "strategy=direct", "strategy=bounded concurrency=2"}) {
      const std::string what = std::string("adapt_or_plan(") + spec + ") " + pat.name;
      const runtime::InJobOptions o = runtime::parse_in_job_options(spec);
      Buffers b = make_buffers(pat.matrix, rank);
      std::vector<std::int64_t> s(b.sc.begin(), b.sc.end()), r(b.rc.begin(), b.rc.end());
      runtime::InJobReport planned;
      exec::Executor first = runtime::plan_in_job(MPI_COMM_WORLD, s.data(), r.data(), o, &planned);
      // New sizes, same nonzero pattern; then a matrix with one more message (another pattern).
      std::vector<Message> resized, grown;
      for (const Message& m : messages_of(pat.matrix)) resized.push_back({m.src, m.dst, m.bytes * 3 + Bytes(m.src + 2 * m.dst) % 7});
      grown = resized;
      if (pat.matrix.at(0, size - 1) == 0) grown.push_back({0, size - 1, 77});
      for (const auto& [label, msgs] : {std::pair{"resized", resized}, std::pair{"grown", grown}}) {
        const Pattern next{pat.name + " " + label, make_matrix(size, msgs)};
        Buffers nb = make_buffers(next.matrix, rank);
        std::vector<std::int64_t> ns(nb.sc.begin(), nb.sc.end()), nr(nb.rc.begin(), nb.rc.end());
        runtime::AdaptReport rep;
        exec::Executor ex = runtime::adapt_or_plan(MPI_COMM_WORLD, planned.schedule, ns.data(), nr.data(), "sha256:" + std::string(64, '0'), o, 1.5, &rep);
        replay_and_compare(chk, ex, next, nb, rank, what);
        const bool same_pattern = std::string(label) == "resized" || pat.matrix.at(0, size - 1) != 0;
        if (!same_pattern) chk.check(!rep.adapted, what + " " + label + ": adapted to another sparsity pattern");
        if (same_pattern && std::string(spec) == "strategy=async") chk.check(rep.adapted, what + " " + label + ": not adapted: " + rep.why);
        chk.check(rep.adapted || !rep.why.empty(), what + ": re-planned without a reason");
      }
    }
  }

  // keep=DIR: the root writes the matrix and the plan; they verify as `commfit verify` would.
  {
    const auto dir = shared_scratch("in-job-keep");
    const Pattern pat = patterns(size, false).front();
    Buffers b = make_buffers(pat.matrix, rank);
    runtime::InJobOptions o = runtime::parse_in_job_options("strategy=bounded keep=" + dir.string());
    exec::Executor ex = runtime::plan(MPI_COMM_WORLD, b.sc.data(), b.rc.data(), o);
    replay_and_compare(chk, ex, pat, b, rank, "keep=");
    if (rank == 0) {
      const MatrixFile m = read_matrix(dir / "matrix.json");
      chk.check(m.matrix.at(0, size - 1) == pat.matrix.at(0, size - 1) && m.matrix.nnz() == pat.matrix.nnz(), "keep=: matrix.json");
      const Plan plan = read_plan_dir(dir / "plan");
      VerifyRules rules;
      rules.contention = Contention::bounded;
      rules.per_port = 4;
      const auto problems = verify(plan, m.matrix, rules);
      chk.check(problems.empty(), "keep=: the plan does not verify: " + (problems.empty() ? std::string() : problems.front()));
      std::filesystem::remove_all(dir);
    }
  }

  // keep=DIR writes no file through a link: links to a victim's file and directory at the
  // temporary names the root (rank 0, this process there) takes first are left alone, and the
  // outputs are new. A directory owned by another user, or one anyone may write in without the
  // sticky bit, is refused on every rank, naming it; one reached through a link is written.
  {
    namespace fs = std::filesystem;
    const auto dir = shared_scratch("in-job-keep-links");
    const auto victim = shared_scratch("in-job-victim");
    const auto secret = victim / "secret.txt";
    const std::string text = "the victim's secret\n";
    const auto mode = fs::perms::owner_read | fs::perms::owner_write;
    const Pattern pat = patterns(size, false).front();
    Buffers b = make_buffers(pat.matrix, rank);
    if (rank == 0) {
      std::FILE* f = std::fopen(secret.c_str(), "w");
      std::fputs(text.c_str(), f);
      std::fclose(f);
      fs::permissions(secret, mode);
      for (const char* name : {"matrix.json", "plan"}) {
        const std::string tmp = temp_sibling(dir / name).string();   // .NAME.tmp-HOST-PID
        fs::create_symlink(std::string(name) == "plan" ? victim : secret, tmp);
        fs::create_symlink(victim, dir / ("." + std::string(name) + ".old-" + tmp.substr(tmp.rfind(".tmp-") + 5)));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    exec::Executor ex = runtime::plan(MPI_COMM_WORLD, b.sc.data(), b.rc.data(), runtime::parse_in_job_options("keep=" + dir.string()));
    replay_and_compare(chk, ex, pat, b, rank, "keep= beside links");
    if (rank == 0) {
      std::string now(64, '\0');
      std::FILE* f = std::fopen(secret.c_str(), "r");
      now.resize(f ? std::fread(now.data(), 1, now.size(), f) : 0);
      if (f) std::fclose(f);
      chk.check(now == text && fs::status(secret).permissions() == mode, "keep=: a link was written through: the victim's file now holds \"" + now + "\"");
      chk.check(std::distance(fs::directory_iterator(victim), fs::directory_iterator()) == 1, "keep=: a file was made in the victim's directory");
      chk.check(fs::is_regular_file(fs::symlink_status(dir / "matrix.json")) && fs::is_directory(fs::symlink_status(dir / "plan")),
                "keep=: matrix.json and plan are not a new file and a new directory");
      fs::remove_all(dir);
      fs::remove_all(victim);
    }

    for (const std::string how : {"owned by nobody", "mode 0777"}) {
      const auto bad = shared_scratch("in-job-keep-bad");
      if (rank == 0) {
        if (how == "mode 0777") fs::permissions(bad, fs::perms::all);
        else chk.check(::chown(bad.c_str(), 65534, 65534) == 0, "keep=: chown to nobody failed");
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const std::string e = error_of([&] { runtime::plan(MPI_COMM_WORLD, b.sc.data(), b.rc.data(), runtime::parse_in_job_options("keep=" + bad.string())); });
      const char* why = how == "mode 0777" ? ": anyone may write in it (mode 0777, no sticky bit)" : ": owned by uid 65534, not by this user";
      chk.check(e.find(bad.string() + why) != std::string::npos, "keep= " + how + ": not refused: \"" + e + "\"");
      if (rank == 0) {
        chk.check(fs::is_empty(bad), "keep= " + how + ": written into");
        fs::remove_all(bad);
      }
    }

    const auto real = shared_scratch("in-job-keep-real");
    const fs::path link = real.string() + ".link";
    if (rank == 0) fs::create_directory_symlink(real, link);
    MPI_Barrier(MPI_COMM_WORLD);
    runtime::plan(MPI_COMM_WORLD, b.sc.data(), b.rc.data(), runtime::parse_in_job_options("keep=" + link.string()));
    if (rank == 0) {
      chk.check(fs::is_regular_file(real / "matrix.json") && fs::is_directory(real / "plan"), "keep=LINK: not written into the directory it names");
      fs::remove_all(real);
      fs::remove(link);
    }
  }

  // Errors: the same message on every rank, a collective verdict.
  {
    std::vector<int> sc(static_cast<std::size_t>(size), 10), rc(static_cast<std::size_t>(size), 10);
    if (rank == size - 1) rc[0] = 11;   // rank size-1 expects more from rank 0 than it sends
    const std::string e = error_of([&] { runtime::plan(MPI_COMM_WORLD, sc.data(), rc.data(), runtime::InJobOptions{}); });
    chk.check(e.find("rank 0 sends 10 bytes to rank " + std::to_string(size - 1) + ", which expects 11") != std::string::npos,
              "inconsistent counts: " + e);
    rc[0] = 10;
    const std::string bad = error_of([&] { runtime::plan(MPI_COMM_WORLD, sc.data(), rc.data(), runtime::parse_in_job_options("strategy=bonded")); });
    chk.check(bad.find("unknown strategy \"bonded\" (did you mean \"bounded\"?)") != std::string::npos, "bad strategy: " + bad);
    std::string unknown;
    try {
      runtime::parse_in_job_options("topolgy=torus:2x2");
    } catch (const std::exception& x) {
      unknown = x.what();
    }
    chk.check(unknown.find("unknown in-job planning option \"topolgy\" (did you mean \"topology\"?)") != std::string::npos, "bad key: " + unknown);
    // In-job planning's own keys, by the planner's value readers: no infinite or overflowing memory.
    for (const char* spec : {"memory=inf", "memory=1e30", "memory=-1", "root=x"}) {
      std::string refused;
      try {
        runtime::parse_in_job_options(spec);
      } catch (const std::exception& x) {
        refused = x.what();
      }
      chk.check(refused.find(spec) != std::string::npos, std::string(spec) + " refused, naming it: " + refused);
    }
    chk.check(runtime::parse_in_job_options("memory=8MiB root=1").memory_per_rank == 8388608, "memory=8MiB");
    // A strategy option the strategy does not read is refused on every rank, before anything is
    // gathered, as the command line refuses it.
    const std::string misplaced = error_of(
        [&] { runtime::plan(MPI_COMM_WORLD, sc.data(), rc.data(), runtime::parse_in_job_options("strategy=bounded algorithm=rs_n")); });
    chk.check(misplaced.find("--algorithm does not apply to strategy bounded (it applies to: direct, two-stage)") != std::string::npos,
              "a misplaced option: " + misplaced);
    const std::string under_auto = error_of(
        [&] { runtime::plan(MPI_COMM_WORLD, sc.data(), rc.data(), runtime::parse_in_job_options("strategy=auto concurrency=3")); });
    chk.check(under_auto.find("--concurrency does not apply to strategy auto") != std::string::npos, "an option under auto: " + under_auto);
    // Every planning option of the command line, by the planner's one setter.
    const runtime::InJobOptions net = runtime::parse_in_job_options("network=ib ib-factors=0.9,0.8,1.2 link-latency=100ns window=4MiB rtt-weight=8775 "
                                                              "intra-latency=200ns intra-bandwidth=5GB/s eager-limit=8KiB steps=2 topology=full+node2");
    const NetworkOptions& n = net.plan.cost.network;
    chk.check(n.model == Network::ib && n.ib.be == 0.9 && n.link_latency_s > 0.99e-7 && n.link_latency_s < 1.01e-7 && n.window_bytes == 4194304 &&
                  n.rtt_weight_bytes == 8775 && n.intra_bandwidth_Bps == 5e9 && n.eager_limit == 8192 && net.plan.steps == 2 && !net.detect_nodes,
              "network options by name");
    // machine=FILE: the file's figures where no key gives one, before or after it; a plan made with
    // it records the file; a bad file is refused through the C API's agreement on every rank.
    {
      int pid = static_cast<int>(::getpid());   // rank 0's names the file every rank reads
      MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
      const std::filesystem::path file = std::filesystem::temp_directory_path() / ("commfit-in-job-machine-" + std::to_string(pid) + ".json");
      if (rank == 0)
        std::ofstream(file) << R"({"format": "commfit-machine", "version": 1, "network": "ib", "tau_s": 3e-6, "bandwidth_Bps": 2e10})";
      MPI_Barrier(MPI_COMM_WORLD);
      for (const std::string& spec : {"tau=1us machine=" + file.string(), "machine=" + file.string() + " tau=1us"}) {
        const runtime::InJobOptions o = runtime::parse_in_job_options(spec);
        chk.check(o.plan.cost.tau_s == 1e-6 && o.plan.cost.bandwidth_Bps == 2e10 && o.plan.cost.network.model == Network::ib &&
                      o.plan.machine == file.string(),
                  "machine= with tau given: " + spec);
      }
      commfit_exec_t bad = nullptr;
      const std::string spec = "machine=" + file.string() + ".missing";
      chk.check(commfit_exec_plan(MPI_COMM_WORLD, sc.data(), rc.data(), 1, spec.c_str(), nullptr, &bad) == COMMFIT_EXEC_ERR_USAGE && !bad &&
                    std::string(commfit_exec_last_error()).find(".missing") != std::string::npos,
                std::string("a missing machine file: ") + commfit_exec_last_error());
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) std::filesystem::remove(file);
    }
    commfit_exec_t cex = nullptr;
    chk.check(commfit_exec_plan(MPI_COMM_WORLD, sc.data(), rc.data(), 1, "strategy", nullptr, &cex) == COMMFIT_EXEC_ERR_USAGE && !cex,
              std::string("commfit_exec_plan with a bad option string: ") + commfit_exec_last_error());
  }
  // One rank's arguments differ from the others' (or are bad on that rank alone): every rank
  // returns the same error naming that rank, none waits in a collective the others left.
  if (size > 1) {
    std::vector<int> sc(static_cast<std::size_t>(size), 10), rc(static_cast<std::size_t>(size), 10);
    const int odd = size - 1;
    const std::string odd_rank = "rank " + std::to_string(odd) + ": ";
    auto c_error = [&](const char* mine, const char* others, int elem_mine) {
      commfit_exec_t cex = nullptr;
      const int code = commfit_exec_plan(MPI_COMM_WORLD, sc.data(), rc.data(), rank == odd ? elem_mine : 1, rank == odd ? mine : others,
                                         nullptr, &cex);
      const std::string message = commfit_exec_last_error();
      if (cex) commfit_exec_free(&cex);
      return std::pair{code, message};
    };
    for (const auto& [label, mine, elem, expect] :
         {std::tuple{"a bad option string on one rank", "strategy", 1, "\"strategy\": expected key=value"},
          std::tuple{"another strategy on one rank", "strategy=async", 1, "passes strategy \"async\" but rank 0 passes \"auto\""},
          std::tuple{"elem_size 0 on one rank", "strategy=auto", 0, "elem_size must be at least 1"},
          std::tuple{"another elem_size on one rank", "strategy=auto", 2, "passes elem_size \"2\" but rank 0 passes \"1\""},
          std::tuple{"root=1 on one rank (C)", "strategy=auto root=1", 1, "passes root \"1\" but rank 0 passes \"0\""}}) {
      const auto [code, message] = c_error(mine, "strategy=auto", elem);
      chk.check(code == COMMFIT_EXEC_ERR_USAGE && message.find(odd_rank) != std::string::npos && message.find(expect) != std::string::npos,
                std::string("commfit_exec_plan, ") + label + ": code " + std::to_string(code) + ": " + message);
    }
    for (const auto& [label, mine, expect] :
         {std::tuple{"root=1 on one rank (C++)", "root=1", "passes root \"1\" but rank 0 passes \"0\""},
          std::tuple{"topology=full on one rank", "topology=full", "passes topology \"full\" but rank 0 passes \"full (nodes detected)\""},
          std::tuple{"network=ib on one rank", "network=ib", "passes network \"ib\" but rank 0 passes \"flow\""}}) {
      const runtime::InJobOptions o = runtime::parse_in_job_options(rank == odd ? mine : "");
      const std::string e = error_of([&] { runtime::plan(MPI_COMM_WORLD, sc.data(), rc.data(), o); });
      chk.check(e.find(odd_rank) != std::string::npos && e.find(expect) != std::string::npos, std::string("runtime::plan, ") + label + ": " + e);
    }
  }

  // Counts that are not one MPI_Alltoallv's given to pattern reuse: named as counts on every rank,
  // not blamed on the plan.
  if (size > 1) {
    const Pattern pat = patterns(size, false).front();
    Buffers b = make_buffers(pat.matrix, rank);
    std::vector<std::int64_t> s(b.sc.begin(), b.sc.end()), r(b.rc.begin(), b.rc.end());
    const runtime::InJobOptions o = runtime::parse_in_job_options("strategy=async");
    runtime::InJobReport planned;
    exec::Executor first = runtime::plan_in_job(MPI_COMM_WORLD, s.data(), r.data(), o, &planned);
    if (rank == size - 1) r[0] += 1;   // expects one byte more from rank 0 than it sends
    const std::string e = error_of([&] { runtime::adapt_or_plan(MPI_COMM_WORLD, planned.schedule, s.data(), r.data(), "sha256:" + std::string(64, '0'), o, 1.5, nullptr); });
    chk.check(e.find("which expects " + std::to_string(r[0])) != std::string::npos || rank != size - 1, "adapt_or_plan, inconsistent counts: " + e);
    chk.check(e.find("the counts are not one MPI_Alltoallv's") != std::string::npos, "adapt_or_plan, inconsistent counts: " + e);
  }

  // The planner's memory estimate applies in the job as on the command line: a ring of INT_MAX
  // bytes in 1-byte pieces is refused on every rank before the root builds anything.
  {
    std::vector<std::int64_t> s(static_cast<std::size_t>(size), 0), r(s.size(), 0);
    s[static_cast<std::size_t>((rank + 1) % size)] = INT_MAX;
    r[static_cast<std::size_t>((rank + size - 1) % size)] = INT_MAX;
    const runtime::InJobOptions o = runtime::parse_in_job_options("strategy=direct algorithm=quantised chunk=1");
    const std::string e = error_of([&] { runtime::plan_in_job(MPI_COMM_WORLD, s.data(), r.data(), o); });
    chk.check(e.find("planning needs about") != std::string::npos, "in-job memory estimate: " + e);
  }
  const int status = chk.finish("test_in_job");
  MPI_Finalize();
  return status;
}

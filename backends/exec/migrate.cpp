// The migration interface (migrate.hpp): the plan is loaded and checked by the executor
// (Executor::from_schedule), then replayed step by step with the application's buffers.
#include "backends/exec/migrate.hpp"

#include "backends/exec/executor_impl.h"
#include "backends/plan_binary.h"
#include "backends/plan_dir.h"
#include "ir/error.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <new>

namespace commfit::exec {

struct Migration::Impl {
  Executor executor;                  // the checks, and the duplicate communicator we talk on
  int rank = 0;
  std::uint64_t max_message = 0;
  std::vector<Step> steps;            // step_less order
  std::vector<std::size_t> phase_begin;   // steps of phase k: [phase_begin[k], phase_begin[k + 1])
  std::vector<char> stage;
  std::vector<void*> address;         // per step of the current phase
  std::vector<MPI_Request> requests;
  std::uint64_t in_use = 0;
  MigrateStats stats;

  explicit Impl(Executor ex) : executor(std::move(ex)) {}
  void run(const MigrateCallbacks& cb);
};

namespace {

MigratePiece piece_of(const Step& s) { return {s.src, s.dst, s.offset, s.bytes}; }

std::unique_ptr<Migration::Impl> make_impl(RankSchedule rs, MPI_Comm comm, const Options& options,
                                           const std::string& origin) {
  auto impl = std::make_unique<Migration::Impl>(Executor::from_schedule(rs, comm, options, origin));
  Migration::Impl& x = *impl;
  MPI_Comm_rank(x.executor.comm(), &x.rank);
  x.max_message = options.max_message;
  x.steps = std::move(rs.steps);
  std::stable_sort(x.steps.begin(), x.steps.end(), step_less);
  x.phase_begin.resize(std::size_t{rs.phases} + 1);
  for (Phase p = 0; p <= rs.phases; ++p)
    x.phase_begin[p] = static_cast<std::size_t>(
        std::lower_bound(x.steps.begin(), x.steps.end(), p, [](const Step& s, Phase q) { return s.phase < q; }) -
        x.steps.begin());
  std::size_t busiest = 1, widest = 1;
  for (Phase p = 0; p < rs.phases; ++p) {
    std::size_t n = 0;
    for (std::size_t k = x.phase_begin[p]; k < x.phase_begin[p + 1]; ++k)
      if (x.steps[k].op != Op::copy) n += (x.steps[k].bytes + x.max_message - 1) / x.max_message;
    busiest = std::max(busiest, n);
    widest = std::max(widest, x.phase_begin[p + 1] - x.phase_begin[p]);
  }
  x.requests.assign(busiest, MPI_REQUEST_NULL);
  x.address.assign(widest, nullptr);
  x.stage.assign(rs.staging_bytes, 0);
  x.stats.phases = rs.phases;
  x.stats.staging_bytes = rs.staging_bytes;
  return impl;
}

}  // namespace

void Migration::Impl::run(const MigrateCallbacks& cb) {
  const MPI_Comm comm = executor.comm();
  std::string err;
  if (!cb.send_data || !cb.receive_space || !cb.sent) err = "the migration needs send_data, receive_space and sent callbacks";
  agree(comm, Error::Kind::usage, err);
  in_use = 0;
  stats.staging_peak = 0;
  for (Phase p = 0; p < stats.phases; ++p) {
    const std::size_t b = phase_begin[p], e = phase_begin[p + 1];
    // 1. Ask for every address of the phase (staged receipts count as in use from here on).
    for (std::size_t k = b; k < e; ++k)
      if (steps[k].op == Op::recv && steps[k].buffer == Buffer::stage) in_use += steps[k].bytes;
    stats.staging_peak = std::max(stats.staging_peak, in_use);
    try {
      for (std::size_t k = b; k < e && err.empty(); ++k) {
        const Step& s = steps[k];
        void* a = nullptr;
        if (s.buffer == Buffer::stage) a = stage.data() + s.stage_offset;
        else if (s.op == Op::send) a = const_cast<void*>(cb.send_data(piece_of(s)));
        else a = cb.receive_space(piece_of(s));   // recv, and the destination of a copy
        if (!a) err = "phase " + std::to_string(p) + ": no address for bytes [" + std::to_string(s.offset) + ", " +
                      std::to_string(s.offset + s.bytes) + ") of message " + std::to_string(s.src) + " -> " +
                      std::to_string(s.dst);
        address[k - b] = a;
      }
    } catch (const std::exception& ex) {
      err = "phase " + std::to_string(p) + ": a migration callback failed: " + ex.what();
    }
    agree(comm, Error::Kind::usage, err);
    // 2. Receives, then sends, then local copies; wait for all.
    const int tag = static_cast<int>(2 * (p % kTagPhases));
    int n = 0;
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t k = b; k < e; ++k) {
        const Step& s = steps[k];
        if (s.op != (pass == 0 ? Op::recv : Op::send)) continue;
        char* a = static_cast<char*>(address[k - b]);
        for (Bytes done = 0; done < s.bytes; done += max_message) {
          const int count = static_cast<int>(std::min<Bytes>(max_message, s.bytes - done));
          if (pass == 0) MPI_Irecv(a + done, count, MPI_BYTE, s.peer, tag, comm, &requests[n++]);
          else MPI_Isend(a + done, count, MPI_BYTE, s.peer, tag, comm, &requests[n++]);
        }
      }
    for (std::size_t k = b; k < e; ++k) {
      const Step& s = steps[k];
      if (s.op != Op::copy) continue;
      const void* from = nullptr;
      try {
        from = cb.send_data(piece_of(s));
      } catch (const std::exception& ex) {
        err = std::string("a migration callback failed: ") + ex.what();
      }
      if (from && from != address[k - b]) std::memmove(address[k - b], from, s.bytes);
      else if (!from && err.empty()) err = "no address for the self message's bytes";
    }
    if (n > 0) MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
    agree(comm, Error::Kind::usage, err);
    // 3. Forwarded staged bytes are free again; the application may free what it sent.
    for (std::size_t k = b; k < e; ++k) {
      const Step& s = steps[k];
      if (s.op == Op::send && s.buffer == Buffer::stage) in_use -= s.bytes;
      if ((s.op == Op::send && s.buffer == Buffer::send) || s.op == Op::copy) cb.sent(piece_of(s));
    }
    if (cb.phase_end) cb.phase_end(p);
  }
  ++stats.runs;
}

Migration Migration::load(const std::string& path, MPI_Comm comm, const Options& options) {
  int rank = 0, size = 0;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw Error(Error::Kind::usage, -1, "MPI is not initialized");
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  RankSchedule rs;
  std::string origin = path, err;
  try {
    rs = read_plan_rank(path, rank, size, origin);
  } catch (const std::bad_alloc&) {
    err = origin + ": out of memory while loading the schedule";
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(comm, Error::Kind::plan, err);
  check_plan_hash(comm, rank, rank_schedule_hash(rs), path, [&] { return read_stored_plan_hash(path); });
  return Migration(make_impl(std::move(rs), comm, options, origin));
}

Migration Migration::from_schedule(const RankSchedule& schedule, MPI_Comm comm, const Options& options,
                                   const std::string& origin) {
  return Migration(make_impl(schedule, comm, options, origin));
}

Migration::Migration(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Migration::Migration(Migration&&) noexcept = default;
Migration& Migration::operator=(Migration&&) noexcept = default;
Migration::~Migration() = default;
void Migration::run(const MigrateCallbacks& callbacks) { impl_->run(callbacks); }
std::uint64_t Migration::staging_in_use() const { return impl_->in_use; }
const MigrateStats& Migration::stats() const { return impl_->stats; }

}  // namespace commfit::exec

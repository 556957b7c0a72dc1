// commfit executor: the migration interface for memory-constrained plans (docs/EXECUTOR.md,
// last bullet; Pinar-Hendrickson §3, plans of `commfit plan --strategy memory`).
//
// Unlike Executor::execute, which needs every receive buffer allocated before it starts, a
// Migration lets memory really stay within the limits the plan was made for. Phase by phase:
//   1. the application is asked (receive_space) for the space of each piece arriving at it in this
//      phase, and (send_data) for the bytes of each of its own pieces leaving in this phase;
//   2. the phase's transfers run (receives posted before sends; pieces parked on or forwarded by
//      this rank live in the executor's staging area, sized by the plan);
//   3. the application is told (sent) which of its outgoing pieces went out and may be freed.
// A plan that keeps verifier rule 5 then never needs more than each rank's original data plus its
// free memory: application-held bytes + staging in use (bytes parked here and not yet forwarded).
//
//   auto mig = commfit::exec::Migration::load("move.plan", MPI_COMM_WORLD);   // collective
//   mig.run({.send_data = ..., .receive_space = ..., .sent = ...});              // collective
//
// Loading reuses the executor's checks (Executor::from_schedule: format, p, rank, the same plan on
// every rank, consistent steps), and every error is raised on every rank as commfit::exec::Error.
// A piece is a byte range of one original message src -> dst; the self message (src == dst) is
// asked for like any other piece and copied locally (return the same address from send_data and
// receive_space to move it in place).
#pragma once

// Same directory in the source tree and in the installed include/commfit/.
#include "commfit_exec.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace commfit::exec {

struct MigratePiece {
  int src = 0;               // original sender
  int dst = 0;               // original receiver
  std::uint64_t offset = 0;  // first byte within message src -> dst
  std::uint64_t bytes = 0;
};

struct MigrateCallbacks {
  // Where the bytes of one of this rank's outgoing pieces are (src == this rank); called at the
  // start of the phase that sends it. The bytes must stay valid until `sent` is called for it.
  std::function<const void*(const MigratePiece&)> send_data;
  // Where to put a piece arriving for this rank (dst == this rank); called at the start of the
  // phase in which it arrives. Must return `bytes` writable bytes (nullptr is an error).
  std::function<void*(const MigratePiece&)> receive_space;
  // The piece given by send_data has been sent: the application may free it.
  std::function<void(const MigratePiece&)> sent;
  // Optional: called on every rank after each phase (its number).
  std::function<void(std::uint32_t phase)> phase_end;
};

struct MigrateStats {
  std::uint32_t phases = 0;
  std::uint64_t staging_bytes = 0;   // size of the staging area (the plan's)
  std::uint64_t staging_peak = 0;    // most bytes parked or in transit here at once (last run)
  std::uint64_t runs = 0;
};

class Migration {
 public:
  // Collective over comm. A plan directory or binary plan file, as Executor::load.
  static Migration load(const std::string& path, MPI_Comm comm, const Options& options = {});
  static Migration from_schedule(const RankSchedule& schedule, MPI_Comm comm, const Options& options = {},
                                 const std::string& origin = "schedule");

  Migration(Migration&&) noexcept;
  Migration& operator=(Migration&&) noexcept;
  ~Migration();

  // Collective: runs every phase of the plan through the callbacks. An exception thrown by a
  // callback, or a null receive space, fails the run on every rank (before that phase's transfers).
  void run(const MigrateCallbacks& callbacks);

  // Bytes received into the staging area and not yet forwarded (0 between runs); callbacks may
  // read it: during receive_space it already counts the staged receipts of the current phase.
  std::uint64_t staging_in_use() const;
  const MigrateStats& stats() const;

  struct Impl;

 private:
  explicit Migration(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace commfit::exec

// commfit patterns from global ids, C++ API (docs/PATTERN.md; the C API is commfit_pattern.h):
//
//   auto p = commfit::runtime::Pattern::from_ids(MPI_COMM_WORLD, owned, needed);   // collective
//   p.gather(x_owned.data(), x_needed.data(), MPI_DOUBLE);                         // owners -> needers
//   p.scatter(y_needed.data(), y_owned.data(), MPI_DOUBLE, MPI_SUM);               // back, reduced
//   p.gather_begin(x_owned.data(), x_needed.data(), MPI_DOUBLE);  work();  p.gather_end();   // split
//
// Library commfit_runtime (runtime/pattern.cpp; CMake commfit::runtime, pkg-config
// commfit-runtime): the layer above the executor, whose executors it plans in the job. Every
// function is collective over the communicator, and every error is raised on every rank as the
// executor's commfit::exec::Error (usage) with the same message.
#pragma once

#include "commfit_exec.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace commfit::runtime {

// What from_ids found, on this rank (the same on every call of the same inputs).
struct PatternStats {
  std::int64_t owned = 0, needed = 0;   // the ids given
  std::int64_t local = 0;               // needed ids this rank owns itself (copied, not sent)
  int send_peers = 0, recv_peers = 0;   // other ranks this rank sends to / receives from in gather
  std::int64_t sent = 0, received = 0;  // elements one gather sends to / receives from other ranks
  std::int64_t directory_ids = 0;       // ids this rank keeps as a directory rank (0 under the rings)
};

class Pattern {
 public:
  // owned[i]: the global id of this rank's i-th owned value; needed[j]: the id of its j-th needed
  // value. Finds each needed id's owner with a distributed directory (Pinar and Hendrickson; the
  // words lookup= and reverse= of plan_options choose another method, docs/PATTERN.md), then
  // plans the exchange in the job with the rest of plan_options (commfit_exec_plan's "key=value"
  // words) and makes the gather's executor for 8-byte elements. Error (usage) on every rank for an id no rank
  // owns, an id owned twice, a negative id.
  static Pattern from_ids(MPI_Comm comm, std::span<const std::int64_t> owned, std::span<const std::int64_t> needed,
                          const std::string& plan_options = "");

  Pattern(Pattern&&) noexcept;
  Pattern& operator=(Pattern&&) noexcept;
  ~Pattern();   // frees communicators: destroy on all ranks before MPI_Finalize

  // needed_values[j] = the owner's owned_values entry of needed[j]. `type`: predefined and
  // contiguous, the same on every rank.
  void gather(const void* owned_values, void* needed_values, MPI_Datatype type);
  // owned_values[i] = op(owned_values[i], each needed_values[j] with needed[j] == owned[i]), in the
  // order (needing rank, j); op is MPI_SUM, MPI_MAX, MPI_MIN or MPI_REPLACE (the last one wins).
  void scatter(const void* needed_values, void* owned_values, MPI_Datatype type, MPI_Op op);

  // Split phase (PetscSFBcastBegin/End): gather_begin packs the owned values and starts the
  // exchange (Executor::start: the first phase's messages are posted), gather_end finishes it and
  // writes needed_values; scatter_begin/scatter_end likewise, end combining into owned_values in
  // scatter's order. Between begin and end leave the output buffer (needed_values of gather_begin,
  // owned_values of scatter_begin) alone and alive: not read, not written; begin has copied its
  // input already. What overlaps the caller's work is the first phase of the plan's exchange (all of
  // it for a one-phase plan; nothing under the handshake protocol, a request window or barrier mode,
  // docs/PATTERN.md). Error (usage), on the calling rank without a collective: an end without its
  // begin, a begin, gather or scatter while a split call is pending.
  void gather_begin(const void* owned_values, void* needed_values, MPI_Datatype type);
  void gather_end();
  void scatter_begin(const void* needed_values, void* owned_values, MPI_Datatype type, MPI_Op op);
  void scatter_end();

  const PatternStats& stats() const;

  struct Impl;
  explicit Pattern(std::unique_ptr<Impl> impl);   // internal: from_ids and the C binding build it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace commfit::runtime

// commfit executor, C++ API (docs/EXECUTOR.md). Inside an MPI job, an Executor loads this rank's
// schedule of a plan made by `commfit plan` and replays it as a drop-in for MPI_Alltoallv:
//
//   auto ex = commfit::exec::Executor::load("halo.plan", MPI_COMM_WORLD);   // collective
//   for (...) ex.execute(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls);  // collective
//
// Every function here is collective over the executor's communicator, and every error is raised
// on every rank of it (as commfit::exec::Error, with the same message everywhere), never a hang.
// The executor talks on its own duplicate of the communicator, so it never matches application
// messages. Also here: the two baselines of the benchmarks, plain MPI_Alltoallv and AC.
#pragma once

// MPI's C API only: from C++, Open MPI's and MPICH's mpi.h otherwise declare their C++ bindings
// (deprecated in MPI-2.2, removed in MPI-3.0), which need libmpi_cxx at link time.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace commfit {
struct RankSchedule;
}

namespace commfit::exec {

enum class Protocol {
  post_all = 0,   // S2: post the phase's receives, then its sends, wait for all
  handshake = 1,  // S1: the receiver posts its receive and sends a zero-byte ready message;
                  //     the sender waits for it before sending
};

enum class CountCheck {
  every_call,  // each execute compares the counts with the plan and agrees on the verdict with one
               // 4-byte MPI_Allreduce, so a mismatch on any rank fails on every rank (default)
  first_call,  // only the first execute agrees collectively; later calls still compare locally
               // (O(p)), and a rank whose counts changed calls MPI_Abort: without a collective the
               // other ranks could not be told, and waiting for them would hang
  none,        // no call agrees: each rank uses its own counts, which MPI's rule makes consistent
               // between ranks. A whole, direct plan (Executor::whole_direct) replays any counts:
               // each of its messages goes at the call's size (empty ones as zero bytes) and the
               // messages it lacks go directly in one extra step. Other plans replay their own
               // counts only; a rank whose counts differ calls MPI_Abort, as under first_call
};
const char* to_string(CountCheck c);

// Options::max_outstanding: use the request window the plan carries (commfit plan --strategy
// throttled writes one; other plans have none).
inline constexpr int kPlanWindow = -1;

struct Options {
  Protocol protocol = Protocol::post_all;
  bool barrier = false;           // MPI_Barrier after every phase (synchronous phases)
  bool pairwise = true;           // a send and a receive with the same peer alone in a phase run as
                                  // one MPI_Sendrecv
  int max_outstanding = kPlanWindow;  // post-all only: at most this many requests in flight per
                                  // rank (kPlanWindow = -1: the plan's window, none for most plans;
                                  // 0 = no cap; else >= 2); the phase's transfers are then posted
                                  // in one global order of rank pairs, which cannot deadlock
  std::uint64_t max_message = std::uint64_t{1} << 30;  // larger pieces go as several messages
                                                       // (1 .. 2^31-1; MPI counts are int)
  CountCheck count_check = CountCheck::every_call;
  bool check_consistency = true;  // at load, one MPI_Alltoall of per-peer hashes proves that every
                                  // rank's send steps match its peers' receive steps
  int coalesce = 65536;           // the pieces of one phase to one peer travel as one message when they
                                  // total at most this many bytes, else as messages of less than
                                  // this many: packed into the staging area, sent, unpacked after
                                  // the phase (0: every piece its own message; at most
                                  // max_message; docs/EXECUTOR.md "Coalescing")
  bool persistent = false;        // post-all without a request window: replay with persistent
                                  // requests (MPI_Send_init / MPI_Recv_init once, MPI_Startall per
                                  // phase), made again when a call brings other buffers or
                                  // displacements (docs/EXECUTOR.md "Persistent requests")
};

const char* to_string(Protocol p);
// "post-all" | "handshake"; throws std::invalid_argument otherwise.
Protocol parse_protocol(const std::string& name);

class Error : public std::runtime_error {
 public:
  enum class Kind { plan, counts, usage };
  Error(Kind kind, int first_rank, const std::string& what)
      : std::runtime_error(what), kind_(kind), first_rank_(first_rank) {}
  Kind kind() const { return kind_; }
  // The lowest rank that found the problem (its message is the one every rank raises).
  int first_rank() const { return first_rank_; }

 private:
  Kind kind_;
  int first_rank_;
};

struct ExecStats {
  std::uint32_t phases = 0;        // phases of the plan (some may be empty on this rank)
  std::uint64_t network_steps = 0; // this rank's send + recv steps
  std::uint64_t copy_steps = 0;
  std::uint64_t pairs = 0;         // pairwise exchanges run as MPI_Sendrecv
  std::uint64_t staging_bytes = 0;
  std::uint64_t executes = 0;
  int window = 0;                  // requests in flight at most (0: no cap), the options' or the plan's
  std::uint64_t coalesced = 0;     // messages (sent and received) that carry several pieces
  std::uint64_t pack_bytes = 0;    // the staging area's part that packs them
};

class Executor {
 public:
  // Loads this rank's schedule from `path`: a plan directory (reads rank-NNNNN.json only) or a
  // binary plan file (reads its own slice only). Collective over `comm`.
  static Executor load(const std::string& path, MPI_Comm comm, const Options& options = {});
  // The same for this rank's schedule of the plan at `path`, read already (the PMPI interposer
  // reads it first for its counts): every check of load, the plan's recorded hash included.
  static Executor load(const std::string& path, const RankSchedule& schedule, MPI_Comm comm, const Options& options = {});
  // Same checks, from a schedule already in memory (made with make_plan, or by hand).
  static Executor from_schedule(const RankSchedule& schedule, MPI_Comm comm,
                                const Options& options = {}, const std::string& origin = "schedule");
  // An executor of a plan made inside the job comes from the runtime library, above this one:
  // commfit::runtime::plan (runtime/in_job.hpp; CMake commfit::runtime, pkg-config commfit-runtime).

  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;
  ~Executor();   // frees the duplicated communicator: destroy on all ranks before MPI_Finalize

  // MPI_Alltoallv semantics, counts and displacements in bytes. One call at a time per Executor: a
  // second thread calling while another is inside execute gets Error (usage) on its rank only.
  void execute(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
               const int* recvcounts, const int* rdispls);
  // Counts in elements of elem_size bytes, displacements in elements.
  void execute(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
               const int* recvcounts, const int* rdispls, std::size_t elem_size);
  // MPI_Alltoallv's signature; the datatypes must be contiguous (size == extent, lower bound 0).
  void execute(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
               void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype);

  // A split call: execute in two halves, so the caller computes while the first phase's messages
  // travel (PetscSFBcastBegin/End). start takes execute's arguments (each overload) and checks
  // them as execute does; then it packs and copies the first phase this rank has steps in, posts
  // its receives and sends nonblocking (a pairwise exchange as MPI_Irecv and MPI_Isend; persistent
  // requests under Options::persistent) and returns. finish waits for them, unpacks, and replays the
  // remaining phases blocking, as execute does. Between them the send buffer, the receive buffer
  // and the count and displacement arrays must be left alone (not written, the receive buffer not
  // read) and alive. What overlaps is the first phase only: a one-phase plan (direct) overlaps its
  // whole exchange, a multi-phase plan its first phase's messages. Under the handshake protocol,
  // a request window (max_outstanding, a throttled plan) or barrier mode, start posts nothing and
  // finish runs every phase: start overlaps nothing there. Where execute agrees on the counts
  // (CountCheck::every_call, and first_call's first call) start agrees with one blocking
  // MPI_Allreduce before it posts, so a count error is raised by start on every rank and leaves
  // nothing in flight; under CountCheck::none with other counts than the plan's (a whole, direct
  // plan) start runs the whole sized replay and finish only ends it. Both are collective. One call
  // in flight per Executor: execute, execute_sized or start while one is pending, and finish
  // without start, throw Error (usage) on the calling rank, without a collective. Destroying an
  // Executor with a split call pending cancels its receives.
  void start(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
             const int* recvcounts, const int* rdispls);
  void start(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
             const int* recvcounts, const int* rdispls, std::size_t elem_size);
  void start(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
             void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype);
  void finish();
  bool pending() const;   // start was called and finish not yet

  // Whole and direct: every message of this rank's schedule is one piece, sent from the send
  // buffer straight into the receive buffer (no forwarding, staging or splitting). Both ends of
  // each message then know its size from their own counts, so such a plan replays any counts
  // (execute_sized, CountCheck::none) with no agreement. Direct, async, bounded and throttled
  // plans are; two-stage, node-aware, parked and split ones are not.
  bool whole_direct() const;
  // A whole, direct plan's replay with this call's own sizes and displacements, in bytes (64-bit,
  // so no element count or displacement limit): no agreement and no count check. Messages of the
  // plan now empty go as zero bytes; messages it lacks go directly, posted before its phases. The
  // counts must be consistent between ranks (MPI_Alltoallv's rule): a receiver that expects fewer
  // bytes than are sent gets MPI's truncation error, as MPI_Alltoallv would give. Throws Error
  // (usage, this rank only) when the plan is not whole and direct.
  void execute_sized(const void* sendbuf, const std::int64_t* send_bytes, const std::int64_t* send_displs,
                     void* recvbuf, const std::int64_t* recv_bytes, const std::int64_t* recv_displs);

  const ExecStats& stats() const;
  const Options& options() const;
  MPI_Comm comm() const;   // the duplicate the executor talks on

  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);   // internal: load() and from_schedule() build it

 private:
  std::unique_ptr<Impl> impl_;
};

// Baseline: MPI_Alltoallv on MPI_BYTE, counts in bytes (a thin wrapper, for benchmarks and as the
// reference of the tests).
void alltoallv_bytes(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
                     const int* recvcounts, const int* rdispls, MPI_Comm comm);

// Baseline "AC" (all at once): post an Irecv for every nonzero receive count, an Isend for every
// nonzero send count, copy the self message, wait for all. Requests preallocated; no allocation in
// execute. max_outstanding caps requests in flight as in Options (0 = no cap).
class AllAtOnce {
 public:
  explicit AllAtOnce(MPI_Comm comm, int max_outstanding = 0);
  AllAtOnce(AllAtOnce&&) noexcept;
  AllAtOnce& operator=(AllAtOnce&&) noexcept;
  ~AllAtOnce();
  void execute(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
               const int* recvcounts, const int* rdispls);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace commfit::exec

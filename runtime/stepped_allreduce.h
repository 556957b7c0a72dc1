// An allreduce of a few 64-bit words taken one step at a time, over point-to-point messages, for the
// PMPI interposer's agreement (runtime/pmpi.cpp). Recursive doubling: with p2 the largest power of
// two <= p, ranks p2 .. p-1 first hand their words to rank r - p2, the first p2 ranks then exchange
// with rank r ^ 2^k for k = 0 .. log2(p2) - 1, and ranks r < p - p2 hand the result back to r + p2:
// log2(p2) steps, 2 more when p is not a power of two, each one message of kWords words each way at
// most. The fold must be commutative and associative (OR, XOR, max).
//
// Why not MPI_Iallreduce: an implementation may progress a nonblocking collective only inside MPI
// calls, or (SimGrid 3.32 SMPI) run it as p^2 messages. Here the caller takes one step at a time
// (`step`, once per intercepted call): it completes the step posted one call earlier, whose
// messages have long arrived when the ranks call at about the same pace, and posts the next. No
// MPI_Test: polling costs a simulated 100 us per call under SMPI's defaults, and a step waited
// for a call later needs none. Not installed; header-only so that the test
// (tests/mpi/test_stepped_allreduce.cpp) and the SMPI build see what the interposer runs.
#pragma once

// MPI's C API only.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdint>
#include <cstring>

namespace commfit::pmpi {

class SteppedAllreduce {
 public:
  static constexpr int kWords = 6;
  using Fold = void (*)(const std::uint64_t* in, std::uint64_t* inout);

  // `comm`: a communicator no one else sends point-to-point messages on with `tag`.
  SteppedAllreduce(MPI_Comm comm, int tag, Fold fold) : comm_(comm), tag_(tag), fold_(fold) {
    PMPI_Comm_rank(comm, &rank_);
    PMPI_Comm_size(comm, &size_);
    while (p2_ * 2 <= size_) p2_ *= 2, ++levels_;
    steps_ = levels_ + (p2_ < size_ ? 2 : 0);
  }
  SteppedAllreduce(const SteppedAllreduce&) = delete;
  SteppedAllreduce& operator=(const SteppedAllreduce&) = delete;
  ~SteppedAllreduce() { finish(); }

  // The number of steps: taking one per call, the result is there this many calls after start.
  int steps() const { return steps_; }
  bool active() const { return step_ >= 0; }

  // Starts the reduction of `mine` (kWords words); every rank starts it at the same point of its
  // sequence of operations on `comm`. Not while one is active.
  void start(const std::uint64_t* mine) {
    std::memcpy(acc_, mine, sizeof acc_);
    if (steps_ == 0) return;   // one rank: the result is its own
    step_ = 0;
    post();
  }

  // Completes the current step (waiting for its messages) and posts the next. True when the result
  // is there (result()); the reduction is then no longer active.
  bool step() {
    if (step_ < 0) return true;
    PMPI_Waitall(2, req_, MPI_STATUSES_IGNORE);
    if (receiving_ && replacing_) std::memcpy(acc_, in_, sizeof acc_);
    else if (receiving_) fold_(in_, acc_);
    if (++step_ < steps_) {
      post();
      return false;
    }
    step_ = -1;
    return true;
  }

  // Takes every step left: the result at once.
  void finish() {
    while (!step()) {
    }
  }

  const std::uint64_t* result() const { return acc_; }

 private:
  // This rank's messages of step `step_`: the partner it sends to and receives from (or none).
  void post() {
    int send_to = -1, recv_from = -1;
    const bool extra = p2_ < size_;
    const int level = step_ - (extra ? 1 : 0);
    if (extra && step_ == 0) {   // ranks p2 .. p-1 hand their words in
      if (rank_ >= p2_) send_to = rank_ - p2_;
      else if (rank_ < size_ - p2_) recv_from = rank_ + p2_;
    } else if (extra && step_ == steps_ - 1) {   // and get the result back
      if (rank_ >= p2_) recv_from = rank_ - p2_;
      else if (rank_ < size_ - p2_) send_to = rank_ + p2_;
    } else if (rank_ < p2_) {
      send_to = recv_from = rank_ ^ (1 << level);
    }
    receiving_ = recv_from >= 0;
    replacing_ = extra && step_ == steps_ - 1;   // the result handed back replaces this rank's words
    req_[0] = req_[1] = MPI_REQUEST_NULL;
    if (receiving_) PMPI_Irecv(in_, kWords, MPI_UINT64_T, recv_from, tag_, comm_, &req_[0]);
    if (send_to >= 0) {
      std::memcpy(out_, acc_, sizeof out_);
      PMPI_Isend(out_, kWords, MPI_UINT64_T, send_to, tag_, comm_, &req_[1]);
    }
  }

  MPI_Comm comm_;
  int tag_;
  Fold fold_;
  int rank_ = 0, size_ = 1, p2_ = 1, levels_ = 0, steps_ = 0;
  int step_ = -1;
  bool receiving_ = false, replacing_ = false;
  MPI_Request req_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::uint64_t acc_[kWords] = {}, in_[kWords] = {}, out_[kWords] = {};
};

}  // namespace commfit::pmpi

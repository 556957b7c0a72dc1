// What the SMPI drivers share (smpi_driver.cpp: commfit and the MPI baselines; smpi_mpi_advance.cpp:
// the MPI Advance peer): the exchange read from a commfit matrix, the byte pattern every method is
// checked against, and one measured run from an aligned start. Header-only: bench/smpi/build.sh
// and build_mpi_advance.sh compile each driver with smpicxx as one translation unit.
//
// A measured run (measure): the buffers are cleared, every rank waits to a common simulated
// instant (aligned_start), runs the method, and the last rank's finish minus that instant is
// printed as one CSV line `label,method,sim_s,check` (check = ok | WRONG | skipped; sim_s = -1
// when a rank reached the start late or the run outlasted kQuietTail).
#pragma once

#include "ir/matrix_io.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace commfit::smpi_bench {

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t a = 0;
  while (a <= s.size()) {
    const std::size_t b = std::min(s.find(sep, a), s.size());
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

// The k-th byte src sends to dst.
inline unsigned char pattern_byte(int src, int dst, std::int64_t k) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + k * 7 + (k >> 8));
}

// Sleeps (in simulated time) until `instant`.
inline void sleep_until(double instant) {
  const double wait = instant - MPI_Wtime();
  if (wait <= 0) return;
  timespec ts{static_cast<time_t>(wait), static_cast<long>((wait - static_cast<double>(static_cast<time_t>(wait))) * 1e9)};
  nanosleep(&ts, nullptr);
}

// Simulated seconds every rank waits after a timed run before the collective that gathers the
// finish times: that collective's messages would otherwise travel while the slowest ranks still
// receive, and under network/model:IB every active message into a node (even 16 bytes) divides
// the rate of every other flow into it (a rank-0 hot spot took 4.8x longer). Sleeping costs no
// wall time; a run longer than this is reported as such ("quiet tail too short").
constexpr double kQuietTail = 100.0;

// A barrier, then every rank sleeps to a common instant and returns it, with `late` set on a rank
// that got there after that instant (then the margin was too small).
inline double aligned_start(MPI_Comm comm, bool& late) {
  MPI_Barrier(comm);
  double now = MPI_Wtime(), latest = 0;
  MPI_Allreduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, comm);
  const double start = latest + 1e-2;   // the linear default collectives spread ranks by ~p * 0.5 us
  late = start < MPI_Wtime();
  sleep_until(start);
  return start;
}

// One rank's part of the exchange: counts and displacements like MPI_Alltoallv's (bytes), the
// buffers (send filled with the pattern), and on rank 0 the whole matrix (all_sc, row-major).
struct Exchange {
  int rank = 0, p = 0;
  std::vector<int> all_sc, sc, rc, sd, rd;
  std::int64_t stotal = 0, rtotal = 0;
  bool check = true;   // real buffers, every received byte checked; else SMPI's shared malloc
  unsigned char* sb = nullptr;
  unsigned char* rb = nullptr;

  Exchange() = default;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange() { release(); }

  // Frees the buffers (call before MPI_Finalize; the destructor only catches early exits).
  void release() {
    if (check) {
      delete[] sb;
      delete[] rb;
    } else {
      if (sb != nullptr) SMPI_SHARED_FREE(sb);
      if (rb != nullptr) SMPI_SHARED_FREE(rb);
    }
    sb = rb = nullptr;
  }

  // Whether every byte received in rb is the pattern's (this rank only).
  bool received_ok() const {
    for (int q = 0; q < p; ++q)
      for (int k = 0; k < rc[q]; ++k)
        if (rb[rd[q] + k] != pattern_byte(q, rank, k)) return false;
    return true;
  }
};

// Rank 0 reads the matrix and scatters each rank's row of send counts and column of receive
// counts (an MPI_Alltoall would be p^2 simulated messages: minutes of wall time at 1024 ranks).
// Buffers are real when all ranks' together hold at most check_limit bytes; above, SMPI's shared
// malloc (one page for all ranks: same timing, meaningless data). Returns 0, or the exit status
// (2) after a message on rank 0 when the matrix cannot be read or does not fit the job.
inline int load_exchange(const std::string& path, double check_limit, const char* who, Exchange& x) {
  MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &x.p);
  const int p = x.p;
  x.sc.assign(p, 0);
  x.rc.assign(p, 0);
  x.sd.assign(p, 0);
  x.rd.assign(p, 0);
  int status = 0;
  if (x.rank == 0) {
    try {
      const CommMatrix m = read_matrix(path).matrix;
      if (m.ranks != p) throw std::runtime_error("matrix has " + std::to_string(m.ranks) + " ranks, job has " + std::to_string(p));
      x.all_sc.assign(std::size_t(p) * p, 0);
      m.for_each([&](Rank i, Rank j, Bytes b) {
        if (b > (1u << 30)) throw std::runtime_error("message over 1 GiB");
        x.all_sc[std::size_t(i) * p + j] = static_cast<int>(b);
      });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s: %s\n", who, path.c_str(), e.what());
      status = 2;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status != 0) return status;
  std::vector<int> all_rc(x.all_sc.size());
  for (std::size_t i = 0; x.rank == 0 && i < std::size_t(p); ++i)
    for (std::size_t j = 0; j < std::size_t(p); ++j) all_rc[j * p + i] = x.all_sc[i * p + j];
  MPI_Scatter(x.all_sc.data(), p, MPI_INT, x.sc.data(), p, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatter(all_rc.data(), p, MPI_INT, x.rc.data(), p, MPI_INT, 0, MPI_COMM_WORLD);
  for (int q = 0; q < p; ++q) {
    x.sd[q] = static_cast<int>(x.stotal);
    x.rd[q] = static_cast<int>(x.rtotal);
    x.stotal += x.sc[q];
    x.rtotal += x.rc[q];
  }
  std::int64_t mine = x.stotal + x.rtotal, total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  x.check = static_cast<double>(total) <= check_limit;
  x.sb = x.check ? new unsigned char[std::size_t(x.stotal) + 1]
                 : static_cast<unsigned char*>(SMPI_SHARED_MALLOC(std::size_t(x.stotal) + 1));
  x.rb = x.check ? new unsigned char[std::size_t(x.rtotal) + 1]
                 : static_cast<unsigned char*>(SMPI_SHARED_MALLOC(std::size_t(x.rtotal) + 1));
  if (x.check)
    for (int q = 0; q < p; ++q)
      for (int k = 0; k < x.sc[q]; ++k) x.sb[x.sd[q] + k] = pattern_byte(x.rank, q, k);
  return 0;
}

// One measured run of `run` (see the top of this file); `clear` empties the method's receive
// buffer and `ok` says whether this rank received the right bytes (both only when x.check).
// Prints the CSV line on rank 0 and returns whether any rank received wrong data.
inline bool measure(const std::string& label, const std::string& name, const std::function<void()>& run,
                    const Exchange& x, const std::function<void()>& clear, const std::function<bool()>& ok) {
  if (x.check) clear();
  bool late = false;
  const double start = aligned_start(MPI_COMM_WORLD, late);
  run();
  double end[2] = {MPI_Wtime(), late ? 1.0 : 0.0}, last[2] = {0, 0};
  if (end[0] > start + kQuietTail) {
    std::fprintf(stderr, "%s ran longer than the quiet tail (%g s)\n", name.c_str(), kQuietTail);
    end[1] = 1.0;
  }
  sleep_until(start + kQuietTail);
  MPI_Reduce(end, last, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int bad = x.check && !ok() ? 1 : 0, wrong = 0;
  MPI_Allreduce(&bad, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (x.rank == 0) {
    std::printf("%s,%s,%.9g,%s\n", label.c_str(), name.c_str(), last[1] > 0 ? -1.0 : last[0] - start,
                !x.check ? "skipped" : wrong ? "WRONG" : "ok");
    std::fflush(stdout);
  }
  return wrong != 0;
}

// measure() on the exchange's own receive buffer.
inline bool measure(const std::string& label, const std::string& name, const std::function<void()>& run, const Exchange& x) {
  return measure(
      label, name, run, x, [&x] { std::memset(x.rb, 0, std::size_t(x.rtotal) + 1); }, [&x] { return x.received_ok(); });
}

}  // namespace commfit::smpi_bench

// Timing for the MPI benchmarks (bench_exec, bench_pmpi): the slowest rank's mean seconds per call
// over `iters` calls of `f`, after a barrier.
#pragma once

#include <mpi.h>

#include <functional>

namespace commfit::bench {

inline double time_block(const std::function<void()>& f, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int k = 0; k < iters; ++k) f();
  double t = (MPI_Wtime() - t0) / iters, tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

}  // namespace commfit::bench

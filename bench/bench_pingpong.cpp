// bench_pingpong: MPI latency and bandwidth between two ranks, for the shared-memory numbers the
// SMPI platforms with several ranks per host use (bench/smpi/platforms.py, docs/PERFORMANCE.md
// "Several ranks per node"). Half the round-trip time of MPI_Send/MPI_Recv ping-pongs, the minimum
// over blocks, per message size.
//
//   mpirun -np 2 bench_pingpong [--blocks 9]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, blocks = 9;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int k = 1; k < argc; ++k)
    if (!std::strcmp(argv[k], "--blocks") && k + 1 < argc) blocks = std::max(1, std::atoi(argv[++k]));
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_pingpong: run it on 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) std::printf("%10s %12s %12s\n", "bytes", "one-way us", "GB/s");
  for (int bytes : {8, 1024, 65536, 1 << 20, 1 << 24}) {
    std::vector<char> buf(static_cast<std::size_t>(bytes), 1);
    const int iters = std::clamp((1 << 26) / std::max(bytes, 4096), 10, 20000);
    double best = 1e30;
    for (int b = 0; b < blocks; ++b) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t = MPI_Wtime();
      for (int k = 0; k < iters; ++k) {
        if (rank == 0) {
          MPI_Send(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
      }
      best = std::min(best, (MPI_Wtime() - t) / (2.0 * iters));
    }
    if (rank == 0) std::printf("%10d %12.3f %12.2f\n", bytes, 1e6 * best, bytes / best / 1e9);
  }
  MPI_Finalize();
  return 0;
}

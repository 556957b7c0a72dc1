// A program built against the installed commfit package (examples/consumer/CMakeLists.txt, or
// pkg-config commfit-exec). It exchanges an irregular pattern, known by formula on every rank:
//
//   consumer --write-matrix m.json        (one process) write the pattern for np ranks as a
//                                         commfit matrix file, for `commfit plan m.json -o m.plan`
//   mpirun -np NP consumer m.plan         load the plan, execute it 10 times, and check every
//                                         received byte against the formula and MPI_Alltoallv
//
//   mpirun -np NP consumer_in_job "strategy=auto"   (the same source built with
//                                         COMMFIT_CONSUMER_IN_JOB against commfit::runtime) plan the
//                                         pattern inside the job, then execute and check as above
//
// Exit status 0 only when every byte on every rank is right.
#include <commfit/commfit_exec.hpp>
#ifdef COMMFIT_CONSUMER_IN_JOB
#include <commfit/runtime/in_job.hpp>
#endif

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Bytes rank s sends to rank d out of np: irregular, some pairs silent, the self message kept.
int count(int s, int d) {
  if ((s * 7 + d * 3) % 5 == 0 && s != d) return 0;
  return 1 + (s * 131 + d * 29) % 997;
}

unsigned char byte(int s, int d, int k, int iter) { return static_cast<unsigned char>(s * 37 + d * 11 + k * 3 + iter); }

int write_matrix(const char* path, int np) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) return 1;
  std::fprintf(f, "{\"format\": \"commfit-matrix\", \"version\": 1, \"ranks\": %d, \"messages\": [", np);
  const char* sep = "";
  for (int s = 0; s < np; ++s)
    for (int d = 0; d < np; ++d)
      if (count(s, d) > 0) {
        std::fprintf(f, "%s[%d, %d, %d]", sep, s, d, count(s, d));
        sep = ", ";
      }
  std::fprintf(f, "]}\n");
  return std::fclose(f) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-matrix") == 0) return write_matrix(argv[2], std::stoi(argv[3]));
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer --write-matrix FILE NP | mpirun -np NP consumer PLAN | mpirun -np NP consumer_in_job OPTIONS\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  std::vector<int> sc(np), sd(np), rc(np), rd(np);
  int stotal = 0, rtotal = 0;
  for (int q = 0; q < np; ++q) {
    sc[q] = count(rank, q);
    sd[q] = stotal;
    stotal += sc[q];
    rc[q] = count(q, rank);
    rd[q] = rtotal;
    rtotal += rc[q];
  }
  long wrong = 0;
  try {
#ifdef COMMFIT_CONSUMER_IN_JOB
    // argv[1]: the planner's options ("strategy=auto topology=torus:2x2"), as `commfit plan` takes them.
    auto ex = commfit::runtime::plan(MPI_COMM_WORLD, sc.data(), rc.data(), commfit::runtime::parse_in_job_options(argv[1]));
#else
    auto ex = commfit::exec::Executor::load(argv[1], MPI_COMM_WORLD);
#endif
    std::vector<unsigned char> send(stotal), recv(rtotal), ref(rtotal);
    for (int iter = 0; iter < 10; ++iter) {
      for (int q = 0; q < np; ++q)
        for (int k = 0; k < sc[q]; ++k) send[sd[q] + k] = byte(rank, q, k, iter);
      std::memset(recv.data(), 0xEE, recv.size());
      ex.execute(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data());
      for (int q = 0; q < np; ++q)
        for (int k = 0; k < rc[q]; ++k) wrong += recv[rd[q] + k] != byte(q, rank, k, iter);
    }
    commfit::exec::alltoallv_bytes(send.data(), sc.data(), sd.data(), ref.data(), rc.data(), rd.data(), MPI_COMM_WORLD);
    if (std::memcmp(ref.data(), recv.data(), recv.size()) != 0) ++wrong;
    long all = 0;
    MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("consumer: %d ranks, %u phases, 10 exchanges, %ld wrong bytes\n", np, ex.stats().phases, all);
    wrong = all;
  } catch (const commfit::exec::Error& e) {
    if (rank == 0) std::fprintf(stderr, "consumer: %s\n", e.what());
    wrong = 1;
  }
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}

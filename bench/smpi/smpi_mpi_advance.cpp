// SMPI driver of the MPI Advance peer (mpi-advance/locality_aware; docs/SMPI.md "MPI Advance as
// a peer"). Built with smpicxx against a checkout of that library by bench/smpi/build_mpi_advance.sh;
// none of its code is in this repository. Same matrix, aligned start, byte check and CSV lines as
// smpi_driver (bench/smpi/smpi_bench.h), so run.py merges the rows.
//
//   smpirun ... smpi_mpi_advance --matrix M.json [--methods M,...] [--label TEXT] [--check-limit BYTES]
//
// Methods (the default: every one; the alltoall ones only when the matrix is a uniform all-to-all):
//   alltoallv/ALG    MPIL_Alltoallv with ALG = pairwise, nonblocking, batch, batch_async (none is
//                    locality-aware: the library's node-aware methods exist for MPIL_Alltoall only)
//   neighbor/standard, neighbor/locality
//                    the persistent neighbour alltoallv on the matrix's nonzero entries, in
//                    elements of the message sizes' greatest common divisor (see `unit`):
//                    MPIL_Topo_init + MPIL_Neighbor_alltoallv_init_topo (set up once, untimed),
//                    then MPIL_Start + MPIL_Wait; locality = the library's three-step node-aware
//                    aggregation (NEIGHBOR_ALLTOALLV_INIT_LOCALITY)
//   alltoall/ALG     MPIL_Alltoall (ALG = pairwise, nonblocking, hierarchical_pairwise, ...,
//                    node_aware_nonblocking, locality_aware_pairwise, ...; see kAlltoall), on p
//                    blocks of the uniform message size, the rank's own block included
//
// Every method runs once untimed first (as smpi_driver runs commfit's executor: MPI Advance sets
// up its node communicators on first use), then once measured. Prints label,method,sim_s,check
// per method; exit status 1 when any method delivered wrong data.
#include "bench/smpi/smpi_bench.h"

#include <locality_aware.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace commfit::smpi_bench;

const std::pair<const char*, AlltoallvMethod> kAlltoallv[] = {
    {"pairwise", ALLTOALLV_PAIRWISE},
    {"nonblocking", ALLTOALLV_NONBLOCKING},
    {"batch", ALLTOALLV_BATCH},
    {"batch_async", ALLTOALLV_BATCH_ASYNC},
};

const std::pair<const char*, NeighborAlltoallvInitMethod> kNeighbor[] = {
    {"standard", NEIGHBOR_ALLTOALLV_INIT_STANDARD},
    {"locality", NEIGHBOR_ALLTOALLV_INIT_LOCALITY},
};

const std::pair<const char*, AlltoallMethod> kAlltoall[] = {
    {"pairwise", ALLTOALL_PAIRWISE},
    {"nonblocking", ALLTOALL_NONBLOCKING},
    {"hierarchical_pairwise", ALLTOALL_HIERARCHICAL_PAIRWISE},
    {"hierarchical_nonblocking", ALLTOALL_HIERARCHICAL_NONBLOCKING},
    {"multileader_pairwise", ALLTOALL_MULTILEADER_PAIRWISE},
    {"multileader_nonblocking", ALLTOALL_MULTILEADER_NONBLOCKING},
    {"node_aware_pairwise", ALLTOALL_NODE_AWARE_PAIRWISE},
    {"node_aware_nonblocking", ALLTOALL_NODE_AWARE_NONBLOCKING},
    {"locality_aware_pairwise", ALLTOALL_LOCALITY_AWARE_PAIRWISE},
    {"locality_aware_nonblocking", ALLTOALL_LOCALITY_AWARE_NONBLOCKING},
    {"multileader_locality_pairwise", ALLTOALL_MULTILEADER_LOCALITY_PAIRWISE},
    {"multileader_locality_nonblocking", ALLTOALL_MULTILEADER_LOCALITY_NONBLOCKING},
};

std::vector<std::string> all_methods() {
  std::vector<std::string> out;
  for (const auto& [n, m] : kAlltoallv) out.push_back(std::string("alltoallv/") + n);
  for (const auto& [n, m] : kNeighbor) out.push_back(std::string("neighbor/") + n);
  for (const auto& [n, m] : kAlltoall) out.push_back(std::string("alltoall/") + n);
  return out;
}

template <class Table>
const auto* find(const Table& table, const std::string& name) {
  for (const auto& e : table)
    if (name == e.first) return &e;
  return static_cast<decltype(&table[0])>(nullptr);
}

// The message size when every rank sends the same number of bytes to every other rank and none to
// itself (a uniform all-to-all, MPIL_Alltoall's input), else 0. Decided on rank 0, broadcast.
int uniform_block(const Exchange& x) {
  int block = 0;
  if (x.rank == 0 && x.p > 1) {
    block = x.all_sc[1];
    for (int i = 0; i < x.p && block > 0; ++i)
      for (int j = 0; j < x.p; ++j)
        if (x.all_sc[std::size_t(i) * x.p + j] != (i == j ? 0 : block)) {
          block = 0;
          break;
        }
  }
  MPI_Bcast(&block, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return block;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string matrix, label = "run";
  std::vector<std::string> methods = all_methods();
  double check_limit = 2e9;
  for (int k = 1; k < argc; ++k) {
    const std::string s = argv[k];
    auto next = [&]() -> std::string { return k + 1 < argc ? argv[++k] : ""; };
    if (s == "--matrix") matrix = next();
    else if (s == "--methods") methods = split(next(), ',');
    else if (s == "--label") label = next();
    else if (s == "--check-limit") check_limit = std::atof(next().c_str());
    else {
      if (rank == 0) std::fprintf(stderr, "smpi_mpi_advance: unknown argument %s\n", s.c_str());
      MPI_Finalize();
      return 2;
    }
  }
  Exchange x;
  if (const int status = load_exchange(matrix, check_limit, "smpi_mpi_advance", x); status != 0) {
    MPI_Finalize();
    return status;
  }
  const int p = x.p;

  MPIL_Comm* comm = nullptr;
  MPIL_Comm_init(&comm, MPI_COMM_WORLD);
  MPIL_Info* info = nullptr;
  MPIL_Info_init(&info);

  // The neighbour alltoallv's element: `unit` contiguous bytes, the greatest common divisor of the
  // message sizes. Its locality-aware set-up gives every element a global index and exchanges,
  // sorts and matches them: with MPI_BYTE elements that is 8 bytes of index per byte sent (at 256
  // KiB messages, minutes of wall time per run; on dense 256 B at 8 x 16, a SimGrid abort). The
  // bytes moved and the buffers are the same.
  int unit = 0;
  for (const int b : x.all_sc)
    if (b > 0) unit = std::gcd(unit, b);
  MPI_Bcast(&unit, 1, MPI_INT, 0, MPI_COMM_WORLD);
  unit = std::max(unit, 1);
  MPI_Datatype element = MPI_BYTE;
  MPI_Type_contiguous(unit, MPI_BYTE, &element);
  MPI_Type_commit(&element);
  // The neighbour lists: the nonzero entries (self included when nonzero), in elements, with
  // displacements into the exchange's buffers, so the same check applies.
  std::vector<int> src, src_count, src_displ, dst, dst_count, dst_displ;
  for (int q = 0; q < p; ++q) {
    if (x.rc[q] > 0) {
      src.push_back(q);
      src_count.push_back(x.rc[q] / unit);
      src_displ.push_back(x.rd[q] / unit);
    }
    if (x.sc[q] > 0) {
      dst.push_back(q);
      dst_count.push_back(x.sc[q] / unit);
      dst_displ.push_back(x.sd[q] / unit);
    }
  }
  MPIL_Topo* topo = nullptr;
  MPIL_Topo_init(static_cast<int>(src.size()), src.data(), MPI_UNWEIGHTED, static_cast<int>(dst.size()), dst.data(),
                 MPI_UNWEIGHTED, info, &topo);

  // MPIL_Alltoall's buffers: p blocks each way, the rank's own block included.
  const int block = uniform_block(x);
  std::vector<unsigned char> a2a_send, a2a_recv;
  if (block > 0 && x.check) {
    a2a_send.resize(std::size_t(p) * block);
    a2a_recv.resize(std::size_t(p) * block);
    for (int q = 0; q < p; ++q)
      for (int k = 0; k < block; ++k) a2a_send[std::size_t(q) * block + k] = pattern_byte(rank, q, k);
  }
  unsigned char* a2a_sb = nullptr;
  unsigned char* a2a_rb = nullptr;
  if (block > 0) {
    a2a_sb = x.check ? a2a_send.data() : static_cast<unsigned char*>(SMPI_SHARED_MALLOC(std::size_t(p) * block));
    a2a_rb = x.check ? a2a_recv.data() : static_cast<unsigned char*>(SMPI_SHARED_MALLOC(std::size_t(p) * block));
  }

  int any_wrong = 0;
  bool skipped_alltoall = false;
  std::vector<MPIL_Request*> requests;
  for (const std::string& name : methods) {
    const auto slash = name.find('/');
    const std::string family = name.substr(0, slash), alg = slash == std::string::npos ? "" : name.substr(slash + 1);
    std::function<void()> run;
    if (const auto* e = family == "alltoallv" ? find(kAlltoallv, alg) : nullptr) {
      const AlltoallvMethod m = e->second;
      run = [&, m] {
        MPIL_Set_alltoallv_algorithm(m);
        MPIL_Alltoallv(x.sb, x.sc.data(), x.sd.data(), MPI_BYTE, x.rb, x.rc.data(), x.rd.data(), MPI_BYTE, comm);
      };
    } else if (const auto* n = family == "neighbor" ? find(kNeighbor, alg) : nullptr) {
      MPIL_Set_alltoallv_neighbor_init_alogorithm(n->second);
      MPIL_Request* request = nullptr;
      MPIL_Neighbor_alltoallv_init_topo(x.sb, dst_count.data(), dst_displ.data(), element, x.rb, src_count.data(),
                                        src_displ.data(), element, topo, comm, info, &request);
      requests.push_back(request);
      run = [request] {
        MPIL_Start(request);
        MPIL_Wait(request, MPI_STATUS_IGNORE);
      };
    } else if (const auto* t = family == "alltoall" ? find(kAlltoall, alg) : nullptr) {
      if (block == 0) {
        if (rank == 0 && !skipped_alltoall)
          std::fprintf(stderr, "smpi_mpi_advance: %s is not a uniform all-to-all: MPIL_Alltoall methods skipped\n",
                       matrix.c_str());
        skipped_alltoall = true;
        continue;
      }
      const AlltoallMethod m = t->second;
      run = [&, m] {
        MPIL_Set_alltoall_algorithm(m);
        MPIL_Alltoall(a2a_sb, block, MPI_BYTE, a2a_rb, block, MPI_BYTE, comm);
      };
      run();   // untimed first call
      any_wrong |= measure(
          label, "mpia:" + name, run, x, [&] { std::memset(a2a_rb, 0, std::size_t(p) * block); },
          [&] {
            for (int q = 0; q < p; ++q)
              for (int k = 0; k < block; ++k)
                if (a2a_rb[std::size_t(q) * block + k] != pattern_byte(q, rank, k)) return false;
            return true;
          });
      continue;
    } else {
      if (rank == 0) std::fprintf(stderr, "smpi_mpi_advance: unknown method %s\n", name.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    run();   // untimed first call
    any_wrong |= measure(label, "mpia:" + name, run, x);
  }

  for (MPIL_Request* r : requests) MPIL_Request_free(&r);
  MPIL_Topo_free(&topo);
  MPIL_Info_free(&info);
  MPIL_Comm_free(&comm);
  MPI_Type_free(&element);
  if (block > 0 && !x.check) {
    SMPI_SHARED_FREE(a2a_sb);
    SMPI_SHARED_FREE(a2a_rb);
  }
  x.release();
  MPI_Finalize();
  return any_wrong ? 1 : 0;
}

// The baselines of the benchmarks, also usable as fallbacks: MPI_Alltoallv itself, and AC (post
// every receive, then every send, of the nonzero entries only; wait for all).
#include "backends/exec/commfit_exec.hpp"

#include <cstring>
#include <vector>

namespace commfit::exec {

void alltoallv_bytes(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
                     const int* recvcounts, const int* rdispls, MPI_Comm comm) {
  MPI_Alltoallv(sendbuf, sendcounts, sdispls, MPI_BYTE, recvbuf, recvcounts, rdispls, MPI_BYTE, comm);
}

struct AllAtOnce::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 0, cap = 0;
  std::vector<MPI_Request> requests;
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

AllAtOnce::AllAtOnce(MPI_Comm comm, int max_outstanding) : impl_(std::make_unique<Impl>()) {
  if (max_outstanding < 0 || max_outstanding == 1)
    throw Error(Error::Kind::usage, -1, "max_outstanding must be 0 (no cap) or at least 2");
  MPI_Comm_dup(comm, &impl_->comm);
  MPI_Comm_rank(impl_->comm, &impl_->rank);
  MPI_Comm_size(impl_->comm, &impl_->size);
  impl_->cap = max_outstanding;
  impl_->requests.assign(max_outstanding > 0 ? std::size_t(max_outstanding) : 2 * std::size_t(impl_->size),
                         MPI_REQUEST_NULL);
}

AllAtOnce::AllAtOnce(AllAtOnce&&) noexcept = default;
AllAtOnce& AllAtOnce::operator=(AllAtOnce&&) noexcept = default;
AllAtOnce::~AllAtOnce() = default;

void AllAtOnce::execute(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
                        const int* recvcounts, const int* rdispls) {
  Impl& x = *impl_;
  const char* sb = static_cast<const char*>(sendbuf);
  char* rb = static_cast<char*>(recvbuf);
  MPI_Request* req = x.requests.data();
  if (sendcounts[x.rank] > 0) std::memcpy(rb + rdispls[x.rank], sb + sdispls[x.rank], std::size_t(sendcounts[x.rank]));
  if (x.cap == 0) {
    int n = 0;
    for (int q = 0; q < x.size; ++q)
      if (q != x.rank && recvcounts[q] > 0)
        MPI_Irecv(rb + rdispls[q], recvcounts[q], MPI_BYTE, q, 0, x.comm, &req[n++]);
    for (int q = 0; q < x.size; ++q)
      if (q != x.rank && sendcounts[q] > 0)
        MPI_Isend(sb + sdispls[q], sendcounts[q], MPI_BYTE, q, 0, x.comm, &req[n++]);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    return;
  }
  // Capped: one global order of transfers (rank pair, then the lower rank's send first), so the
  // smallest unfinished transfer is always posted on both sides.
  int posted = 0;
  auto post = [&](bool send, int q) {
    int slot = posted;
    if (posted < x.cap) ++posted;
    else MPI_Waitany(x.cap, req, &slot, MPI_STATUS_IGNORE);
    if (send) MPI_Isend(sb + sdispls[q], sendcounts[q], MPI_BYTE, q, 0, x.comm, &req[slot]);
    else MPI_Irecv(rb + rdispls[q], recvcounts[q], MPI_BYTE, q, 0, x.comm, &req[slot]);
  };
  for (int q = 0; q < x.size; ++q) {
    if (q == x.rank) continue;
    const bool lower_sends_first = q > x.rank;   // pair (min, max): min's send is first
    if (lower_sends_first) {
      if (sendcounts[q] > 0) post(true, q);
      if (recvcounts[q] > 0) post(false, q);
    } else {
      if (recvcounts[q] > 0) post(false, q);
      if (sendcounts[q] > 0) post(true, q);
    }
  }
  MPI_Waitall(posted, req, MPI_STATUSES_IGNORE);
}

}  // namespace commfit::exec

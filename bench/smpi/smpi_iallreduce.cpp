// For the SMPI builds of the executor (bench/smpi/build_pmpi.sh): SMPI 3.32's MPI_Iallreduce is a
// linear exchange (p^2 simulated messages: many minutes of wall time at 1024 ranks). The executor's
// one count-check collective (a plan's first replay under CountCheck::first_call) is compiled to
// call this instead: a blocking MPI_Allreduce at the same point of every rank, then an
// already-complete request. Same result, same matching.
#include <mpi.h>

extern "C" int commfit_smpi_iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                       MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  return MPI_Allreduce(send, recv, count, type, op, comm);
}

// Collective error agreement: a problem found on any rank is raised on every rank, with the
// message of the lowest rank that found one. Costs one MPI_Allreduce when nothing is wrong; the
// message travels by MPI_Bcast only on the error path.
#include "backends/exec/executor_impl.h"

#include <climits>

namespace commfit::exec {

int first_failing_rank(MPI_Comm comm, bool failed) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int mine = failed ? rank : INT_MAX, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  return first == INT_MAX ? -1 : first;
}

void raise_agreed(MPI_Comm comm, int first, Error::Kind kind, const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int head[2] = {static_cast<int>(kind), static_cast<int>(message.size())};
  MPI_Bcast(head, 2, MPI_INT, first, comm);
  std::string text = rank == first ? message : std::string(static_cast<std::size_t>(head[1]), '\0');
  MPI_Bcast(text.data(), head[1], MPI_CHAR, first, comm);
  throw Error(static_cast<Error::Kind>(head[0]), first, "rank " + std::to_string(first) + ": " + text);
}

void agree(MPI_Comm comm, Error::Kind kind, const std::string& local_error) {
  const int first = first_failing_rank(comm, !local_error.empty());
  if (first >= 0) raise_agreed(comm, first, kind, local_error);
}

}  // namespace commfit::exec

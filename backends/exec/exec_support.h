// What the executor offers the layers above it (runtime/: in-job planning, adaptation, the PMPI
// interposer) beyond its public API (commfit_exec.hpp): the collective error agreement every
// collective entry point uses, the datatype check, and reading one rank's plan from disk. Built
// into commfit_exec; not installed.
#pragma once

#include "backends/exec/commfit_exec.hpp"
#include "ir/error.h"
#include "ir/plan.h"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>

namespace commfit::exec {

// The datatype variant needs contiguous types: size == extent, lower bounds 0 (true ones too).
// The PMPI interposer asks the same before it hands a call to an executor.
bool contiguous(MPI_Datatype t, int* size);

// Collective: the lowest rank whose `failed` is true, or -1 when none (one MPI_Allreduce).
int first_failing_rank(MPI_Comm comm, bool failed);
// Collective, after first_failing_rank returned `first` >= 0: every rank throws Error carrying
// rank `first`'s kind and message.
[[noreturn]] void raise_agreed(MPI_Comm comm, int first, Error::Kind kind, const std::string& message);
// Both: throws on every rank when any rank's `local_error` is non-empty.
void agree(MPI_Comm comm, Error::Kind kind, const std::string& local_error);

// A plan on disk, as Executor::load and Migration::load read it: this rank's schedule from the
// directory or binary file at `path` (`origin` becomes the file read, for messages), and the
// content hash the plan was written with (0: none).
RankSchedule read_plan_rank(const std::string& path, int rank, int size, std::string& origin);
// The file rank `rank`'s schedule is read from: its rank file in a plan directory, else `path`.
std::string plan_rank_origin(const std::string& path, int rank, int size);
std::uint64_t read_stored_plan_hash(const std::string& path);
// Collective: rank 0 calls `stored` (the plan's recorded hash; none when empty or 0), every rank
// adds its schedule's term (one MPI_Allreduce), and all throw the same Error when the sum differs.
void check_plan_hash(MPI_Comm comm, int rank, std::uint64_t rank_hash, const std::string& plan_path,
                     const std::function<std::uint64_t()>& stored);

}  // namespace commfit::exec

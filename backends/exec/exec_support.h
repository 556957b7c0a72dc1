// What the executor offers the layers above it (runtime/: in-job planning, adaptation, patterns,
// the PMPI interposer) beyond its public API (commfit_exec.hpp): the collective error agreement
// every collective entry point uses, the datatype check, reading one rank's plan from disk, and
// the C API's handle and status codes for the runtime's own C entry points (commfit_exec_plan,
// commfit_pattern_from_ids). Built into commfit_exec; not installed. A layer above includes this
// header and commfit_exec.{h,hpp}, nothing else of backends/exec/.
#pragma once

#include "backends/exec/commfit_exec.h"
#include "backends/exec/commfit_exec.hpp"
#include "ir/error.h"
#include "ir/plan.h"

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <new>
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

// The C API's handle (an executor behind an opaque pointer), the per-thread error message and the
// wrapper that turns exceptions into status codes: backends/exec/c_api.cpp's, and the runtime's C
// entry points', which return executors made above the executor.
struct commfit_exec_s {
  commfit::exec::Executor executor;
};

namespace commfit::exec::c_api {

inline thread_local std::string last_error;

inline int fail(int code, const std::string& message) {
  last_error = message;
  return code;
}

template <class F>
int guarded(F&& f) {
  using commfit::exec::Error;
  try {
    f();
    last_error.clear();
    return COMMFIT_EXEC_SUCCESS;
  } catch (const Error& e) {
    switch (e.kind()) {
      case Error::Kind::plan: return fail(COMMFIT_EXEC_ERR_PLAN, e.what());
      case Error::Kind::counts: return fail(COMMFIT_EXEC_ERR_COUNTS, e.what());
      case Error::Kind::usage: return fail(COMMFIT_EXEC_ERR_USAGE, e.what());
    }
    return fail(COMMFIT_EXEC_ERR_INTERNAL, e.what());
  } catch (const std::bad_alloc&) {
    return fail(COMMFIT_EXEC_ERR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(COMMFIT_EXEC_ERR_INTERNAL, e.what());
  }
}

inline commfit::exec::Options to_options(const commfit_exec_options* o) {
  commfit::exec::Options x;
  if (!o) return x;
  // An unknown protocol number passes through: load rejects it on every rank.
  x.protocol = static_cast<commfit::exec::Protocol>(o->protocol);
  x.barrier = o->barrier != 0;
  x.pairwise = o->pairwise != 0;
  x.max_outstanding = o->max_outstanding;
  x.count_check = o->count_check == COMMFIT_EXEC_CHECK_FIRST_CALL ? commfit::exec::CountCheck::first_call
                  : o->count_check == COMMFIT_EXEC_CHECK_NONE      ? commfit::exec::CountCheck::none
                                                                   : commfit::exec::CountCheck::every_call;
  x.check_consistency = o->check_consistency != 0;
  x.persistent = o->persistent != 0;
  x.coalesce = o->coalesce;
  // Out of range (also negative) values reach load's option check, which rejects them everywhere.
  x.max_message = o->max_message < 0 ? 0 : static_cast<std::uint64_t>(o->max_message);
  return x;
}

}  // namespace commfit::exec::c_api

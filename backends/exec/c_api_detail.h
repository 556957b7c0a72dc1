// Internals of the C API shared with the runtime's C bindings (runtime/c_api_plan.cpp): the handle,
// the per-thread error message, and the wrapper that turns exceptions into status codes.
#pragma once

#include "backends/exec/commfit_exec.h"

#include "backends/exec/commfit_exec.hpp"

#include <exception>
#include <new>
#include <string>

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

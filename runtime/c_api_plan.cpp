// The C and Fortran bindings of in-job planning (commfit_exec.h: commfit_exec_plan): the options
// string parsed as runtime/in_job.hpp's parse_in_job_options, the counts scaled to bytes.
#include "backends/exec/exec_support.h"
#include "ir/error.h"
#include "runtime/in_job.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace commfit::exec::c_api;

extern "C" {

int commfit_exec_plan(MPI_Comm comm, const int* sendcounts, const int* recvcounts, int elem_size, const char* plan_options,
                      const commfit_exec_options* options, commfit_exec_t* out) {
  // A problem with this rank's own arguments is not returned at once: the other ranks are already
  // in (or on their way to) the collective, so it travels through plan_in_job's agreement and
  // every rank returns the same error.
  std::string error;
  if (!out) error = "commfit_exec_plan: out is NULL";
  else *out = nullptr;
  if (error.empty() && (!sendcounts || !recvcounts)) error = "commfit_exec_plan: the counts are NULL";
  if (error.empty() && elem_size < 1) error = "commfit_exec_plan: elem_size must be at least 1";
  commfit::runtime::InJobOptions o;
  try {
    o = commfit::runtime::parse_in_job_options(plan_options ? plan_options : "");
  } catch (const std::exception& e) {
    if (error.empty()) error = std::string("commfit_exec_plan: ") + e.what();
  }
  o.exec = to_options(options);
  return guarded([&] {
    int size = 0;
    MPI_Comm_size(comm, &size);
    std::vector<std::int64_t> s, r;
    if (error.empty()) {
      s.resize(static_cast<std::size_t>(size)), r.resize(s.size());
      for (int j = 0; j < size; ++j) s[j] = std::int64_t{sendcounts[j]} * elem_size, r[j] = std::int64_t{recvcounts[j]} * elem_size;
    }
    commfit::exec::Executor ex = commfit::runtime::plan_in_job(comm, s.data(), r.data(), o, nullptr, error, elem_size);
    *out = new commfit_exec_s{std::move(ex)};
  });
}

int commfit_exec_plan_f(MPI_Fint comm, const int* sendcounts, const int* recvcounts, int elem_size, const char* plan_options,
                        const commfit_exec_options* options, commfit_exec_t* out) {
  return commfit_exec_plan(MPI_Comm_f2c(comm), sendcounts, recvcounts, elem_size, plan_options, options, out);
}

}  // extern "C"

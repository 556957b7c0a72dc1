// The C API: a thin layer over the C++ Executor that turns exceptions into status codes and a
// per-thread error message.
#include "backends/exec/exec_support.h"

using namespace commfit::exec::c_api;

extern "C" {

void commfit_exec_default_options(commfit_exec_options* options) {
  if (!options) return;
  const commfit::exec::Options x;
  options->protocol = COMMFIT_EXEC_POST_ALL;
  options->barrier = x.barrier;
  options->pairwise = x.pairwise;
  options->max_outstanding = x.max_outstanding;
  options->count_check = COMMFIT_EXEC_CHECK_EVERY_CALL;
  options->check_consistency = x.check_consistency;
  options->max_message = static_cast<long long>(x.max_message);
  options->persistent = x.persistent;
  options->coalesce = x.coalesce;
}

int commfit_exec_load(const char* path, MPI_Comm comm, const commfit_exec_options* options,
                      commfit_exec_t* out) {
  if (!out) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_exec_load: out is NULL");
  *out = nullptr;
  if (!path) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_exec_load: path is NULL");
  return guarded([&] {
    *out = new commfit_exec_s{commfit::exec::Executor::load(path, comm, to_options(options))};
  });
}

int commfit_exec_execute(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                         const int* sdispls, void* recvbuf, const int* recvcounts,
                         const int* rdispls) {
  if (!ex) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_exec_execute: the executor is NULL");
  return guarded([&] { ex->executor.execute(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls); });
}

int commfit_exec_execute_typed(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                               const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                               const int* recvcounts, const int* rdispls, MPI_Datatype recvtype) {
  if (!ex) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_exec_execute_typed: the executor is NULL");
  return guarded([&] {
    ex->executor.execute(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}

int commfit_exec_start(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                       const int* sdispls, void* recvbuf, const int* recvcounts, const int* rdispls) {
  if (!ex) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_exec_start: the executor is NULL");
  return guarded([&] { ex->executor.start(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls); });
}

int commfit_exec_start_typed(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                             const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                             const int* recvcounts, const int* rdispls, MPI_Datatype recvtype) {
  if (!ex) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_exec_start_typed: the executor is NULL");
  return guarded([&] { ex->executor.start(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype); });
}

int commfit_exec_finish(commfit_exec_t ex) {
  if (!ex) return fail(COMMFIT_EXEC_ERR_USAGE, "commfit_exec_finish: the executor is NULL");
  return guarded([&] { ex->executor.finish(); });
}

int commfit_exec_free(commfit_exec_t* ex) {
  if (!ex) return COMMFIT_EXEC_SUCCESS;
  delete *ex;
  *ex = nullptr;
  return COMMFIT_EXEC_SUCCESS;
}

const char* commfit_exec_last_error(void) { return last_error.c_str(); }

int commfit_exec_load_f(const char* path, MPI_Fint comm, const commfit_exec_options* options,
                        commfit_exec_t* out) {
  return commfit_exec_load(path, MPI_Comm_f2c(comm), options, out);
}

int commfit_exec_execute_typed_f(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                                 const int* sdispls, MPI_Fint sendtype, void* recvbuf,
                                 const int* recvcounts, const int* rdispls, MPI_Fint recvtype) {
  return commfit_exec_execute_typed(ex, sendbuf, sendcounts, sdispls, MPI_Type_f2c(sendtype), recvbuf,
                                    recvcounts, rdispls, MPI_Type_f2c(recvtype));
}

int commfit_exec_start_typed_f(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                               const int* sdispls, MPI_Fint sendtype, void* recvbuf,
                               const int* recvcounts, const int* rdispls, MPI_Fint recvtype) {
  return commfit_exec_start_typed(ex, sendbuf, sendcounts, sdispls, MPI_Type_f2c(sendtype), recvbuf,
                                  recvcounts, rdispls, MPI_Type_f2c(recvtype));
}

}  // extern "C"

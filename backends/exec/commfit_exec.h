/* commfit executor, C API (docs/EXECUTOR.md). For C, and for Fortran through ISO_C_BINDING (the
 * *_f functions take Fortran MPI handles; backends/exec/commfit_exec.f90 is the module).
 *
 *   commfit_exec_t ex;
 *   if (commfit_exec_load("halo.plan", MPI_COMM_WORLD, NULL, &ex) != COMMFIT_EXEC_SUCCESS)
 *     fprintf(stderr, "%s\n", commfit_exec_last_error());
 *   commfit_exec_execute(ex, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls);
 *   commfit_exec_free(&ex);
 *
 * Every function except commfit_exec_last_error and commfit_exec_default_options is collective
 * over the executor's communicator; an error is returned on every rank, with the same message.
 * (Only a NULL handle, path or out pointer is reported on the calling rank alone.) */
#ifndef COMMFIT_EXEC_H
#define COMMFIT_EXEC_H

/* MPI's C API only, also when included from C++ (see commfit_exec.hpp). */
#if defined(__cplusplus) && !defined(OMPI_SKIP_MPICXX)
#define OMPI_SKIP_MPICXX 1
#endif
#if defined(__cplusplus) && !defined(MPICH_SKIP_MPICXX)
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct commfit_exec_s* commfit_exec_t;

enum {
  COMMFIT_EXEC_SUCCESS = 0,
  COMMFIT_EXEC_ERR_PLAN = 1,     /* plan missing, unreadable, corrupted, for another p, mixed across ranks */
  COMMFIT_EXEC_ERR_COUNTS = 2,   /* counts differ from the plan's (a plan for other counts) */
  COMMFIT_EXEC_ERR_USAGE = 3,    /* bad argument: options, null handle, non-contiguous datatype */
  COMMFIT_EXEC_ERR_INTERNAL = 4  /* anything else (out of memory) */
};

enum { COMMFIT_EXEC_POST_ALL = 0, COMMFIT_EXEC_HANDSHAKE = 1 };
enum { COMMFIT_EXEC_CHECK_EVERY_CALL = 0, COMMFIT_EXEC_CHECK_FIRST_CALL = 1, COMMFIT_EXEC_CHECK_NONE = 2 };
enum { COMMFIT_EXEC_PLAN_WINDOW = -1 };

/* Mirrors commfit::exec::Options; fill with commfit_exec_default_options first. */
typedef struct {
  int protocol;           /* COMMFIT_EXEC_POST_ALL or COMMFIT_EXEC_HANDSHAKE */
  int barrier;            /* nonzero: MPI_Barrier after every phase */
  int pairwise;           /* nonzero: pairwise exchanges as MPI_Sendrecv */
  int max_outstanding;    /* COMMFIT_EXEC_PLAN_WINDOW (-1, default): the plan's; 0 = no cap;
                             else >= 2 (post-all only) */
  int count_check;        /* COMMFIT_EXEC_CHECK_EVERY_CALL, _FIRST_CALL or _NONE */
  int check_consistency;  /* nonzero: check at load that peers' steps match */
  long long max_message;  /* pieces above this many bytes go as several messages (1 .. 2^31-1) */
  int persistent;         /* nonzero: persistent requests (post-all without a request window) */
  int coalesce;           /* a phase's pieces to one peer go as one message when they total at most
                             this many bytes, else packed into messages below it (0: never) */
} commfit_exec_options;

void commfit_exec_default_options(commfit_exec_options* options);

/* path: a plan directory or a binary plan file. options may be NULL (defaults). On error *out is
 * NULL. */
int commfit_exec_load(const char* path, MPI_Comm comm, const commfit_exec_options* options,
                      commfit_exec_t* out);

/* MPI_Alltoallv semantics, counts and displacements in bytes. */
int commfit_exec_execute(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                         const int* sdispls, void* recvbuf, const int* recvcounts,
                         const int* rdispls);

/* MPI_Alltoallv's signature; contiguous datatypes only. */
int commfit_exec_execute_typed(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                               const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                               const int* recvcounts, const int* rdispls, MPI_Datatype recvtype);

/* A split call (Executor::start / finish in commfit_exec.hpp): start takes execute's arguments,
 * posts the first phase's messages nonblocking and returns, so the caller computes while they
 * travel; finish completes the exchange. Between them the buffers and the count and displacement
 * arrays must stay alive and untouched (the receive buffer not read). Both are collective; one
 * split call in flight per executor (a second start, or finish without start, is
 * COMMFIT_EXEC_ERR_USAGE on the calling rank). An error from start leaves nothing in flight. */
int commfit_exec_start(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                       const int* sdispls, void* recvbuf, const int* recvcounts, const int* rdispls);
int commfit_exec_start_typed(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                             const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                             const int* recvcounts, const int* rdispls, MPI_Datatype recvtype);
int commfit_exec_finish(commfit_exec_t ex);

/* In-job planning. Declared here with the rest of the C API, but provided by the runtime library
 * (libcommfit_runtime, above the executor; runtime/c_api_plan.cpp), not by commfit_exec: a program
 * that calls commfit_exec_plan or commfit_exec_plan_f links commfit_runtime (CMake:
 * commfit::runtime; pkg-config: the Cflags of commfit-exec and the Libs of commfit-runtime,
 * `mpicc app.c $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)`,
 * docs/EXECUTOR.md "Building against an installed commfit"). It gathers the
 * count matrix (counts in elements of elem_size bytes; 1 for bytes), plans it on one rank as
 * `commfit plan` would with plan_options ("strategy=auto topology=torus:4x4 keep=DIR"; NULL or ""
 * for the defaults) and returns this rank's executor in *out. Collective. */
int commfit_exec_plan(MPI_Comm comm, const int* sendcounts, const int* recvcounts, int elem_size,
                      const char* plan_options, const commfit_exec_options* options,
                      commfit_exec_t* out);
/* Frees the executor (collective: it frees a communicator) and sets *ex to NULL. NULL is fine. */
int commfit_exec_free(commfit_exec_t* ex);

/* The message of the last error on the calling thread ("" when none). */
const char* commfit_exec_last_error(void);

/* Fortran entry points: MPI handles as MPI_Fint (the INTEGER handles of `use mpi`, or the
 * MPI_VAL component of mpi_f08 handles); path is a NUL-terminated string. */
int commfit_exec_load_f(const char* path, MPI_Fint comm, const commfit_exec_options* options,
                        commfit_exec_t* out);
/* commfit_exec_plan for Fortran: provided by commfit_runtime too. */
int commfit_exec_plan_f(MPI_Fint comm, const int* sendcounts, const int* recvcounts, int elem_size,
                        const char* plan_options, const commfit_exec_options* options,
                        commfit_exec_t* out);
int commfit_exec_execute_typed_f(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                                 const int* sdispls, MPI_Fint sendtype, void* recvbuf,
                                 const int* recvcounts, const int* rdispls, MPI_Fint recvtype);
int commfit_exec_start_typed_f(commfit_exec_t ex, const void* sendbuf, const int* sendcounts,
                               const int* sdispls, MPI_Fint sendtype, void* recvbuf,
                               const int* recvcounts, const int* rdispls, MPI_Fint recvtype);

#ifdef __cplusplus
}
#endif

#endif /* COMMFIT_EXEC_H */

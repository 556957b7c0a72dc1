/* commfit patterns from global ids, C API (docs/PATTERN.md). A program that knows which global ids
 * each rank owns and which it needs, but not who owns them, gets the exchange from the ids alone:
 *
 *   commfit_pattern* p = NULL;
 *   if (commfit_pattern_from_ids(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, NULL, &p)
 *       != COMMFIT_EXEC_SUCCESS)
 *     fprintf(stderr, "%s\n", commfit_exec_last_error());
 *   commfit_pattern_gather(p, x_owned, x_needed, MPI_DOUBLE);            (owners -> needers)
 *   commfit_pattern_scatter(p, y_needed, y_owned, MPI_DOUBLE, MPI_SUM);  (needers -> owners)
 *   commfit_pattern_gather_begin(p, x_owned, x_needed, MPI_DOUBLE);      (split: work between)
 *   commfit_pattern_gather_end(p);
 *   commfit_pattern_free(&p);
 *
 * Defined in the runtime library (CMake commfit::runtime, pkg-config commfit-runtime), like
 * commfit_exec_plan: the exchange is planned in the job. Return codes and the error message are the
 * executor's (commfit_exec.h: COMMFIT_EXEC_*, commfit_exec_last_error). Every function is
 * collective over the pattern's communicator; an error is returned on every rank with the same code
 * and message. (Only a NULL out pointer or handle is reported on the calling rank alone.) */
#ifndef COMMFIT_PATTERN_H
#define COMMFIT_PATTERN_H

#include "commfit_exec.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct commfit_pattern commfit_pattern;

/* owned[i] is the global id of this rank's i-th owned value, needed[j] the id of its j-th needed
 * value (ids >= 0). Every id must be owned by exactly one rank; an id needed twice on one rank is
 * delivered twice, an id needed by its owner is copied locally (no message). The owners are found
 * with a distributed directory (each id's directory rank: a hash of the id modulo the ranks) or,
 * with the words "lookup=directory-block|ring|ring2d|ring3d|ring4d" and
 * "reverse=nbx|allreduce|reduce-scatter" in plan_options, another method (docs/PATTERN.md); then
 * the exchange is planned in the job as commfit_exec_plan would with the rest of plan_options (NULL
 * or "" for the defaults) and the gather's executor for 8-byte elements is made. Collective. On error *out is
 * NULL and every rank returns COMMFIT_EXEC_ERR_USAGE with the same message for: an id needed that no
 * rank owns ("rank 5: directory: id 12 is needed by rank 3 (needed[0]) but owned by no rank"), an id
 * owned twice ("rank 5: directory: id 12 is owned by ranks 1 and 4"), a negative id, a negative
 * count, a NULL array with a nonzero count (the leading rank is the one that found it). */
int commfit_pattern_from_ids(MPI_Comm comm, int64_t n_owned, const int64_t* owned, int64_t n_needed,
                             const int64_t* needed, const char* plan_options, commfit_pattern** out);

/* Owners to those who need (PetscSFBcast): needed_values[j] = the owner's value of needed[j].
 * type: a predefined contiguous datatype (MPI_DOUBLE, MPI_FLOAT, MPI_INT, MPI_INT64_T, MPI_CHAR,
 * MPI_BYTE ...), the same on every rank; others are refused with COMMFIT_EXEC_ERR_USAGE. The first
 * call with a datatype of a new size plans an executor for that size (collective); later calls
 * replay it. */
int commfit_pattern_gather(commfit_pattern* p, const void* owned_values, void* needed_values,
                           MPI_Datatype type);

/* Back to the owners (PetscSFReduce): each owned value is combined, with op, with every value
 * needed_values[j] whose id it is, on every rank; the owned value's own content takes part (MPI_SUM
 * adds to it) and owned values nobody needs are left as they are. op: MPI_SUM, MPI_MAX, MPI_MIN
 * (for the integer and floating types) or MPI_REPLACE (any type gather takes). Contributions are
 * combined in a fixed order, by needer rank, then by position in that rank's needed[]: under
 * MPI_REPLACE the last one wins (the highest needing rank's last occurrence), and floating sums are
 * reproducible. The reverse executor is planned on the first scatter with a datatype of each size. */
int commfit_pattern_scatter(commfit_pattern* p, const void* needed_values, void* owned_values,
                            MPI_Datatype type, MPI_Op op);

/* Split phase (PetscSFBcastBegin/End, PetscSFReduceBegin/End): begin takes gather's or scatter's
 * arguments, packs the values it sends and starts the exchange, posting the first phase of the
 * plan's messages nonblocking; end waits for them, runs the remaining phases and writes the output
 * (gather: needed_values; scatter: owned_values, combined in scatter's fixed order). Between begin
 * and end the output buffer must be left alone and alive (not read, not written); begin has copied
 * its input already. Overlapped with the caller's work: the first phase's messages (the whole
 * exchange for a one-phase plan, such as the default direct one); nothing under the handshake
 * protocol, a request window or barrier mode, where end runs the whole exchange. Both are
 * collective. One gather or scatter in flight per pattern: an end without its begin, and a begin,
 * gather or scatter while one is pending, return COMMFIT_EXEC_ERR_USAGE (on the calling rank,
 * without a collective: made alike by every rank, the error comes back on every rank). */
int commfit_pattern_gather_begin(commfit_pattern* p, const void* owned_values, void* needed_values,
                                 MPI_Datatype type);
int commfit_pattern_gather_end(commfit_pattern* p);
int commfit_pattern_scatter_begin(commfit_pattern* p, const void* needed_values, void* owned_values,
                                  MPI_Datatype type, MPI_Op op);
int commfit_pattern_scatter_end(commfit_pattern* p);

/* Frees the pattern (collective: it frees communicators) and sets *p to NULL. NULL is fine. */
void commfit_pattern_free(commfit_pattern** p);

/* Fortran entry points (runtime/commfit_pattern.f90 is the module commfit_pattern): MPI handles as
 * MPI_Fint (the INTEGER handles of `use mpi`, or the MPI_VAL component of mpi_f08 handles);
 * plan_options NUL-terminated. The Fortran types are taken as their C twins are: MPI_INTEGER,
 * MPI_INTEGER1 .. MPI_INTEGER8 as signed integers, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REAL4 and
 * MPI_REAL8 as floating types of their size. */
int commfit_pattern_from_ids_f(MPI_Fint comm, int64_t n_owned, const int64_t* owned, int64_t n_needed,
                               const int64_t* needed, const char* plan_options, commfit_pattern** out);
int commfit_pattern_gather_f(commfit_pattern* p, const void* owned_values, void* needed_values, MPI_Fint type);
int commfit_pattern_scatter_f(commfit_pattern* p, const void* needed_values, void* owned_values, MPI_Fint type,
                              MPI_Fint op);
int commfit_pattern_gather_begin_f(commfit_pattern* p, const void* owned_values, void* needed_values, MPI_Fint type);
int commfit_pattern_gather_end_f(commfit_pattern* p);
int commfit_pattern_scatter_begin_f(commfit_pattern* p, const void* needed_values, void* owned_values, MPI_Fint type,
                                    MPI_Fint op);
int commfit_pattern_scatter_end_f(commfit_pattern* p);

#ifdef __cplusplus
}
#endif

#endif /* COMMFIT_PATTERN_H */

! The Fortran binding of commfit patterns from global ids (docs/PATTERN.md): the module
! commfit_pattern, interfaces to the C API (runtime/commfit_pattern.h) through ISO_C_BINDING. It
! uses the module commfit_exec and passes it on: `use commfit_pattern` brings the status codes and
! last_error() too. Installed as the library commfit_runtime_fortran (CMake:
! commfit::runtime_fortran) and its module file commfit_pattern.mod under include/commfit:
!   mpifort app.f90 $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)
!
!   integer(c_int64_t), target :: owned(n_owned), needed(n_needed)
!   real(c_double), target :: x(n_owned), y(n_needed)
!   type(c_ptr) :: p
!   status = commfit_pattern_from_ids_f(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, c_null_char, p)
!   status = commfit_pattern_gather_f(p, c_loc(x), c_loc(y), MPI_DOUBLE_PRECISION)          owners -> needers
!   status = commfit_pattern_scatter_f(p, c_loc(y), c_loc(x), MPI_DOUBLE_PRECISION, MPI_SUM) needers -> owners
!   status = commfit_pattern_gather_begin_f(p, c_loc(x), c_loc(y), MPI_DOUBLE_PRECISION)    split: work between
!   status = commfit_pattern_gather_end_f(p)
!   call commfit_pattern_free(p)
!
! MPI handles are the INTEGER handles of `use mpi` (mpi_f08: their MPI_VAL component). Values go
! by address (c_loc of a TARGET array), like the executor's buffers: any type the datatype
! describes. Every call is collective over the pattern's communicator, and an error comes back on
! every rank with the same status and last_error().
module commfit_pattern
  use iso_c_binding
  use commfit_exec
  implicit none

  interface
    ! owned(i): the global id of this rank's i-th owned value, needed(j) the id of its j-th needed
    ! value (ids >= 0). plan_options: "key=value ..." (commfit_exec_plan's words, and lookup= and
    ! reverse=), NUL-terminated; c_null_char alone for the defaults. On error p is c_null_ptr.
    integer(c_int) function commfit_pattern_from_ids_f(comm, n_owned, owned, n_needed, needed, plan_options, p) &
        bind(c, name="commfit_pattern_from_ids_f")
      import :: c_char, c_int, c_int64_t, c_ptr
      integer(c_int), value :: comm
      integer(c_int64_t), value :: n_owned, n_needed
      integer(c_int64_t), intent(in) :: owned(*), needed(*)
      character(kind=c_char), intent(in) :: plan_options(*)
      type(c_ptr), intent(out) :: p
    end function

    ! needed_values(j) = the owner's value of needed(j). type: a predefined contiguous datatype
    ! (MPI_DOUBLE_PRECISION, MPI_REAL, MPI_INTEGER, MPI_INTEGER8, MPI_BYTE ...), the same on every rank.
    integer(c_int) function commfit_pattern_gather_f(p, owned_values, needed_values, type) &
        bind(c, name="commfit_pattern_gather_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: p, owned_values, needed_values
      integer(c_int), value :: type
    end function

    ! Each owned value combined, with op (MPI_SUM, MPI_MAX, MPI_MIN, MPI_REPLACE), with every
    ! needed value of its id, in the order (needing rank, position in its needed array).
    integer(c_int) function commfit_pattern_scatter_f(p, needed_values, owned_values, type, op) &
        bind(c, name="commfit_pattern_scatter_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: p, needed_values, owned_values
      integer(c_int), value :: type, op
    end function

    ! Split phase: begin packs and starts the exchange (the first phase's messages are posted),
    ! end finishes it and writes the output (gather: needed_values; scatter: owned_values, combined
    ! in scatter's order). Leave the output array alone between them (not read, not written) and
    ! keep it alive. One split call in flight per pattern: an end without its begin, or a begin,
    ! gather or scatter while one is pending, returns COMMFIT_EXEC_ERR_USAGE.
    integer(c_int) function commfit_pattern_gather_begin_f(p, owned_values, needed_values, type) &
        bind(c, name="commfit_pattern_gather_begin_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: p, owned_values, needed_values
      integer(c_int), value :: type
    end function

    integer(c_int) function commfit_pattern_gather_end_f(p) bind(c, name="commfit_pattern_gather_end_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: p
    end function

    integer(c_int) function commfit_pattern_scatter_begin_f(p, needed_values, owned_values, type, op) &
        bind(c, name="commfit_pattern_scatter_begin_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: p, needed_values, owned_values
      integer(c_int), value :: type, op
    end function

    integer(c_int) function commfit_pattern_scatter_end_f(p) bind(c, name="commfit_pattern_scatter_end_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: p
    end function

    ! Frees the pattern (collective) and sets p to c_null_ptr; c_null_ptr is fine.
    subroutine commfit_pattern_free(p) bind(c, name="commfit_pattern_free")
      import :: c_ptr
      type(c_ptr), intent(inout) :: p
    end subroutine
  end interface
end module

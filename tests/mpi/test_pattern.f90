! The module commfit_pattern (runtime/commfit_pattern.f90) from Fortran, `use mpi` handles: rank r
! owns the ids k*p + r, in descending order, and needs every id of the next rank plus its own first
! one twice (test_pattern_cpp.cpp's case). Gather of MPI_DOUBLE_PRECISION, MPI_REAL and MPI_INTEGER
! checked value by value; scatter of MPI_INTEGER8 with MPI_SUM and of MPI_DOUBLE_PRECISION with
! MPI_MAX against the sums and maxima of the case; a derived datatype, MPI_PROD, an id owned twice
! and a negative id refused on every rank with COMMFIT_EXEC_ERR_USAGE and a message naming the
! problem; gather_begin/end and scatter_begin/end equal to the plain calls, with work between, and
! their misuses; free twice.
program test_pattern_f
  use mpi
  use commfit_pattern
  implicit none
  integer, parameter :: per = 50
  integer :: ierr, rank, np, k, failures, total, prev
  integer(c_int) :: status
  integer(c_int64_t), allocatable :: owned(:), needed(:), twice(:)
  real(c_double), allocatable, target :: x(:), y(:), dmax(:), dneed(:)
  real(c_float), allocatable, target :: xs(:), ys(:)
  integer(c_int), allocatable, target :: xi(:), yi(:)
  integer(c_int64_t), allocatable, target :: z(:), w(:)
  integer :: vector_type, other
  type(c_ptr) :: p

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  failures = 0
  allocate(owned(per), needed(per + 2))
  do k = 0, per - 1
    owned(k + 1) = int(per - 1 - k, c_int64_t) * np + rank
    needed(k + 1) = int(k, c_int64_t) * np + mod(rank + 1, np)
  end do
  needed(per + 1) = rank
  needed(per + 2) = rank

  status = commfit_pattern_from_ids_f(MPI_COMM_WORLD, int(per, c_int64_t), owned, int(per + 2, c_int64_t), needed, &
                                      "strategy=direct" // c_null_char, p)
  call check(status == COMMFIT_EXEC_SUCCESS .and. c_associated(p), "from_ids")

  allocate(x(per), y(per + 2), xs(per), ys(per + 2), xi(per), yi(per + 2))
  x = 0.5d0 * real(owned, c_double)
  xs = real(owned, c_float) + 0.25
  xi = int(owned, c_int) * 3
  y = -1
  ys = -1
  yi = -1
  status = commfit_pattern_gather_f(p, c_loc(x), c_loc(y), MPI_DOUBLE_PRECISION)
  ! The values are exact (halves and quarters of small integers): no difference at all is allowed.
  call check(status == COMMFIT_EXEC_SUCCESS .and. all(abs(y - 0.5d0 * real(needed, c_double)) <= 0), &
             "gather MPI_DOUBLE_PRECISION")
  status = commfit_pattern_gather_f(p, c_loc(xs), c_loc(ys), MPI_REAL)
  call check(status == COMMFIT_EXEC_SUCCESS .and. all(abs(ys - (real(needed, c_float) + 0.25)) <= 0), "gather MPI_REAL")
  status = commfit_pattern_gather_f(p, c_loc(xi), c_loc(yi), MPI_INTEGER)
  call check(status == COMMFIT_EXEC_SUCCESS .and. all(yi == int(needed, c_int) * 3), "gather MPI_INTEGER")

  ! Every owned id is needed once by the previous rank; the rank's own id also twice by itself.
  allocate(z(per), w(per + 2))
  z = 10
  w = 1
  status = commfit_pattern_scatter_f(p, c_loc(w), c_loc(z), MPI_INTEGER8, MPI_SUM)
  call check(status == COMMFIT_EXEC_SUCCESS, "scatter MPI_INTEGER8 MPI_SUM: status")
  do k = 1, per
    if (owned(k) == rank) then
      call check(z(k) == 13, "scatter MPI_INTEGER8 MPI_SUM: the rank's own id")
    else
      call check(z(k) == 11, "scatter MPI_INTEGER8 MPI_SUM")
    end if
  end do
  ! Needed values are the needing rank + 1: the maximum is the previous rank's, or this rank's own
  ! for its own id when it is larger.
  allocate(dmax(per), dneed(per + 2))
  dmax = 0
  dneed = rank + 1
  prev = mod(rank - 1 + np, np)
  status = commfit_pattern_scatter_f(p, c_loc(dneed), c_loc(dmax), MPI_DOUBLE_PRECISION, MPI_MAX)
  call check(status == COMMFIT_EXEC_SUCCESS, "scatter MPI_DOUBLE_PRECISION MPI_MAX: status")
  do k = 1, per
    if (owned(k) == rank) then
      call check(abs(dmax(k) - (max(prev, rank) + 1)) <= 0, "scatter MPI_MAX: the rank's own id")
    else
      call check(abs(dmax(k) - (prev + 1)) <= 0, "scatter MPI_MAX")
    end if
  end do

  ! Split phase, with work and an exchange on another communicator between begin and end: the same
  ! values as the plain calls.
  call MPI_Comm_dup(MPI_COMM_WORLD, other, ierr)
  y = -1
  status = commfit_pattern_gather_begin_f(p, c_loc(x), c_loc(y), MPI_DOUBLE_PRECISION)
  call check(status == COMMFIT_EXEC_SUCCESS, "gather_begin: status")
  call work_between()
  status = commfit_pattern_gather_end_f(p)
  call check(status == COMMFIT_EXEC_SUCCESS .and. all(abs(y - 0.5d0 * real(needed, c_double)) <= 0), &
             "gather_begin/end MPI_DOUBLE_PRECISION")
  z = 10
  status = commfit_pattern_scatter_begin_f(p, c_loc(w), c_loc(z), MPI_INTEGER8, MPI_SUM)
  call check(status == COMMFIT_EXEC_SUCCESS, "scatter_begin: status")
  call work_between()
  status = commfit_pattern_scatter_end_f(p)
  call check(status == COMMFIT_EXEC_SUCCESS, "scatter_end: status")
  do k = 1, per
    if (owned(k) == rank) then
      call check(z(k) == 13, "scatter_begin/end MPI_INTEGER8 MPI_SUM: the rank's own id")
    else
      call check(z(k) == 11, "scatter_begin/end MPI_INTEGER8 MPI_SUM")
    end if
  end do
  ! The misuses, on every rank.
  status = commfit_pattern_gather_end_f(p)
  call check(refused(status, "gather_end was called without gather_begin"), "gather_end without begin refused")
  status = commfit_pattern_scatter_begin_f(p, c_loc(w), c_loc(z), MPI_INTEGER8, MPI_SUM)
  status = commfit_pattern_scatter_f(p, c_loc(w), c_loc(z), MPI_INTEGER8, MPI_SUM)
  call check(refused(status, "a split scatter is pending"), "scatter while a scatter is pending refused")
  status = commfit_pattern_gather_begin_f(p, c_loc(x), c_loc(y), MPI_DOUBLE_PRECISION)
  call check(refused(status, "a split scatter is pending"), "gather_begin while a scatter is pending refused")
  status = commfit_pattern_scatter_end_f(p)
  call check(status == COMMFIT_EXEC_SUCCESS .and. all(z == 12 .or. (z == 16 .and. owned == rank)), &
             "the pending scatter survives the refused calls")
  call MPI_Comm_free(other, ierr)

  ! Refused on every rank, before any communication.
  call MPI_Type_contiguous(2, MPI_DOUBLE_PRECISION, vector_type, ierr)
  call MPI_Type_commit(vector_type, ierr)
  status = commfit_pattern_gather_f(p, c_loc(x), c_loc(y), vector_type)
  call check(refused(status, "derived datatype"), "gather: a derived datatype refused")
  call MPI_Type_free(vector_type, ierr)
  status = commfit_pattern_scatter_f(p, c_loc(dneed), c_loc(dmax), MPI_DOUBLE_PRECISION, MPI_PROD)
  call check(refused(status, "the op must be"), "scatter: MPI_PROD refused")
  call commfit_pattern_free(p)
  call check(.not. c_associated(p), "free: p is c_null_ptr")
  call commfit_pattern_free(p)

  ! An id owned by this rank and by the next one too.
  allocate(twice(per + 1))
  twice(1:per) = owned
  twice(per + 1) = mod(rank + 1, np)
  status = commfit_pattern_from_ids_f(MPI_COMM_WORLD, int(per + 1, c_int64_t), twice, int(per + 2, c_int64_t), needed, &
                                      c_null_char, p)
  call check(refused(status, "is owned") .and. .not. c_associated(p), "from_ids: an id owned twice refused")
  needed(1) = -5
  status = commfit_pattern_from_ids_f(MPI_COMM_WORLD, int(per, c_int64_t), owned, int(per + 2, c_int64_t), needed, &
                                      c_null_char, p)
  call check(refused(status, "id -5 is negative") .and. .not. c_associated(p), "from_ids: a negative id refused")

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', 'test_pattern_f: ', np, ' ranks, ', total, ' failures'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

  ! What a caller does between begin and end: arithmetic, and an exchange of its own.
  subroutine work_between()
    real(c_double) :: acc, sum
    integer :: i, token, got
    acc = 0
    do i = 1, 20000
      acc = acc + 1.0d0 / i
    end do
    call MPI_Allreduce(acc, sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, other, ierr)
    token = rank
    call MPI_Sendrecv(token, 1, MPI_INTEGER, mod(rank + 1, np), 7, got, 1, MPI_INTEGER, mod(rank - 1 + np, np), 7, &
                      other, MPI_STATUS_IGNORE, ierr)
  end subroutine

  ! The call returned COMMFIT_EXEC_ERR_USAGE and its message says `text`.
  logical function refused(code, text)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: text
    character(len=:), allocatable :: message
    message = last_error()
    refused = code == COMMFIT_EXEC_ERR_USAGE .and. index(message, text) > 0
  end function

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write (0, '(a,i0,a,a)') 'FAIL rank ', rank, ': ', what
      write (0, '(a,a)') '  last error: ', last_error()
    end if
  end subroutine
end program

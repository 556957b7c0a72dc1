! Patterns from global ids through the Fortran module commfit_pattern, built with mpifort against
! the installed package (docs/PATTERN.md, "Building against an installed commfit"):
!
!   mpifort pattern_consumer.F90 -o pattern_consumer_f $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)
!   mpirun -np NP pattern_consumer_f ["strategy=auto"]
!
! pattern_consumer.c's case (random owners, random needs, the draws of every rank computed on
! every rank from Park and Miller's generator): two gathers of MPI_DOUBLE_PRECISION and one
! scatter of MPI_INTEGER8 with MPI_SUM, every value checked. Exit status 0 only when all are right
! on every rank.
program pattern_consumer_f
  use mpi
  use commfit_pattern
  implicit none
  integer :: ierr, rank, np, q, iter
  integer(c_int) :: status
  integer(c_int64_t) :: n_ids, n_owned, n_needed, k, j, s
  integer(c_int64_t), allocatable :: owned(:), needed(:), local(:)
  real(c_double), allocatable, target :: x(:), y(:)
  integer(c_int64_t), allocatable, target :: z(:), w(:), expect(:)
  integer :: wrong, total
  character(len=4096) :: options
  type(c_ptr) :: p

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  options = ''
  if (command_argument_count() > 0) call get_command_argument(1, options)
  n_ids = 30_c_int64_t * np + 11

  ! This rank's ids: owned in descending order of k, needed as drawn; local(k) is k's position in
  ! owned (1-based), or 0.
  allocate(owned(n_ids), local(0:n_ids - 1))
  n_owned = 0
  local = 0
  do k = n_ids - 1, 0, -1
    if (owner_of(k) == rank) then
      n_owned = n_owned + 1
      owned(n_owned) = id_of(k)
      local(k) = n_owned
    end if
  end do
  n_needed = needed_count(rank)
  allocate(needed(n_needed))
  s = 1000_c_int64_t + 7919_c_int64_t * rank
  do j = 1, n_needed
    needed(j) = id_of(draw(s))
  end do

  allocate(x(max(n_owned, 1_c_int64_t)), y(n_needed), z(max(n_owned, 1_c_int64_t)), w(n_needed), &
           expect(max(n_owned, 1_c_int64_t)))
  wrong = 0
  status = commfit_pattern_from_ids_f(MPI_COMM_WORLD, n_owned, owned, n_needed, needed, trim(options) // c_null_char, p)
  if (status /= COMMFIT_EXEC_SUCCESS) call failed()
  ! Gather, twice with other values: needed value j is its owner's value of needed(j).
  do iter = 0, 1
    if (wrong /= 0) exit
    x(1:n_owned) = 0.5d0 * real(owned(1:n_owned), c_double) + iter
    y = -1
    status = commfit_pattern_gather_f(p, c_loc(x), c_loc(y), MPI_DOUBLE_PRECISION)
    if (status /= COMMFIT_EXEC_SUCCESS) then
      call failed()
    else
      wrong = wrong + count(y /= 0.5d0 * real(needed, c_double) + iter)
    end if
  end do
  ! Scatter, MPI_SUM: each owned id gets its own id plus q + 1 for every time rank q needs it.
  if (wrong == 0) then
    z(1:n_owned) = owned(1:n_owned)
    expect(1:n_owned) = owned(1:n_owned)
    w = rank + 1
    do q = 0, np - 1
      s = 1000_c_int64_t + 7919_c_int64_t * q
      do j = 1, needed_count(q)
        k = draw(s)
        if (local(k) > 0) expect(local(k)) = expect(local(k)) + q + 1
      end do
    end do
    status = commfit_pattern_scatter_f(p, c_loc(w), c_loc(z), MPI_INTEGER8, MPI_SUM)
    if (status /= COMMFIT_EXEC_SUCCESS) then
      call failed()
    else
      wrong = wrong + count(z(1:n_owned) /= expect(1:n_owned))
    end if
  end if
  call commfit_pattern_free(p)
  call MPI_Allreduce(wrong, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a)', 'pattern_consumer_f: ', np, ' ranks, ', n_ids, &
                       ' ids, 2 gathers and 1 scatter, ', total, ' wrong values'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

  ! Park and Miller's minimal standard generator: exact in 64-bit integers in every language.
  integer(c_int64_t) function next(v)
    integer(c_int64_t), intent(in) :: v
    next = mod(v * 48271_c_int64_t, 2147483647_c_int64_t)
  end function

  integer(c_int64_t) function id_of(kk)
    integer(c_int64_t), intent(in) :: kk
    id_of = 7 * kk + 3
  end function

  integer function owner_of(kk)
    integer(c_int64_t), intent(in) :: kk
    owner_of = int(mod(next(next(kk + 1)), int(np, c_int64_t)))
  end function

  integer(c_int64_t) function needed_count(qq)
    integer, intent(in) :: qq
    needed_count = 20 + mod(qq * 5, 13)
  end function

  ! The next needed k of the rank whose generator state is v.
  integer(c_int64_t) function draw(v)
    integer(c_int64_t), intent(inout) :: v
    v = next(v)
    draw = mod(v, n_ids)
  end function

  subroutine failed()
    if (rank == 0) write (0, '(a,a)') 'pattern_consumer_f: ', last_error()
    wrong = 1
  end subroutine
end program

! pmpi_alltoallv.c's Fortran twin, through `use mpi` (Open MPI's Fortran MPI_ALLTOALLV calls
! PMPI_Alltoallv, past the interposer's C entry points, so the interposer takes the Fortran names
! too): a loop of MPI_ALLTOALLV on the same irregular pattern (MPI_INTEGER, gaps between segments)
! on MPI_COMM_WORLD and a split communicator, MPI_ALLTOALL, and calls the interposer must hand to MPI
! (MPI_IN_PLACE, a strided type). Run with and without LD_PRELOAD=libcommfit_pmpi.so by
! tests/mpi/pmpi.cmake: the printed digests of every receive buffer must be identical.
!   mpirun -np N pmpi_alltoallv_f ITERATIONS steady|change|resize
program pmpi_alltoallv_f
  use mpi
  implicit none
  integer, parameter :: i8 = selected_int_kind(18)
  integer(i8) :: digest = 1
  integer :: ierr, rank, p, iterations, change, it, which, half, r
  character(len=16) :: arg
  integer(i8), allocatable :: all(:)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, p, ierr)
  iterations = 20
  change = 0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iterations
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    if (arg == 'change') change = 1
    if (arg == 'resize') change = 2
  end if
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  do it = 0, iterations - 1
    which = 0
    if (it >= iterations / 2 .and. it < 3 * iterations / 4) which = change
    if (it == iterations / 4) which = 3
    call alltoallv_round(MPI_COMM_WORLD, which, it)
    call alltoallv_round(half, 0, it)
    if (mod(it, 4) == 0) call alltoall_round(MPI_COMM_WORLD, it)
    if (mod(it, 5) == 0) call unusual_rounds(MPI_COMM_WORLD, it)
  end do
  call MPI_COMM_FREE(half, ierr)
  allocate (all(0:p - 1))
  call MPI_GATHER(digest, 1, MPI_INTEGER8, all, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do r = 0, p - 1
      write (*, '(a, i0, a, z16.16)') 'rank ', r, ' digest ', all(r)
    end do
  end if
  call MPI_FINALIZE(ierr)

contains

  subroutine absorb(values)
    integer, intent(in) :: values(:)
    integer :: k
    do k = 1, size(values)
      digest = modulo(digest * 31_i8 + int(values(k), i8), 1000000007_i8)
    end do
  end subroutine absorb

  ! pmpi_alltoallv.c's count(): integers rank i sends rank j in pattern `which`.
  integer function count(which, i, j, p)
    integer, intent(in) :: which, i, j, p
    integer :: h, w
    w = which
    if (which == 3) w = 0
    h = mod(i * 7 + j * 13 + merge(5, 0, w == 1), 11)
    if (h < 4 .and. i /= j) then
      count = 0
    else if (w == 2) then
      count = 3 + mod(i * 11 + j * 5 + p, 150)
    else
      count = 1 + mod(i * 31 + j * 17 + w * 101 + p, merge(300, 97, w /= 0))
    end if
    if (which == 3 .and. i == 0 .and. j == mod(1, p)) count = count + 1
  end function count

  subroutine alltoallv_round(comm, which, iter)
    integer, intent(in) :: comm, which, iter
    integer :: rank, p, j, k, st, rt, ierr
    integer, allocatable :: sc(:), sd(:), rc(:), rd(:), send(:), recv(:)
    call MPI_COMM_RANK(comm, rank, ierr)
    call MPI_COMM_SIZE(comm, p, ierr)
    allocate (sc(0:p - 1), sd(0:p - 1), rc(0:p - 1), rd(0:p - 1))
    st = 0
    rt = 0
    do j = 0, p - 1
      sc(j) = count(which, rank, j, p)
      rc(j) = count(which, j, rank, p)
      sd(j) = st
      rd(j) = rt
      st = st + sc(j) + 2
      rt = rt + rc(j) + 3
    end do
    allocate (send(0:st), recv(0:rt))
    do k = 0, st
      send(k) = rank * 1000003 + k * 7 + iter * 131
    end do
    recv = -1
    call MPI_ALLTOALLV(send, sc, sd, MPI_INTEGER, recv, rc, rd, MPI_INTEGER, comm, ierr)
    call absorb(recv(0:rt - 1))
  end subroutine alltoallv_round

  subroutine alltoall_round(comm, iter)
    integer, intent(in) :: comm, iter
    integer, parameter :: n = 5
    integer :: rank, p, k, ierr
    integer, allocatable :: send(:), recv(:)
    call MPI_COMM_RANK(comm, rank, ierr)
    call MPI_COMM_SIZE(comm, p, ierr)
    allocate (send(0:n * p - 1), recv(0:n * p - 1))
    do k = 0, n * p - 1
      send(k) = rank * 7919 + k + iter
    end do
    call MPI_ALLTOALL(send, n, MPI_INTEGER, recv, n, MPI_INTEGER, comm, ierr)
    call absorb(recv)
  end subroutine alltoall_round

  ! Calls the interposer must hand to MPI untouched.
  subroutine unusual_rounds(comm, iter)
    integer, intent(in) :: comm, iter
    integer :: rank, p, j, k, ierr, strided
    integer, allocatable :: c(:), d(:), buf(:), send(:), recv(:), rcnt(:), rdsp(:)
    call MPI_COMM_RANK(comm, rank, ierr)
    call MPI_COMM_SIZE(comm, p, ierr)
    allocate (c(0:p - 1), d(0:p - 1), buf(0:2 * p - 1), rcnt(0:p - 1), rdsp(0:p - 1))
    do j = 0, p - 1
      c(j) = 2
      d(j) = 2 * j
    end do
    do k = 0, 2 * p - 1
      buf(k) = rank * 100 + k + iter
    end do
    call MPI_ALLTOALLV(MPI_IN_PLACE, c, d, MPI_DATATYPE_NULL, buf, c, d, MPI_INTEGER, comm, ierr)
    call absorb(buf)
    ! Two integers with one between them (extent 3 integers).
    call MPI_TYPE_VECTOR(2, 1, 2, MPI_INTEGER, strided, ierr)
    call MPI_TYPE_COMMIT(strided, ierr)
    allocate (send(0:4 * p - 1), recv(0:4 * p - 1))
    do k = 0, 4 * p - 1
      send(k) = rank * 10 + k
    end do
    recv = -1
    do j = 0, p - 1
      c(j) = 1
      d(j) = j
      rcnt(j) = 2
      rdsp(j) = 4 * j
    end do
    call MPI_ALLTOALLV(send, c, d, strided, recv, rcnt, rdsp, MPI_INTEGER, comm, ierr)
    call absorb(recv)
    call MPI_TYPE_FREE(strided, ierr)
  end subroutine unusual_rounds

end program pmpi_alltoallv_f

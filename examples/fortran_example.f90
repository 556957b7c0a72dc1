! The commfit executor from Fortran, through ISO_C_BINDING and the C API (commfit_exec.h).
! Loads a plan of the pattern bytes(i, j) = mod(3i + 5j, 7) * 100 (written by the test fixture
! exec_write_plan, or by `commfit plan`), exchanges default INTEGERs with it (counts in elements,
! MPI_INTEGER; every other exchange as a split call, start then finish) and checks the result
! against MPI_Alltoallv.
!   mpirun -np 4 fortran_example formula.plan
!   mpirun -np 4 fortran_example in-job "strategy=auto"   (plans the pattern inside the job)
! The module commfit_exec is the binding in backends/exec/commfit_exec.f90.

program fortran_example
  use mpi
  use commfit_exec
  implicit none
  integer :: ierr, rank, nranks, q, k, iter, stotal, rtotal, bad, allbad
  integer(c_int) :: status
  integer, allocatable, target :: sendbuf(:), recvbuf(:), refbuf(:)
  integer(c_int), allocatable :: sc(:), sd(:), rc(:), rd(:)
  character(len=4096) :: path, plan_options
  type(commfit_exec_options) :: options
  type(c_ptr) :: ex

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, path)

  ! Counts in INTEGERs (bytes / 4), segments laid out with one spare element between them.
  allocate(sc(nranks), sd(nranks), rc(nranks), rd(nranks))
  stotal = 0
  rtotal = 0
  do q = 0, nranks - 1
    sc(q + 1) = mod(3 * rank + 5 * q, 7) * 25
    rc(q + 1) = mod(3 * q + 5 * rank, 7) * 25
    sd(q + 1) = stotal
    rd(q + 1) = rtotal
    stotal = stotal + sc(q + 1) + 1
    rtotal = rtotal + rc(q + 1) + 1
  end do
  allocate(sendbuf(stotal), recvbuf(rtotal), refbuf(rtotal))

  call commfit_exec_default_options(options)
  options%protocol = COMMFIT_EXEC_HANDSHAKE
  if (trim(path) == 'in-job') then
    ! In-job planning: the counts in INTEGERs of 4 bytes, the options as `commfit plan` takes them.
    call get_command_argument(2, plan_options)
    status = commfit_exec_plan_f(MPI_COMM_WORLD, sc, rc, 4_c_int, trim(plan_options) // c_null_char, options, ex)
  else
    status = commfit_exec_load_f(trim(path) // c_null_char, MPI_COMM_WORLD, options, ex)
  end if
  if (status /= COMMFIT_EXEC_SUCCESS) then
    if (rank == 0) print '(a)', 'fortran_example: ' // last_error()
    call MPI_Finalize(ierr)
    stop 2
  end if

  bad = 0
  do iter = 1, 10
    do q = 0, nranks - 1
      do k = 1, sc(q + 1)
        sendbuf(sd(q + 1) + k) = rank * 1000000 + q * 10000 + k + iter
      end do
    end do
    recvbuf = -1
    refbuf = -1
    if (mod(iter, 2) == 0) then
      ! A split call: the first phase's messages travel while this rank could compute.
      status = commfit_exec_start_typed_f(ex, c_loc(sendbuf), sc, sd, MPI_INTEGER, &
                                          c_loc(recvbuf), rc, rd, MPI_INTEGER)
      if (status == COMMFIT_EXEC_SUCCESS) status = commfit_exec_finish(ex)
    else
      status = commfit_exec_execute_typed_f(ex, c_loc(sendbuf), sc, sd, MPI_INTEGER, &
                                            c_loc(recvbuf), rc, rd, MPI_INTEGER)
    end if
    if (status /= COMMFIT_EXEC_SUCCESS) then
      print '(a)', 'fortran_example: ' // last_error()
      bad = bad + 1
      exit
    end if
    call MPI_Alltoallv(sendbuf, sc, sd, MPI_INTEGER, refbuf, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    if (any(recvbuf /= refbuf)) bad = bad + 1
    do q = 0, nranks - 1
      do k = 1, rc(q + 1)
        if (refbuf(rd(q + 1) + k) /= q * 1000000 + rank * 10000 + k + iter) bad = bad + 1
      end do
    end do
  end do
  status = commfit_exec_free(ex)

  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', 'fortran_example: ', nranks, ' ranks, 10 exchanges, ', allbad, ' mismatches'
  call MPI_Finalize(ierr)
  if (allbad /= 0) stop 1
end program

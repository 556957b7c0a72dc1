! The Fortran side of examples/consumer: the same irregular exchange as consumer.cpp, through the
! module commfit_exec, built with mpifort against the installed package:
!
!   mpifort consumer.F90 -o consumer_f $(pkg-config --cflags --libs commfit-exec)
!   mpirun -np NP consumer_f m.plan          load a plan made by `commfit plan` and execute it
!
! Built with -DCOMMFIT_CONSUMER_IN_JOB it plans the pattern inside the job instead
! (commfit_exec_plan_f, defined in the runtime library):
!
!   mpifort -DCOMMFIT_CONSUMER_IN_JOB consumer.F90 -o consumer_f_in_job \
!           $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)
!   mpirun -np NP consumer_f_in_job "strategy=auto"
!
! Exit status 0 only when every received byte on every rank is right.
program consumer_f
  use mpi
  use commfit_exec
  implicit none
  integer :: ierr, rank, np, q, k, iter, stotal, rtotal, bad, allbad
  integer(c_int) :: status
  integer(c_int8_t), allocatable, target :: sendbuf(:), recvbuf(:)
  integer(c_int), allocatable :: sc(:), sd(:), rc(:), rd(:)
  character(len=4096) :: arg
  type(commfit_exec_options) :: options
  type(c_ptr) :: ex

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(1, arg)
  allocate(sc(np), sd(np), rc(np), rd(np))
  stotal = 0
  rtotal = 0
  do q = 0, np - 1
    sc(q + 1) = count(rank, q)
    rc(q + 1) = count(q, rank)
    sd(q + 1) = stotal
    rd(q + 1) = rtotal
    stotal = stotal + sc(q + 1)
    rtotal = rtotal + rc(q + 1)
  end do
  allocate(sendbuf(max(stotal, 1)), recvbuf(max(rtotal, 1)))

  call commfit_exec_default_options(options)
#ifdef COMMFIT_CONSUMER_IN_JOB
  status = commfit_exec_plan_f(MPI_COMM_WORLD, sc, rc, 1_c_int, trim(arg) // c_null_char, options, ex)
#else
  status = commfit_exec_load_f(trim(arg) // c_null_char, MPI_COMM_WORLD, options, ex)
#endif
  bad = 0
  if (status /= COMMFIT_EXEC_SUCCESS) bad = 1
  do iter = 0, 9
    if (bad /= 0) exit
    do q = 0, np - 1
      do k = 0, sc(q + 1) - 1
        sendbuf(sd(q + 1) + k + 1) = byte(rank, q, k, iter)
      end do
    end do
    recvbuf = -1
    status = commfit_exec_execute_typed_f(ex, c_loc(sendbuf), sc, sd, MPI_BYTE, c_loc(recvbuf), rc, rd, MPI_BYTE)
    if (status /= COMMFIT_EXEC_SUCCESS) then
      bad = 1
      exit
    end if
    do q = 0, np - 1
      do k = 0, rc(q + 1) - 1
        if (recvbuf(rd(q + 1) + k + 1) /= byte(q, rank, k, iter)) bad = bad + 1
      end do
    end do
  end do
  status = commfit_exec_free(ex)
  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', 'consumer_f: ', np, ' ranks, 10 exchanges, ', allbad, ' wrong bytes'
  call MPI_Finalize(ierr)
  if (allbad /= 0) stop 1

contains

  ! Bytes rank s sends to rank d (consumer.cpp's formula).
  integer function count(s, d)
    integer, intent(in) :: s, d
    if (mod(s * 7 + d * 3, 5) == 0 .and. s /= d) then
      count = 0
    else
      count = 1 + mod(s * 131 + d * 29, 997)
    end if
  end function

  ! consumer.cpp's byte pattern, as a signed 8-bit integer.
  integer(c_int8_t) function byte(s, d, k, iter)
    integer, intent(in) :: s, d, k, iter
    integer :: v
    v = mod(s * 37 + d * 11 + k * 3 + iter, 256)
    if (v > 127) v = v - 256
    byte = int(v, c_int8_t)
  end function
end program

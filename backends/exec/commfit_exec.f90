! The Fortran binding of the commfit executor: the module commfit_exec, interfaces to the C API
! (commfit_exec.h) through ISO_C_BINDING. Installed as the library commfit_exec_fortran (CMake:
! commfit::exec_fortran) and its module file commfit_exec.mod under include/commfit:
!   mpifort app.f90 $(pkg-config --cflags --libs commfit-exec)
! (docs/EXECUTOR.md, "Building against an installed commfit").
module commfit_exec
  use iso_c_binding
  implicit none

  integer(c_int), parameter :: COMMFIT_EXEC_SUCCESS = 0
  ! The error codes of commfit_exec.h: a bad plan, counts other than the plan's, a bad argument,
  ! anything else
  integer(c_int), parameter :: COMMFIT_EXEC_ERR_PLAN = 1, COMMFIT_EXEC_ERR_COUNTS = 2, COMMFIT_EXEC_ERR_USAGE = 3, &
                               COMMFIT_EXEC_ERR_INTERNAL = 4
  integer(c_int), parameter :: COMMFIT_EXEC_POST_ALL = 0, COMMFIT_EXEC_HANDSHAKE = 1
  ! max_outstanding: the plan's own request window (the default)
  integer(c_int), parameter :: COMMFIT_EXEC_PLAN_WINDOW = -1

  type, bind(c) :: commfit_exec_options
    integer(c_int) :: protocol, barrier, pairwise, max_outstanding, count_check, check_consistency
    integer(c_long_long) :: max_message
    integer(c_int) :: persistent
    integer(c_int) :: coalesce
  end type

  interface
    subroutine commfit_exec_default_options(options) bind(c, name="commfit_exec_default_options")
      import :: commfit_exec_options
      type(commfit_exec_options), intent(out) :: options
    end subroutine

    integer(c_int) function commfit_exec_load_f(path, comm, options, ex) bind(c, name="commfit_exec_load_f")
      import :: c_char, c_int, c_ptr, commfit_exec_options
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: comm
      type(commfit_exec_options), intent(in) :: options
      type(c_ptr), intent(out) :: ex
    end function

    ! In-job planning, defined in the runtime library: link it with $(pkg-config --libs
    ! commfit-runtime) or commfit::runtime. Counts in elements of elem_size bytes; plan_options
    ! "key=value ..." as in commfit_exec.h, NUL-terminated.
    integer(c_int) function commfit_exec_plan_f(comm, sendcounts, recvcounts, elem_size, plan_options, options, ex) &
        bind(c, name="commfit_exec_plan_f")
      import :: c_char, c_int, c_ptr, commfit_exec_options
      integer(c_int), value :: comm, elem_size
      integer(c_int), intent(in) :: sendcounts(*), recvcounts(*)
      character(kind=c_char), intent(in) :: plan_options(*)
      type(commfit_exec_options), intent(in) :: options
      type(c_ptr), intent(out) :: ex
    end function

    integer(c_int) function commfit_exec_execute_typed_f(ex, sendbuf, sendcounts, sdispls, sendtype, &
        recvbuf, recvcounts, rdispls, recvtype) bind(c, name="commfit_exec_execute_typed_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: ex, sendbuf, recvbuf
      integer(c_int), intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
      integer(c_int), value :: sendtype, recvtype
    end function

    ! A split call: start posts the first phase and returns; finish completes the exchange. The
    ! buffers (give them the ASYNCHRONOUS or TARGET attribute) and the count arrays (contiguous ones:
    ! no temporary copies) stay alive and untouched between the two.
    integer(c_int) function commfit_exec_start_typed_f(ex, sendbuf, sendcounts, sdispls, sendtype, &
        recvbuf, recvcounts, rdispls, recvtype) bind(c, name="commfit_exec_start_typed_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: ex, sendbuf, recvbuf
      integer(c_int), intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
      integer(c_int), value :: sendtype, recvtype
    end function

    integer(c_int) function commfit_exec_finish(ex) bind(c, name="commfit_exec_finish")
      import :: c_int, c_ptr
      type(c_ptr), value :: ex
    end function

    integer(c_int) function commfit_exec_free(ex) bind(c, name="commfit_exec_free")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: ex
    end function

    type(c_ptr) function commfit_exec_last_error() bind(c, name="commfit_exec_last_error")
      import :: c_ptr
    end function
  end interface

contains

  ! The last error as a Fortran string.
  function last_error() result(text)
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    call c_f_pointer(commfit_exec_last_error(), chars, [4096])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate(character(len=n) :: text)
    text = transfer(chars(1:n), text)
  end function
end module

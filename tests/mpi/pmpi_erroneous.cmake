# An erroneous program under the interposer (tests/mpi/pmpi_alltoallv.c "short": in its last
# quarter rank 0 sends a rank one int fewer than that rank expects). MPI delivers what was sent and
# leaves the rest of the receive segment alone; the interposer must give exactly that: on the lagged
# path (each message at its sender's size), and in the checking mode (COMMFIT_CHECK=1), also when it
# replays the last pattern before agreeing (COMMFIT_SPECULATE=1: the try misses on every rank and
# the receive segments are put back before the call is done again).
# -DMPIEXEC -DNP -DEXE -DLINKED -DLIB -DWORK
set(ENV{COMMFIT_PLAN_BUDGET} 1000000)   # few short calls: the replay paths are tested, not the budget
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(iterations 40)
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP})
set(asan "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
include(${CMAKE_CURRENT_LIST_DIR}/pmpi_run.cmake)

run("plain MPI" plain plain_err ${CMAKE_COMMAND} -E env COMMFIT_PMPI=0 ${asan} ${mpirun} ${EXE} ${iterations} short)
run("speculating" linked linked_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THRESHOLD=2 COMMFIT_CHECK=1 COMMFIT_SPECULATE=1
    ${mpirun} -x COMMFIT_THRESHOLD -x COMMFIT_CHECK -x COMMFIT_SPECULATE -x ASAN_OPTIONS ${LINKED} ${iterations} short)
run("agreeing" preloaded preloaded_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THRESHOLD=2 COMMFIT_CHECK=1
    ${mpirun} -x LD_PRELOAD=${LIB} -x COMMFIT_THRESHOLD -x COMMFIT_CHECK -x ASAN_OPTIONS ${EXE} ${iterations} short)
# The lagged path (the default): the sized replay sends what each rank's counts say, as MPI does.
run("lagged" lagged lagged_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THRESHOLD=2
    ${mpirun} -x LD_PRELOAD=${LIB} -x COMMFIT_THRESHOLD -x ASAN_OPTIONS ${EXE} ${iterations} short)
message(STATUS "speculating: ${linked_err}\nagreeing: ${preloaded_err}\nlagged: ${lagged_err}")
foreach(r linked preloaded lagged)
  if(NOT "${${r}}" STREQUAL "${plain}")
    message(FATAL_ERROR "${r}: the receive buffers differ from plain MPI's:\n${${r}}\nplain:\n${plain}")
  endif()
endforeach()
if(NOT "${linked_err}" MATCHES "\\(([1-9][0-9]*) tries missed\\)")
  message(FATAL_ERROR "speculating: no try missed, so the erroneous calls were not tried:\n${linked_err}")
endif()

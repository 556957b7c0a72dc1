# The interposer's planning budget (COMMFIT_PLAN_BUDGET, runtime/pmpi.cpp): an unmodified program
# whose patterns never settle (bench/pmpi_thrash.c: patterns cycling past COMMFIT_MAX_PLANS, sizes
# that never repeat, many short-lived communicators) must get plain MPI's bytes, and the summary
# must say that planning was stopped, that the communicator stepped aside to MPI, or that nothing
# was planned (short-lived communicators end before a pattern reaches COMMFIT_THRESHOLD). (Its time against plain MPI is bench/pmpi_thrash.sh's.)
# -DMPIEXEC -DNP -DEXE -DLIB -DWORK
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP})
set(asan "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
foreach(case "cycle;600" "sizes;600" "comms;150")
  list(GET case 0 mode)
  list(GET case 1 n)
  foreach(run plain preloaded)
    set(env COMMFIT_PMPI=0)
    set(preload "")
    if(run STREQUAL "preloaded")
      set(env COMMFIT_PMPI=1)
      set(preload -x LD_PRELOAD=${LIB})
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${asan} ${env} ${mpirun} ${preload} -x ASAN_OPTIONS -x COMMFIT_PMPI ${EXE} ${mode} ${n}
                    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out_${run} ERROR_VARIABLE err_${run} TIMEOUT 280)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${mode} ${n}, ${run}: exit ${rc}\n${out_${run}}\n${err_${run}}")
    endif()
  endforeach()
  message(STATUS "${mode} ${n}: ${err_plain}${err_preloaded}")
  if(NOT "${out_preloaded}" STREQUAL "${out_plain}")
    message(FATAL_ERROR "${mode} ${n}: the receive buffers differ from plain MPI's:\n${out_preloaded}\nplain:\n${out_plain}")
  endif()
  if(NOT "${err_preloaded}" MATCHES "planning held or stopped by the budget on ([1-9][0-9]*) communicators?" AND NOT "${err_preloaded}" MATCHES " ([1-9][0-9]*) stepped aside to MPI"
     AND NOT "${err_preloaded}" MATCHES " patterns? seen, 0 planned ")
    message(FATAL_ERROR "${mode} ${n}: the summary says neither that planning was stopped, nor that a communicator stepped aside, nor that nothing was planned:\n${err_preloaded}")
  endif()
endforeach()

# The interposer's settings (runtime/pmpi.cpp) when they are wrong or differ between ranks: every
# rank must end the same way within seconds (the interposer off on every rank, every call MPI's,
# the program's output plain MPI's), with one line naming the variable and the rank, printed by
# that rank. Runs pmpi_alltoallv linked with the interposer under mpirun, once per case; a case
# with one rank different runs `env NAME=VALUE` as the last rank's program (an MPMD launch).
# -DMPIEXEC -DNP -DEXE -DLINKED -DWORK
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(iterations 12)
set(mode change)
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe)
set(asan "ASAN_OPTIONS=detect_leaks=0")
math(EXPR others "${NP} - 1")
math(EXPR last "${NP} - 1")

set(run_timeout 60)
include(${CMAKE_CURRENT_LIST_DIR}/pmpi_run.cmake)

run("plain MPI" plain plain_err ${CMAKE_COMMAND} -E env COMMFIT_PMPI=0 ${asan} ${mpirun} -np ${NP} ${EXE} ${iterations} ${mode})

# Checks a run: plain MPI's output, the interposer off (no summary), and `pattern` in stderr
# exactly `times` times (0: not at all).
function(expect label out err pattern times)
  if(NOT "${out}" STREQUAL "${plain}")
    message(FATAL_ERROR "${label}: the receive buffers differ from plain MPI's:\n${out}")
  endif()
  if("${err}" MATCHES "intercepted calls?")
    message(FATAL_ERROR "${label}: the interposer stayed on:\n${err}")
  endif()
  string(REGEX MATCHALL "${pattern}" found "${err}")
  list(LENGTH found n)
  if(NOT n EQUAL times)
    message(FATAL_ERROR "${label}: \"${pattern}\" printed ${n} times, expected ${times}:\n${err}")
  endif()
  message(STATUS "${label}: ${err}")
endfunction()

# One rank (the last) different: each variable the interposer reads, a value that differs (some
# of them also bad values on that rank alone).
foreach(case
    "COMMFIT_PMPI=0" "COMMFIT_THRESHOLD=5" "COMMFIT_THRESHOLD=abc" "COMMFIT_MAX_PLANS=1" "COMMFIT_ADAPT=0"
    "COMMFIT_ADAPT_SLACK=2" "COMMFIT_SPECULATE=1" "COMMFIT_RECORD=${WORK}/rec" "COMMFIT_PLAN=${WORK}/none.plan"
    "COMMFIT_PLAN_BUDGET=0.5" "COMMFIT_PLAN_THREAD=0" "COMMFIT_PLAN_AFTER=3" "COMMFIT_OPTIONS=seed=2" "COMMFIT_STRATEGY=direct" "COMMFIT_TOPOLOGY=full" "COMMFIT_NETWORK=ib")
  string(REGEX REPLACE "=.*" "" name "${case}")
  run("${case} on rank ${last}" out err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THRESHOLD=2
      ${mpirun} -x ASAN_OPTIONS -x COMMFIT_THRESHOLD -np ${others} ${LINKED} ${iterations} ${mode}
      : -np 1 env ${case} ${LINKED} ${iterations} ${mode})
  expect("${case} on rank ${last}" "${out}" "${err}"
         "commfit-pmpi: rank ${last}: ${name}[= ][^\n]*every rank must see the same COMMFIT_\\* settings" 1)
  if(EXISTS ${WORK}/rec)
    message(FATAL_ERROR "${case}: COMMFIT_RECORD wrote on one rank")
  endif()
endforeach()

# The same bad value on every rank: one line, from rank 0, naming the variable and the problem.
foreach(case
    "COMMFIT_THRESHOLD=abc|expected a whole number from 1 to"
    "COMMFIT_THRESHOLD=4294967297|expected a whole number from 1 to"
    "COMMFIT_VERBOSE=4294967298|expected a whole number from 0 to 3"
    "COMMFIT_PMPI=maybe|expected 0 or 1"
    "COMMFIT_PLAN_BUDGET=-1|expected a number >= 0"
    "COMMFIT_STRATEGY=bogus|unknown strategy \"bogus\""
    "COMMFIT_OPTIONS=strategy=bonded|unknown strategy \"bonded\" \\(did you mean \"bounded\"\\?\\)")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 setting)
  list(GET case 1 why)
  run("${setting} on every rank" out err ${CMAKE_COMMAND} -E env ${asan} ${setting}
      ${mpirun} -x ASAN_OPTIONS -np ${NP} env ${setting} ${LINKED} ${iterations} ${mode})
  expect("${setting} on every rank" "${out}" "${err}" "commfit-pmpi: rank 0: off \\([^\n]*${why}[^\n]*\\)" 1)
endforeach()

# Off by choice, in every spelling: silent.
foreach(setting COMMFIT_PMPI=0 COMMFIT_PMPI=off COMMFIT_PMPI=no COMMFIT_PMPI=NO)
  run("${setting}" out err ${CMAKE_COMMAND} -E env ${asan} ${mpirun} -x ASAN_OPTIONS -np ${NP} env ${setting} ${LINKED} ${iterations} ${mode})
  expect("${setting}" "${out}" "${err}" "commfit-pmpi" 0)
endforeach()

# A misspelt variable is named with its near miss (and ignored: the interposer stays on).
run("COMMFIT_TRESHOLD" out err ${CMAKE_COMMAND} -E env ${asan} ${mpirun} -x ASAN_OPTIONS -np ${NP} env COMMFIT_TRESHOLD=2 ${LINKED} ${iterations} ${mode})
if(NOT "${err}" MATCHES "commfit-pmpi: COMMFIT_TRESHOLD is not a variable of the interposer \\(did you mean \"COMMFIT_THRESHOLD\"\\?\\); it is ignored"
   OR NOT "${err}" MATCHES "intercepted calls?" OR NOT "${out}" STREQUAL "${plain}")
  message(FATAL_ERROR "COMMFIT_TRESHOLD: not named, or the interposer went off:\n${out}\n${err}")
endif()

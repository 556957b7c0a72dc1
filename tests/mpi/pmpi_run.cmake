# run(WHAT OUT ERR COMMAND...): the interposer tests' way to run a job (tests/mpi/pmpi*.cmake).
# The command runs in ${WORK}; a non-zero exit, or one past ${run_timeout} seconds (280 unless the
# script sets it: a hang ends there), fails the test with its output; OUT and ERR get the job's
# standard output and error.
function(run what out err)
  if(NOT run_timeout)
    set(run_timeout 280)
  endif()
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT ${run_timeout})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: exit ${rc} (limit ${run_timeout} s)\n${o}\n${e}")
  endif()
  set(${out} "${o}" PARENT_SCOPE)
  set(${err} "${e}" PARENT_SCOPE)
endfunction()

# rank_lines(TEXT LINE GOOD OUT): the ${NP} lines of TEXT that match LINE (each rank prints one,
# in any order, at times run together with the next), sorted into OUT; a count other than ${NP},
# or a line that does not match GOOD, fails the test.
function(rank_lines text line good out)
  string(REGEX MATCHALL "${line}" lines "${text}")
  list(SORT lines)
  list(LENGTH lines n)
  if(NOT n EQUAL NP)
    message(FATAL_ERROR "${n} rank lines for ${NP} ranks:\n${text}")
  endif()
  foreach(l ${lines})
    if(NOT l MATCHES "${good}")
      message(FATAL_ERROR "${l}")
    endif()
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

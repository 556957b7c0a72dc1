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

# The interposer under MPI_THREAD_MULTIPLE (tests/mpi/CMakeLists.txt): pmpi_threads (THREADS threads
# per rank, each on its own communicator, every int checked) plainly and with
# LD_PRELOAD=libcommfit_pmpi.so; both must find no wrong int, and the preloaded run's summary must
# show plans made and replayed. COMMFIT_THREAD_MULTIPLE=0 keeps the interposer off for it, saying so.
# Then the erroneous program (two threads of one rank in collectives on one communicator at once)
# must end with the interposer's error, not hang.
# -DMPIEXEC -DNP -DTHREADS -DEXE -DLIB -DWORK
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP})
set(asan "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
include(${CMAKE_CURRENT_LIST_DIR}/pmpi_run.cmake)
set(line "pmpi_threads: rank [0-9]+: [0-9]+ threads, [0-9]+ calls, [0-9]+ wrong ints")
set(good ": ${THREADS} threads, [1-9][0-9]* calls, 0 wrong ints$")


run("plain MPI" plain plain_err ${CMAKE_COMMAND} -E env ${asan} ${mpirun} -x ASAN_OPTIONS ${EXE} ${THREADS} 120)
rank_lines("${plain}" "${line}" "${good}" plain_lines)
# The planning budget lifted (these calls are short); plans made from the second call of a pattern
# on, on the root's planning thread (the default), while the other threads call.
run("LD_PRELOAD" preloaded preloaded_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THRESHOLD=2 COMMFIT_PLAN_AFTER=0 COMMFIT_PLAN_BUDGET=1000000
    ${mpirun} -x LD_PRELOAD=${LIB} -x COMMFIT_THRESHOLD -x COMMFIT_PLAN_AFTER -x COMMFIT_PLAN_BUDGET -x ASAN_OPTIONS ${EXE} ${THREADS} 120)
rank_lines("${preloaded}" "${line}" "${good}" preloaded_lines)
message(STATUS "LD_PRELOAD summary: ${preloaded_err}")
if(NOT "${preloaded_lines}" STREQUAL "${plain_lines}")
  message(FATAL_ERROR "the preloaded run's lines differ from plain MPI's:\n${preloaded_lines}\n${plain_lines}")
endif()
if(NOT "${preloaded_err}" MATCHES "commfit-pmpi: ([0-9]+) intercepted calls?: ([0-9]+) replayed by commfit [^\n]*\ncommfit-pmpi: ([0-9]+) patterns? seen, ([0-9]+) planned[^\n]* ([0-9]+) failed to plan")
  message(FATAL_ERROR "no summary:\n${preloaded_err}")
endif()
# Every call of every thread intercepted (the busiest rank's count), plans made and replayed.
math(EXPR expected "${THREADS} * 120")
if(NOT CMAKE_MATCH_1 EQUAL expected OR CMAKE_MATCH_2 LESS 10 OR CMAKE_MATCH_4 LESS THREADS OR NOT CMAKE_MATCH_5 EQUAL 0)
  message(FATAL_ERROR "intercepted ${CMAKE_MATCH_1} of ${expected}, replayed ${CMAKE_MATCH_2}, planned ${CMAKE_MATCH_4}, failed ${CMAKE_MATCH_5}:\n${preloaded_err}")
endif()

run("COMMFIT_THREAD_MULTIPLE=0" off off_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THREAD_MULTIPLE=0
    ${mpirun} -x LD_PRELOAD=${LIB} -x COMMFIT_THREAD_MULTIPLE -x ASAN_OPTIONS ${EXE} ${THREADS} 30)
rank_lines("${off}" "${line}" "${good}" off_lines)
if(NOT off_err MATCHES "off \\(MPI_THREAD_MULTIPLE with COMMFIT_THREAD_MULTIPLE=0\\); every call goes to MPI" OR off_err MATCHES "intercepted calls?")
  message(FATAL_ERROR "COMMFIT_THREAD_MULTIPLE=0: not off, or not said:\n${off_err}")
endif()

# The erroneous program: the job must end (MPI_ERRORS_ARE_FATAL) with the interposer's line.
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${asan} ${mpirun} -x LD_PRELOAD=${LIB} -x ASAN_OPTIONS ${EXE} 2 1 same
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT 120)
if(rc EQUAL 0 OR NOT e MATCHES "commfit-pmpi: rank 0: MPI_Alltoallv on a [0-9]+-rank communicator while another thread is in a collective on it")
  message(FATAL_ERROR "two threads on one communicator: exit ${rc}, no error of the interposer's:\n${o}\n${e}")
endif()

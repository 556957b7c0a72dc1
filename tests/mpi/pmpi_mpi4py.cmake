# mpi4py under the interposer (tests/mpi/CMakeLists.txt): tests/mpi/pmpi_mpi4py.py (Alltoallv with
# numpy buffers, Alltoall, Neighbor_alltoallv on a distributed graph; mpi4py asks for
# MPI_THREAD_MULTIPLE) plainly and with LD_PRELOAD=libcommfit_pmpi.so: every value right, the
# digests of every receive buffer identical, and the summary showing plans made and replayed.
# -DMPIEXEC -DNP -DPYTHON -DSCRIPT -DLIB -DWORK [-DRUNTIME=the sanitizer runtime to preload first]
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${PYTHON} -c "import mpi4py, numpy" RESULT_VARIABLE rc ERROR_VARIABLE e)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PYTHON} cannot import mpi4py and numpy (tools/setup.sh installs python3-mpi4py and python3-numpy):\n${e}")
endif()
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP})
# Under the sanitizers the interposer needs their runtime, which Python does not link: preloaded first.
set(preload ${LIB})
if(RUNTIME)
  set(preload "${RUNTIME}:${LIB}")
endif()
set(asan "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
include(${CMAKE_CURRENT_LIST_DIR}/pmpi_run.cmake)

string(REPEAT "[0-9a-f]" 16 hex16)
set(line "pmpi_mpi4py: rank [0-9]+: [0-9]+ wrong values, digest ${hex16}")
set(good ": 0 wrong values, digest [0-9a-f]+$")

run("plain MPI" plain plain_err ${mpirun} ${PYTHON} ${SCRIPT} 150)
rank_lines("${plain}" "${line}" "${good}" plain_lines)
run("LD_PRELOAD" preloaded preloaded_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THRESHOLD=2 COMMFIT_PLAN_AFTER=0 COMMFIT_PLAN_BUDGET=1000000
    ${mpirun} -x LD_PRELOAD=${preload} -x COMMFIT_THRESHOLD -x COMMFIT_PLAN_AFTER -x COMMFIT_PLAN_BUDGET -x ASAN_OPTIONS ${PYTHON} ${SCRIPT} 150)
rank_lines("${preloaded}" "${line}" "${good}" preloaded_lines)
message(STATUS "LD_PRELOAD summary: ${preloaded_err}")
if(NOT "${preloaded_lines}" STREQUAL "${plain_lines}")
  message(FATAL_ERROR "the preloaded run's receive buffers differ from plain MPI's:\n${preloaded_lines}\n${plain_lines}")
endif()
if(NOT "${preloaded_err}" MATCHES "commfit-pmpi: ([0-9]+) intercepted calls?: ([0-9]+) replayed by commfit [^\n]*\ncommfit-pmpi: ([0-9]+) patterns? seen, ([0-9]+) planned[^\n]* ([0-9]+) failed to plan")
  message(FATAL_ERROR "no summary (the interposer off?):\n${preloaded_err}")
endif()
if(NOT CMAKE_MATCH_1 EQUAL 450 OR CMAKE_MATCH_2 LESS 10 OR CMAKE_MATCH_4 LESS 3 OR NOT CMAKE_MATCH_5 EQUAL 0)
  message(FATAL_ERROR "intercepted ${CMAKE_MATCH_1} of 450, replayed ${CMAKE_MATCH_2}, planned ${CMAKE_MATCH_4}, failed ${CMAKE_MATCH_5}:\n${preloaded_err}")
endif()

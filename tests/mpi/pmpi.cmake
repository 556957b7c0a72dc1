# The PMPI interposer's test (tests/mpi/CMakeLists.txt): runs pmpi_alltoallv (an unmodified MPI
# program) plainly, with LD_PRELOAD=libcommfit_pmpi.so, and linked with the interposer, and requires
# byte-identical output; the preloaded and linked runs must report planned patterns and replays.
# Then one recorded pattern (COMMFIT_RECORD) is planned offline with `commfit plan` and given back
# as COMMFIT_PLAN: the calls of that pattern must replay it, again with identical output.
# -DMPIEXEC -DNP -DMODE -DEXE -DLINKED -DLIB -DCOMMFIT -DWORK [-DSANITIZE=ON]
# These programs make few, short calls: the planning budget (COMMFIT_PLAN_BUDGET) would stop
# planning after the first pattern, so it is lifted here to test the planning paths themselves
# (tests/mpi/pmpi_budget.cmake tests the budget).
set(ENV{COMMFIT_PLAN_BUDGET} 1000000)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# Enough calls for the variants' plans, made on the root's thread, to be taken up: an agreement's
# decisions come log2(p) + 1 calls after the call it is on (p = 6: 5 calls), and a plan is taken
# up within five agreements of its start.
set(iterations 32)
if(MODE STREQUAL "drift")
  set(iterations 40)   # blocks of 16 calls (tests/mpi/pmpi_alltoallv.c)
endif()
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP})
# Under the sanitizers the preloaded library comes before the ASan runtime the program links.
set(asan "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")

include(${CMAKE_CURRENT_LIST_DIR}/pmpi_run.cmake)

run("plain MPI" plain plain_err ${CMAKE_COMMAND} -E env COMMFIT_PMPI=0 ${asan} ${mpirun} ${EXE} ${iterations} ${MODE})
# The root plans inside the call here (COMMFIT_PLAN_THREAD=0), so that when each plan is taken up
# does not depend on a thread's pace; the variant below plans on the thread.
run("LD_PRELOAD" preloaded preloaded_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_THRESHOLD=2 COMMFIT_RECORD=${WORK}/recorded COMMFIT_PLAN_THREAD=0
    COMMFIT_PLAN_AFTER=0 ${mpirun} -x LD_PRELOAD=${LIB} -x COMMFIT_THRESHOLD -x COMMFIT_RECORD -x COMMFIT_PLAN_THREAD -x COMMFIT_PLAN_AFTER
    -x ASAN_OPTIONS ${EXE} ${iterations} ${MODE})
# Linked, in the checking mode (an agreement on every call), trying the last pattern before
# agreeing (COMMFIT_SPECULATE=1: misses must redo the call).
run("linked" linked linked_err ${CMAKE_COMMAND} -E env ${asan} COMMFIT_STRATEGY=direct COMMFIT_THRESHOLD=3 COMMFIT_CHECK=1 COMMFIT_SPECULATE=1
    ${mpirun} -x COMMFIT_STRATEGY -x COMMFIT_THRESHOLD -x COMMFIT_CHECK -x COMMFIT_SPECULATE -x ASAN_OPTIONS ${LINKED} ${iterations} ${MODE})
message(STATUS "plain:\n${plain}")
message(STATUS "LD_PRELOAD summary: ${preloaded_err}")
message(STATUS "linked summary: ${linked_err}")
string(REGEX MATCHALL "rank [0-9]+ digest" lines "${plain}")
list(LENGTH lines n)
if(NOT n EQUAL NP)
  message(FATAL_ERROR "the plain run printed ${n} digests for ${NP} ranks")
endif()
foreach(run preloaded linked)
  if(NOT "${${run}}" STREQUAL "${plain}")
    message(FATAL_ERROR "${run}: the receive buffers differ from plain MPI's:\n${${run}}\nplain:\n${plain}")
  endif()
  # The summary: something planned and replayed, nothing failed; the unusual calls went to MPI.
  # Replayed: by a plan, or (the lagged path's calls with no plan in use) by the direct exchange.
  if(NOT "${${run}_err}" MATCHES "commfit-pmpi: ([0-9]+) intercepted calls?: ([0-9]+) replayed by commfit .* ([0-9]+) as a direct exchange, ([0-9]+) not eligible\ncommfit-pmpi: ([0-9]+) patterns? seen, ([0-9]+) planned.*, ([0-9]+) adapted from a plan of their sparsity pattern, ([0-9]+) re-planned instead.* ([0-9]+) failed to plan")
    message(FATAL_ERROR "${run}: no summary line:\n${${run}_err}")
  endif()
  math(EXPR replayed "${CMAKE_MATCH_2} + ${CMAKE_MATCH_3}")
  set(not_eligible ${CMAKE_MATCH_4})
  set(planned ${CMAKE_MATCH_6})
  math(EXPR reused "${CMAKE_MATCH_7} + ${CMAKE_MATCH_8}")
  set(failed ${CMAKE_MATCH_9})
  if(replayed LESS 20 OR planned LESS 2 OR NOT failed EQUAL 0)
    message(FATAL_ERROR "${run}: replayed ${replayed}, planned ${planned}, failed ${failed}:\n${${run}_err}")
  endif()
  # The lagged path (preloaded) replays the calls with a strided datatype too (packed); the
  # checking mode (linked) sends them to MPI.
  if(run STREQUAL "linked" AND not_eligible LESS 2)
    message(FATAL_ERROR "linked: only ${not_eligible} calls not eligible:\n${${run}_err}")
  endif()
  if(run STREQUAL "preloaded" AND NOT not_eligible EQUAL 0)
    message(FATAL_ERROR "preloaded: ${not_eligible} calls not eligible on the lagged path:\n${${run}_err}")
  endif()
  # resize: the second size set of the first pattern reuses its plan (adapted, or re-planned when
  # the cost model says so) at once, without waiting for COMMFIT_THRESHOLD calls.
  if(run STREQUAL "linked" AND NOT "${${run}_err}" MATCHES " ([1-9][0-9]*) of them at once as the last pattern \\(([1-9][0-9]*) tries missed\\)")
    message(FATAL_ERROR "linked: COMMFIT_SPECULATE=1 neither hit nor missed:\n${${run}_err}")
  endif()
  # drift: the plan in use replays the calls whose sizes drifted, with no agreement in the call.
  if(run STREQUAL "preloaded" AND MODE STREQUAL "drift" AND NOT "${${run}_err}" MATCHES " ([1-9][0-9]*) with counts other than their plan's")
    message(FATAL_ERROR "preloaded: no call replayed counts other than its plan's:\n${${run}_err}")
  endif()
  if(run STREQUAL "linked" AND MODE STREQUAL "resize" AND reused LESS 1)
    message(FATAL_ERROR "${run}: new sizes of a planned pattern were not reused:\n${${run}_err}")
  endif()
  # The verdict line: one of its forms, and never MPI kept for a plan or a direct exchange it
  # calls faster (but in sum over patterns, each judged slower on its own).
  if(NOT "${${run}_err}" MATCHES "commfit-pmpi: (replaying|the direct exchange kept|MPI_Alltoallv kept|not measured)")
    message(FATAL_ERROR "${run}: no verdict line:\n${${run}_err}")
  endif()
  if("${${run}_err}" MATCHES "MPI_Alltoallv kept: (plans|the direct exchange) [0-9.]+x faster here[,( ]")
    message(FATAL_ERROR "${run}: the verdict keeps MPI for something it calls faster:\n${${run}_err}")
  endif()
endforeach()
# A preloaded run under VARS (NAME=VALUE...): its output must be plain MPI's, and its summary must
# match PATTERN (WHAT names what that shows).
function(preloaded_variant label pattern what)
  set(exports "")
  foreach(v ${ARGN})
    string(REGEX REPLACE "=.*" "" name "${v}")
    list(APPEND exports -x ${name})
  endforeach()
  run("${label}" out err ${CMAKE_COMMAND} -E env ${asan} ${ARGN}
      ${mpirun} -x LD_PRELOAD=${LIB} ${exports} -x ASAN_OPTIONS ${EXE} ${iterations} ${MODE})
  message(STATUS "${label} summary: ${err}")
  if(NOT "${out}" STREQUAL "${plain}")
    message(FATAL_ERROR "${label}: the receive buffers differ from plain MPI's:\n${out}")
  endif()
  if(NOT "${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${label}: ${what}:\n${err}")
  endif()
endfunction()

# COMMFIT_MAX_PLANS=1: each new plan drops the least recently used one; the bytes stay MPI's. In the
# checking mode, where every call is agreed and so every pattern counted: on the lagged path the
# agreements see one call in log2(p) or more, and whether a communicator's second pattern
# (MPI_Alltoall's, every 4th iteration) is seen often enough to be planned is a matter of the draw.
preloaded_variant("COMMFIT_MAX_PLANS=1" " ([1-9][0-9]*) plans dropped" "no plan was dropped"
                  COMMFIT_MAX_PLANS=1 COMMFIT_THRESHOLD=2 COMMFIT_CHECK=1)
# Planning on the root's own thread (the default) while the calls go on: every plan is taken up
# within five agreements of its start, so patterns are planned and replayed in this short run too
# (each planned at the first agreement that sees it, so that a pattern of a few calls has them).
preloaded_variant("COMMFIT_PLAN_THREAD=1" " ([1-9][0-9]*) replayed by commfit .* ([1-9][0-9]*) planned" "nothing planned on a thread and replayed"
                  COMMFIT_THRESHOLD=1 COMMFIT_PLAN_THREAD=1 COMMFIT_PLAN_AFTER=0)
# A plan that cannot be built (the memory strategy with 16 free bytes per rank): the pattern goes
# to MPI on every rank, the bytes are MPI's, the summary says it failed.
preloaded_variant("infeasible plan" " ([1-9][0-9]*) failed to plan" "no planning failure reported"
                  COMMFIT_STRATEGY=memory "COMMFIT_OPTIONS=memory=16" COMMFIT_PLAN_AFTER=0)

# COMMFIT_RECORD: every pattern's matrix, as commfit plan reads it.
file(GLOB recorded ${WORK}/recorded/*.json)
list(LENGTH recorded n)
if(n LESS 2)
  message(FATAL_ERROR "COMMFIT_RECORD wrote ${n} matrices")
endif()
# COMMFIT_PLAN: a recorded pattern of all NP ranks, planned offline, replayed from the file.
file(GLOB world ${WORK}/recorded/alltoallv-p${NP}-*.json)
list(SORT world)
list(GET world 0 matrix)
run("commfit plan" planned planned_err ${COMMFIT} plan ${matrix} --strategy bounded -o ${WORK}/recorded.plan -q)
# In the checking mode, where every call is agreed: the recorded pattern may be one the program
# calls once (MPI_Alltoall's, the third of a run), which the lagged path's agreements need not see.
preloaded_variant("COMMFIT_PLAN" "\\(([1-9][0-9]*) from COMMFIT_PLAN\\)" "no call replayed the plan file"
                  COMMFIT_PLAN=${WORK}/recorded.plan COMMFIT_CHECK=1)

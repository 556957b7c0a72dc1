# The PMPI interposer given an edited plan as COMMFIT_PLAN (runtime/pmpi.cpp): a recorded pattern
# is planned offline, then one figure the plan declares is edited (tests/mpi/plan_edit.cpp): rank
# 1's staging area to 3 GiB, the phase count to 2^24, or rank 1's request window to 2^20, each in
# both forms of a plan. The interposer must load COMMFIT_PLAN with every check of Executor::load:
# it refuses each edited plan and says so, replays nothing from it, sends the calls to MPI, and
# the receive buffers are plain MPI's. The honest plans, in both forms, are replayed.
# -DMPIEXEC -DNP -DMODE -DEXE -DLIB -DCOMMFIT -DPLAN_EDIT -DWORK
# Under the sanitizers the preloaded library comes before the ASan runtime the program links.
set(ENV{ASAN_OPTIONS} "detect_leaks=0:verify_asan_link_order=0")
set(ENV{COMMFIT_PLAN_BUDGET} 1000000)   # few short calls: planning is what is tested, not its budget
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(iterations 12)
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP} -x ASAN_OPTIONS)

set(run_timeout 120)
include(${CMAKE_CURRENT_LIST_DIR}/pmpi_run.cmake)

run("plain MPI" plain plain_err ${CMAKE_COMMAND} -E env COMMFIT_PMPI=0 ${mpirun} ${EXE} ${iterations} ${MODE})
run("record" recorded recorded_err ${CMAKE_COMMAND} -E env COMMFIT_RECORD=${WORK}/recorded
    ${mpirun} -x LD_PRELOAD=${LIB} -x COMMFIT_RECORD ${EXE} ${iterations} ${MODE})
file(GLOB world ${WORK}/recorded/alltoallv-p${NP}-*.json)
list(SORT world)
list(GET world 0 matrix)
# two-stage stages pieces on the ranks between; throttled carries a request window (4).
run("plan two-stage" o e ${COMMFIT} plan ${matrix} --strategy two-stage -q -o ${WORK}/staged.plan)
run("plan throttled" o e ${COMMFIT} plan ${matrix} --strategy throttled --max-outstanding 4 -q -o ${WORK}/window.plan)
run("convert" o e ${COMMFIT} convert ${WORK}/staged.plan ${WORK}/staged.cfp)

# COMMFIT_PLAN=PLAN: the output must be plain MPI's and the summary must match PATTERN.
function(with_plan plan pattern what)
  run("COMMFIT_PLAN=${plan}" out err ${CMAKE_COMMAND} -E env COMMFIT_PLAN=${WORK}/${plan}
      ${mpirun} -x LD_PRELOAD=${LIB} -x COMMFIT_PLAN ${EXE} ${iterations} ${MODE})
  message(STATUS "COMMFIT_PLAN=${plan}: ${err}")
  if(NOT "${out}" STREQUAL "${plain}")
    message(FATAL_ERROR "COMMFIT_PLAN=${plan}: the receive buffers differ from plain MPI's:\n${out}\nplain:\n${plain}")
  endif()
  if(NOT "${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "COMMFIT_PLAN=${plan}: ${what}:\n${err}")
  endif()
endfunction()

with_plan(staged.plan "\\(([1-9][0-9]*) from COMMFIT_PLAN\\)" "the honest plan directory was not replayed")
with_plan(staged.cfp "\\(([1-9][0-9]*) from COMMFIT_PLAN\\)" "the honest binary plan was not replayed")

set(refused "commfit-pmpi: COMMFIT_PLAN's [^\n]* refused \\(not used\\): rank [0-9]+: ")
set(none "\\(0 from COMMFIT_PLAN\\)")
foreach(form plan cfp)
  run("edit staging" o e ${PLAN_EDIT} ${WORK}/staged.plan ${WORK}/edited_staging.${form} staging_bytes 1 3221225472)
  run("edit phases" o e ${PLAN_EDIT} ${WORK}/staged.plan ${WORK}/edited_phases.${form} phases 0 16777216)
  run("edit window" o e ${PLAN_EDIT} ${WORK}/window.plan ${WORK}/edited_window.${form} max_outstanding 1 1048576)
  with_plan(edited_staging.${form} "${refused}[^\n]*/staging_bytes: staging_bytes 3221225472 but the steps use at most [0-9]+\n.*${none}"
            "the plan with a 3 GiB staging area was not refused")
  with_plan(edited_phases.${form} "${refused}[^\n]*/phases: phases 16777216 but the steps use at most [0-9]+ .*${none}"
            "the plan with 2^24 phases was not refused")
  with_plan(edited_window.${form} "${refused}[^\n]*: the rank schedules hash to h64:[0-9a-f]+, not to the h64:[0-9a-f]+ the plan was written with.*${none}"
            "the plan with an edited request window was not refused")
endforeach()

# The production path of examples/halo_exchange.cpp: write the matrix, plan it with the commfit
# command line (directory and binary form, and `commfit convert` both ways), run the example on
# each plan. Any failing step fails the test.
# cmake -DMPIEXEC=... -DNP=6 -DHALO=... -DCOMMFIT=... -DWORK=dir -P halo_cli.cmake
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  message("$ ${ARGN}\n${out}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "step failed (${rc})")
  endif()
endfunction()
set(MPIRUN ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP})
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
step(${MPIRUN} ${HALO} --write-matrix ${WORK}/halo.json)
step(${COMMFIT} plan ${WORK}/halo.json -o ${WORK}/halo.plan)
step(${MPIRUN} ${HALO} --plan ${WORK}/halo.plan)
step(${COMMFIT} plan ${WORK}/halo.json -o ${WORK}/halo.cfp)
step(${MPIRUN} ${HALO} --plan ${WORK}/halo.cfp --protocol handshake)
step(${COMMFIT} convert ${WORK}/halo.plan ${WORK}/converted.cfp)
step(${MPIRUN} ${HALO} --plan ${WORK}/converted.cfp)
step(${COMMFIT} convert ${WORK}/converted.cfp ${WORK}/back.plan)
step(${MPIRUN} ${HALO} --plan ${WORK}/back.plan)

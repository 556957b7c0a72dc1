# cmake -DBUILD_DIR=... -DSOURCE=examples/consumer -DPLANNER_SOURCE=tests/install/planner_consumer
#       -DWORK=dir -DGENERATOR=... -DCXX=... -DC=... -DMPIEXEC=... -DSANITIZE=ON|OFF -DFORTRAN=ON|OFF
#       -P install_consumer.cmake
# Every step must succeed; the consumer itself checks every received byte (exit 1 otherwise).
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  message("$ ${ARGN}\n${out}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "step failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(PREFIX ${WORK}/prefix)
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
# The layout of cmake/install.cmake: executor headers at include/commfit/, the planner's under their
# folders, the schemas, the man page; the Fortran module when a Fortran compiler built it.
set(expected bin/commfit include/commfit/commfit_exec.hpp include/commfit/commfit_exec.h
    include/commfit/migrate.hpp include/commfit/ir/plan.h include/commfit/planner/pipeline.h
    include/commfit/workloads/generators.h include/commfit/runtime/in_job.hpp lib/libcommfit_pmpi.so
    share/commfit/schemas share/man/man1/commfit.1)
if(FORTRAN)
  list(APPEND expected include/commfit/commfit_exec.mod)
endif()
foreach(f ${expected})
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB schemas ${PREFIX}/share/commfit/schemas/*.json)
if(NOT schemas)
  message(FATAL_ERROR "no schemas in share/commfit/schemas")
endif()
foreach(lib exec ir planner workloads runtime)
  file(GLOB_RECURSE found ${PREFIX}/*/commfit-${lib}.pc)
  if(NOT found)
    message(FATAL_ERROR "no commfit-${lib}.pc under ${PREFIX}")
  endif()
endforeach()
file(GLOB_RECURSE pc_files ${PREFIX}/*/commfit-exec.pc)
file(GLOB_RECURSE config_files ${PREFIX}/*/commfitConfig.cmake)
if(NOT pc_files OR NOT config_files)
  message(FATAL_ERROR "no commfit-exec.pc or commfitConfig.cmake under ${PREFIX}")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)

# The example, copied out of the source tree so that nothing of it can be found by accident.
file(COPY ${SOURCE}/ DESTINATION ${WORK}/src)
set(flags "")
if(SANITIZE)
  set(flags -fsanitize=address,undefined)
endif()
string(REPLACE ";" " " flags_str "${flags}")

# 1. find_package(commfit) -> commfit::exec.
step(${CMAKE_COMMAND} -S ${WORK}/src -B ${WORK}/build-cmake -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX}
     -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${C} "-DCMAKE_EXE_LINKER_FLAGS=${flags_str}")
step(${CMAKE_COMMAND} --build ${WORK}/build-cmake)

# 2. pkg-config commfit-exec, nothing else: the compiler driver and the flags pkg-config gives.
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --cflags --libs commfit-exec RESULT_VARIABLE rc OUTPUT_VARIABLE pc_flags
                ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "pkg-config --cflags --libs commfit-exec failed: ${err}")
endif()
message("pkg-config --cflags --libs commfit-exec: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
step(${CXX} -std=c++17 ${flags} ${WORK}/src/consumer.cpp -o ${WORK}/consumer-pc ${pc_flags})
# The old bare include names still compile (the canonical ones are <commfit/...>).
file(WRITE ${WORK}/bare.cpp "#include <commfit_exec.hpp>\n#include <migrate.hpp>\n#include <commfit_exec.h>\n")
step(${CXX} -std=c++17 -fsyntax-only ${WORK}/bare.cpp ${pc_flags})

# The executor's users link none of the planner's dependencies (issue 16): no METIS, no
# libcrypto, no MPI C++ bindings; MPI's C library, yes.
foreach(exe ${WORK}/build-cmake/consumer ${WORK}/consumer-pc ${WORK}/build-cmake/consumer_in_job)
  execute_process(COMMAND ldd ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE libs ERROR_VARIABLE err)
  message("$ ldd ${exe}\n${libs}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "ldd ${exe} failed")
  endif()
  foreach(forbidden libmetis libcrypto libmpi_cxx libgfortran)
    if(libs MATCHES "${forbidden}")
      message(FATAL_ERROR "${exe} links ${forbidden}")
    endif()
  endforeach()
  if(NOT libs MATCHES "libmpi\\.so")
    message(FATAL_ERROR "${exe} does not link MPI's C library")
  endif()
endforeach()

# 3. The planner library with its headers: find_package(commfit COMPONENTS planner workloads).
file(COPY ${PLANNER_SOURCE}/ DESTINATION ${WORK}/planner-src)
step(${CMAKE_COMMAND} -S ${WORK}/planner-src -B ${WORK}/build-planner -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX}
     -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${C} "-DCMAKE_EXE_LINKER_FLAGS=${flags_str}")
step(${CMAKE_COMMAND} --build ${WORK}/build-planner)

# A plan made by the installed commfit, in both plan forms, run by both builds.
set(NP 4)
step(${WORK}/build-cmake/consumer --write-matrix ${WORK}/m.json ${NP})
step(${PREFIX}/bin/commfit plan ${WORK}/m.json -o ${WORK}/m.plan)
step(${PREFIX}/bin/commfit plan ${WORK}/m.json -o ${WORK}/m.cfp --strategy auto)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(MPIRUN ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP})
step(${MPIRUN} ${WORK}/build-cmake/consumer ${WORK}/m.plan)
step(${MPIRUN} ${WORK}/consumer-pc ${WORK}/m.cfp)
# The plan made in-process by the installed planner library is the one the installed CLI made.
step(${WORK}/build-planner/plan_in_process ${WORK}/m.json ${WORK}/m-lib.plan)
step(${MPIRUN} ${WORK}/build-cmake/consumer ${WORK}/m-lib.plan)
# In-job planning with the installed runtime library (find_package(commfit COMPONENTS runtime)).
step(${MPIRUN} ${WORK}/build-cmake/consumer_in_job "strategy=auto")
step(${MPIRUN} ${WORK}/build-cmake/consumer_in_job "strategy=bounded concurrency=2 network=ib")

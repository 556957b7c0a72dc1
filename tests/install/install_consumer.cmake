# cmake -DBUILD_DIR=... -DSOURCE=examples/consumer -DWORK=dir -DGENERATOR=... -DCXX=... -DC=...
#       -DMPIEXEC=... -DSANITIZE=ON|OFF -P install_consumer.cmake
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
foreach(f bin/commfit include/commfit/backends/exec/commfit_exec.hpp include/commfit/backends/exec/commfit_exec.h)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
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

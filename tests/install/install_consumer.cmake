# cmake -DBUILD_DIR=... -DSOURCE=examples/consumer -DPLANNER_SOURCE=tests/install/planner_consumer
#       -DPATTERN_DOC=docs/PATTERN.md -DWORK=dir -DGENERATOR=... -DCXX=... -DC=... -DMPIEXEC=...
#       -DSANITIZE=ON|OFF -DFORTRAN=ON|OFF -P install_consumer.cmake
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
    include/commfit/commfit_pattern.h include/commfit/commfit_pattern.hpp
    share/commfit/schemas share/man/man1/commfit.1 share/doc/commfit/GUIDE.md share/doc/commfit/EXECUTOR.md)
if(FORTRAN)
  list(APPEND expected include/commfit/commfit_exec.mod include/commfit/commfit_pattern.mod
       lib/libcommfit_runtime_fortran.a)
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

# 1. find_package(commfit): every consumer of examples/consumer/CMakeLists.txt (C++, C and, with a
#    Fortran compiler, Fortran; each against commfit::exec and against commfit::runtime; the
#    pattern consumers against commfit::runtime, and commfit::runtime_fortran for Fortran).
step(${CMAKE_COMMAND} -S ${WORK}/src -B ${WORK}/build-cmake -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX}
     -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${C} "-DCMAKE_EXE_LINKER_FLAGS=${flags_str}")
step(${CMAKE_COMMAND} --build ${WORK}/build-cmake)
set(cmake_consumers consumer consumer_c consumer_in_job consumer_c_in_job pattern_consumer pattern_consumer_c)
if(FORTRAN)
  list(APPEND cmake_consumers consumer_f consumer_f_in_job pattern_consumer_f)
endif()
foreach(exe ${cmake_consumers})
  if(NOT EXISTS ${WORK}/build-cmake/${exe})
    message(FATAL_ERROR "find_package(commfit) did not build ${exe}")
  endif()
endforeach()

# 2. pkg-config and the MPI compiler wrappers, nothing else: exactly the lines docs/EXECUTOR.md
#    ("Building against an installed commfit") and the consumers' heads give.
#      mpicxx app.cpp $(pkg-config --cflags --libs commfit-exec)       C++17 and later
#      mpicc  app.c   $(pkg-config --cflags --libs commfit-exec)
#      mpifort app.f90 $(pkg-config --cflags --libs commfit-exec)
#      mpicxx app.cpp $(pkg-config --cflags --libs commfit-runtime)    commfit::runtime::plan (C++20, in the .pc)
#      mpicc  app.c   $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)
#      mpifort app.f90 $(pkg-config --cflags commfit-exec) $(pkg-config --libs commfit-runtime)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
function(pc out)
  execute_process(COMMAND pkg-config ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "pkg-config ${ARGN} failed: ${err}")
  endif()
  message("pkg-config ${ARGN}: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
pc(exec_flags --cflags --libs commfit-exec)
pc(runtime_flags --cflags --libs commfit-runtime)
pc(exec_cflags --cflags commfit-exec)
pc(runtime_libs --libs commfit-runtime)
find_program(MPICXX mpicxx REQUIRED)
find_program(MPICC mpicc REQUIRED)
# The wrappers over the compilers the build used (Open MPI's OMPI_CXX / OMPI_CC; MPICH's MPICH_*).
set(ENV{OMPI_CXX} ${CXX})
set(ENV{OMPI_CC} ${C})
set(ENV{MPICH_CXX} ${CXX})
set(ENV{MPICH_CC} ${C})
step(${MPICXX} -std=c++17 ${flags} ${WORK}/src/consumer.cpp -o ${WORK}/consumer-pc ${exec_flags})
step(${MPICC} ${flags} ${WORK}/src/consumer.c -o ${WORK}/consumer-c-pc ${exec_flags})
step(${MPICXX} ${flags} -DCOMMFIT_CONSUMER_IN_JOB ${WORK}/src/consumer.cpp -o ${WORK}/consumer-in-job-pc ${runtime_flags})
step(${MPICC} ${flags} -DCOMMFIT_CONSUMER_IN_JOB ${WORK}/src/consumer.c -o ${WORK}/consumer-c-in-job-pc ${exec_cflags} ${runtime_libs})
set(pc_consumers consumer-pc consumer-c-pc)
set(pc_in_job consumer-in-job-pc consumer-c-in-job-pc)
if(FORTRAN)
  find_program(MPIFORT mpifort REQUIRED)
  step(${MPIFORT} ${flags} ${WORK}/src/consumer.F90 -o ${WORK}/consumer-f-pc ${exec_flags})
  step(${MPIFORT} ${flags} -DCOMMFIT_CONSUMER_IN_JOB ${WORK}/src/consumer.F90 -o ${WORK}/consumer-f-in-job-pc ${exec_cflags} ${runtime_libs})
  list(APPEND pc_consumers consumer-f-pc)
  list(APPEND pc_in_job consumer-f-in-job-pc)
endif()

# The pattern consumers, built with the lines docs/PATTERN.md gives ("Building against an installed
# commfit"), read from the page: `mpicxx app.cpp $(pkg-config ...)` and its C and Fortran twins,
# each $(pkg-config ARGS) run as written, app.* replaced by the consumer's source and `-o` added.
# A line of another shape fails the test, and so does a language without its line.
file(STRINGS ${PATTERN_DOC} doc_lines REGEX "^mpi[a-z]+ app\\.")
set(pattern_pc "")
foreach(line IN LISTS doc_lines)
  if(NOT line MATCHES "^(mpicxx|mpicc|mpifort) app\\.(cpp|c|f90)(( \\$\\(pkg-config [a-z -]+\\))+)$")
    message(FATAL_ERROR "${PATTERN_DOC}: a build line this test cannot follow: ${line}")
  endif()
  set(wrapper ${CMAKE_MATCH_1})
  set(lang ${CMAKE_MATCH_2})
  string(REGEX MATCHALL "pkg-config [a-z -]+" calls "${CMAKE_MATCH_3}")
  set(line_flags "")
  foreach(call IN LISTS calls)
    string(REPLACE "pkg-config " "" args "${call}")
    separate_arguments(args UNIX_COMMAND "${args}")
    pc(call_flags ${args})
    list(APPEND line_flags ${call_flags})
  endforeach()
  if(lang STREQUAL "cpp")
    step(${MPICXX} ${flags} ${WORK}/src/pattern_consumer.cpp -o ${WORK}/pattern-consumer-pc ${line_flags})
    list(APPEND pattern_pc pattern-consumer-pc)
  elseif(lang STREQUAL "c")
    step(${MPICC} ${flags} ${WORK}/src/pattern_consumer.c -o ${WORK}/pattern-consumer-c-pc ${line_flags})
    list(APPEND pattern_pc pattern-consumer-c-pc)
  elseif(FORTRAN)
    step(${MPIFORT} ${flags} ${WORK}/src/pattern_consumer.F90 -o ${WORK}/pattern-consumer-f-pc ${line_flags})
    list(APPEND pattern_pc pattern-consumer-f-pc)
  endif()
endforeach()
set(pattern_expected pattern-consumer-pc pattern-consumer-c-pc)
if(FORTRAN)
  list(APPEND pattern_expected pattern-consumer-f-pc)
endif()
foreach(exe ${pattern_expected})
  list(FIND pattern_pc ${exe} at)
  if(at LESS 0)
    message(FATAL_ERROR "${PATTERN_DOC} gives no build line for ${exe}")
  endif()
endforeach()

# The old bare include names still compile (the canonical ones are <commfit/...>).
file(WRITE ${WORK}/bare.cpp "#include <commfit_exec.hpp>\n#include <migrate.hpp>\n#include <commfit_exec.h>\n")
step(${CXX} -std=c++17 -fsyntax-only ${WORK}/bare.cpp ${exec_flags})

# The executor's users link none of the planner's dependencies: no METIS, no libcrypto, no MPI
# C++ bindings, no libgfortran unless they are Fortran programs; MPI's C library, yes.
foreach(exe build-cmake/consumer build-cmake/consumer_c consumer-pc consumer-c-pc build-cmake/consumer_in_job)
  execute_process(COMMAND ldd ${WORK}/${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE libs ERROR_VARIABLE err)
  message("$ ldd ${exe}\n${libs}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "ldd ${exe} failed")
  endif()
  foreach(forbidden libmetis libcrypto libmpi_cxx libgfortran)
    # mpicxx itself may add MPI's C++ bindings (Open MPI's wrapper does): not commfit's doing.
    if(forbidden STREQUAL "libmpi_cxx" AND exe STREQUAL "consumer-pc")
      continue()
    endif()
    if(libs MATCHES "${forbidden}")
      message(FATAL_ERROR "${exe} links ${forbidden}")
    endif()
  endforeach()
  if(NOT libs MATCHES "libmpi\\.so")
    message(FATAL_ERROR "${exe} does not link MPI's C library")
  endif()
endforeach()

# The static libraries are position-independent: a shared library (a Python extension, a plugin)
# built on top of them links.
file(WRITE ${WORK}/plugin.c "#include <commfit/commfit_exec.h>\nint plugin_load(const char* p, commfit_exec_t* ex) { return commfit_exec_load(p, MPI_COMM_WORLD, 0, ex); }\nint plugin_plan(const int* s, const int* r, commfit_exec_t* ex) { return commfit_exec_plan(MPI_COMM_WORLD, s, r, 1, 0, 0, ex); }\n")
step(${MPICC} -shared -fPIC ${WORK}/plugin.c -o ${WORK}/libplugin.so ${exec_cflags} ${runtime_libs})

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
foreach(exe build-cmake/consumer build-cmake/consumer_c ${pc_consumers})
  step(${MPIRUN} ${WORK}/${exe} ${WORK}/m.plan)
  step(${MPIRUN} ${WORK}/${exe} ${WORK}/m.cfp)
endforeach()
# The find_package Fortran consumers run, except in a sanitized clang build: CMake links them with
# gfortran's implicit libraries, which under -fsanitize include GCC's sanitizer runtimes, and with
# libraries instrumented by clang the program then has two (ASan refuses to start). They are built
# there all the same, and the mpifort consumers above run.
set(run_cmake_fortran ${FORTRAN})
if(SANITIZE AND CXX MATCHES "clang")
  set(run_cmake_fortran OFF)
endif()
if(run_cmake_fortran)
  step(${MPIRUN} ${WORK}/build-cmake/consumer_f ${WORK}/m.plan)
endif()
# The plan made in-process by the installed planner library is the one the installed CLI made.
step(${WORK}/build-planner/plan_in_process ${WORK}/m.json ${WORK}/m-lib.plan)
step(${MPIRUN} ${WORK}/build-cmake/consumer ${WORK}/m-lib.plan)
# In-job planning with the installed runtime library, every language, both ways of building.
step(${MPIRUN} ${WORK}/build-cmake/consumer_in_job "strategy=auto")
step(${MPIRUN} ${WORK}/build-cmake/consumer_in_job "strategy=bounded concurrency=2 network=ib")
step(${MPIRUN} ${WORK}/build-cmake/consumer_c_in_job "strategy=direct")
if(run_cmake_fortran)
  step(${MPIRUN} ${WORK}/build-cmake/consumer_f_in_job "strategy=direct")
endif()
foreach(exe ${pc_in_job})
  step(${MPIRUN} ${WORK}/${exe} "strategy=auto")
endforeach()
# Patterns from global ids with the installed runtime library, every language, both ways of
# building; another rank count and other options once each.
foreach(exe build-cmake/pattern_consumer build-cmake/pattern_consumer_c ${pattern_pc})
  step(${MPIRUN} ${WORK}/${exe})
endforeach()
if(run_cmake_fortran)
  step(${MPIRUN} ${WORK}/build-cmake/pattern_consumer_f)
endif()
step(${MPIEXEC} --allow-run-as-root --oversubscribe -np 3 ${WORK}/build-cmake/pattern_consumer "strategy=auto lookup=ring2d")
step(${MPIEXEC} --allow-run-as-root --oversubscribe -np 5 ${WORK}/pattern-consumer-c-pc "lookup=ring reverse=allreduce")

# Installation (docs/EXECUTOR.md, "Building against an installed commfit"), included by the
# top-level CMakeLists.txt after every library target exists:
#   bin/commfit                          the planner CLI
#   bin/commfit-calibrate                measures the machine, writes a machine file (an MPI program)
#   lib/libcommfit_{ir,planner,workloads,exec,exec_fortran,runtime,runtime_fortran}.a
#   lib/libcommfit_pmpi.so               the PMPI interposer (LD_PRELOAD, or link it before MPI)
#   include/commfit/commfit_exec.{h,hpp}, migrate.hpp   the executor: <commfit/commfit_exec.hpp>
#   include/commfit/commfit_exec.mod     the executor's Fortran module (gfortran's format)
#   include/commfit/commfit_pattern.mod  the patterns' Fortran module (commfit_runtime_fortran)
#   include/commfit/{ir,passes,planner,backends,workloads}/*.h   the planner's headers ("ir/plan.h")
#   include/commfit/runtime/{in_job,adapt}.hpp   in-job planning (commfit::runtime::plan)
#   include/commfit/commfit_pattern.{h,hpp}   patterns from global ids (commfit_runtime)
#   lib/cmake/commfit/                   find_package(commfit [COMPONENTS exec ir planner workloads])
#   lib/pkgconfig/commfit-{exec,ir,planner,workloads,runtime}.pc
#   share/commfit/schemas/*.json         the file formats' JSON schemas
#   share/man/man1/commfit.1             cmake/commfit.1.in with the CLI's --help (cmake/manpage.cmake)
#   share/doc/commfit/*.md               the documentation (GUIDE.md first), examples/README.md
# Each library carries only its own dependencies: the executor needs MPI's C library alone.
include(CMakePackageConfigHelpers)

install(TARGETS commfit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET commfit-calibrate)
  install(TARGETS commfit-calibrate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set_target_properties(commfit_ir PROPERTIES EXPORT_NAME ir)
set_target_properties(commfit_planner PROPERTIES EXPORT_NAME planner)
set_target_properties(commfit_workloads PROPERTIES EXPORT_NAME workloads)
set(COMMFIT_INSTALL_TARGETS commfit_ir commfit_planner commfit_workloads)
foreach(t commfit_exec commfit_exec_fortran commfit_runtime commfit_runtime_fortran commfit_pmpi)
  if(TARGET ${t})
    string(REPLACE "commfit_" "" name ${t})
    set_target_properties(${t} PROPERTIES EXPORT_NAME ${name})
    list(APPEND COMMFIT_INSTALL_TARGETS ${t})
  endif()
endforeach()
install(TARGETS ${COMMFIT_INSTALL_TARGETS} EXPORT commfitTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# Headers: the planner's keep their source-tree paths under include/commfit; the executor's public
# ones sit at its top (executor_impl.h is internal).
foreach(dir ir passes planner workloads backends)
  file(GLOB headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.h)
  install(FILES ${headers} DESTINATION ${COMMFIT_INSTALL_INCLUDE}/${dir})
endforeach()
if(TARGET commfit_exec)
  install(FILES ${PROJECT_SOURCE_DIR}/backends/exec/commfit_exec.h ${PROJECT_SOURCE_DIR}/backends/exec/commfit_exec.hpp
                ${PROJECT_SOURCE_DIR}/backends/exec/migrate.hpp
          DESTINATION ${COMMFIT_INSTALL_INCLUDE})
endif()
if(TARGET commfit_runtime)
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/in_job.hpp ${PROJECT_SOURCE_DIR}/runtime/adapt.hpp
          DESTINATION ${COMMFIT_INSTALL_INCLUDE}/runtime)
  # Patterns from global ids (runtime/commfit_pattern.{h,hpp}): beside commfit_exec.h, whose codes
  # and error message they use.
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/commfit_pattern.h ${PROJECT_SOURCE_DIR}/runtime/commfit_pattern.hpp
          DESTINATION ${COMMFIT_INSTALL_INCLUDE})
endif()
if(TARGET commfit_exec_fortran)
  install(FILES ${COMMFIT_FORTRAN_MODULE} DESTINATION ${COMMFIT_INSTALL_INCLUDE})
endif()
if(TARGET commfit_runtime_fortran)
  install(FILES ${COMMFIT_PATTERN_FORTRAN_MODULE} DESTINATION ${COMMFIT_INSTALL_INCLUDE})
endif()
file(GLOB COMMFIT_SCHEMAS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/schemas/*.json)
install(FILES ${COMMFIT_SCHEMAS} DESTINATION ${CMAKE_INSTALL_DATADIR}/commfit/schemas)

# The man page, from `commfit --help` and each `commfit SUB --help`, at build time.
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/commfit.1
  COMMAND ${CMAKE_COMMAND} -DCOMMFIT=$<TARGET_FILE:commfit> -DOUT=${PROJECT_BINARY_DIR}/commfit.1
          -DVERSION=${PROJECT_VERSION} -DTEMPLATE=${PROJECT_SOURCE_DIR}/cmake/commfit.1.in
          -DENVIRONMENT=${PROJECT_SOURCE_DIR}/cmake/manpage_environment.txt
          -P ${PROJECT_SOURCE_DIR}/cmake/manpage.cmake
  DEPENDS commfit ${PROJECT_SOURCE_DIR}/cmake/manpage.cmake ${PROJECT_SOURCE_DIR}/cmake/commfit.1.in
          ${PROJECT_SOURCE_DIR}/cmake/manpage_environment.txt
  COMMENT "Generating commfit.1 from cmake/commfit.1.in and commfit --help")
add_custom_target(commfit_manpage ALL DEPENDS ${PROJECT_BINARY_DIR}/commfit.1)
install(FILES ${PROJECT_BINARY_DIR}/commfit.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# The documentation the man page's SEE ALSO names: the user's guide and the reference pages, the
# README and the examples' walk-through.
file(GLOB COMMFIT_DOCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${COMMFIT_DOCS} ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/examples/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The CMake package: one export set; cmake/commfitConfig.cmake.in finds, per component, only what
# that component needs.
set(COMMFIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/commfit)
install(EXPORT commfitTargets NAMESPACE commfit:: DESTINATION ${COMMFIT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/commfitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/commfitConfig.cmake INSTALL_DESTINATION ${COMMFIT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/commfitConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/commfitConfig.cmake ${PROJECT_BINARY_DIR}/commfitConfigVersion.cmake
  DESTINATION ${COMMFIT_CMAKE_DIR})

# pkg-config, one file per library. Relocatable: the prefix is found from the .pc file's own place
# (${pcfiledir}), so `cmake --install build --prefix DIR` gives working files wherever DIR is.
file(RELATIVE_PATH COMMFIT_PC_UP /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
function(commfit_pc name description requires cflags libs)
  set(PC_NAME ${name})
  set(PC_DESCRIPTION ${description})
  set(PC_REQUIRES ${requires})
  set(PC_CFLAGS ${cflags})
  set(PC_LIBS ${libs})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/commfit.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
# What a consumer needs beyond the library itself: the header-only libraries the planner's headers
# include (Requires), the C++ standard those headers are written in (Cflags: C++20), and, because
# the libraries are static, the C++ runtime and libm (Libs), so that a C or Fortran program links
# them with plain mpicc or mpifort. Requires chains them: commfit-runtime brings commfit-exec and
# commfit-planner, which brings commfit-ir.
set(headers_only "nlohmann_json, eigen3")
commfit_pc(commfit-ir "commfit IR: matrices, schedules, plans and the plan files"
  "${headers_only}" "-std=c++20 -I\${includedir}/commfit" "-lcommfit_ir -lstdc++ -lm")
commfit_pc(commfit-planner "commfit planner: passes, strategies and the pipeline behind `commfit plan`"
  "commfit-ir" "-I\${includedir}/commfit" "-lcommfit_planner -pthread")
commfit_pc(commfit-workloads "commfit workloads: matrix generators and mesh readers (METIS)"
  "commfit-ir" "-I\${includedir}/commfit" "-lcommfit_workloads -lmetis")
if(TARGET commfit_exec)
  # MPI through the MPI's own .pc file for its C library (Debian: ompi-c); none found, the user
  # adds MPI's flags (or compiles with mpicc). commfit_ir is listed directly rather than through
  # commfit-ir.pc, whose Requires and C++20 are the planner headers' (the executor's headers are
  # C and C++17 and need none). The Fortran module's library comes first when it was built: a C
  # or C++ program pulls nothing from it, so one line serves the three languages.
  set(mpi_pc "")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    foreach(mod ompi-c mpi-c mpich)
      pkg_check_modules(COMMFIT_PC_MPI QUIET ${mod})
      if(COMMFIT_PC_MPI_FOUND)
        set(mpi_pc ${mod})
        break()
      endif()
    endforeach()
  endif()
  set(exec_libs "-lcommfit_exec -lcommfit_ir -lstdc++ -lm")
  if(TARGET commfit_exec_fortran)
    set(exec_libs "-lcommfit_exec_fortran ${exec_libs}")
  endif()
  commfit_pc(commfit-exec "commfit executor: replays a plan made by `commfit plan` as a drop-in for MPI_Alltoallv"
    "${mpi_pc}" "-I\${includedir} -I\${includedir}/commfit" "${exec_libs}")
  # In-job planning: the executor and the planner (whose headers need JSON, Eigen and C++20). C and
  # Fortran callers of commfit_exec_plan and of patterns take the executor's Cflags and these Libs;
  # the patterns' Fortran library comes first when it was built (C and C++ pull nothing from it).
  set(runtime_libs "-lcommfit_runtime")
  if(TARGET commfit_runtime_fortran)
    set(runtime_libs "-lcommfit_runtime_fortran ${runtime_libs}")
  endif()
  commfit_pc(commfit-runtime "commfit runtime: plans an MPI_Alltoallv pattern inside the job (commfit::runtime::plan, commfit_exec_plan, patterns from global ids)"
    "commfit-exec, commfit-planner" "-I\${includedir}/commfit" "${runtime_libs}")
endif()

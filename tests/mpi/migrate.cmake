# The migration interface of the executor (backends/exec/migrate.hpp): memory plans replayed
# byte-exactly with the application's per-piece buffers, peak bytes held within each rank's limit.
# Included from tests/mpi/CMakeLists.txt (uses its commfit_mpi_test).
add_executable(test_migrate test_migrate.cpp)
target_link_libraries(test_migrate PRIVATE commfit_exec commfit_planner commfit_workloads)
foreach(np 4 8)
  commfit_mpi_test(exec_migrate_np${np} ${np} 300 $<TARGET_FILE:test_migrate>)
endforeach()

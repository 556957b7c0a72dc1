# commfit-calibrate under mpirun (tests/mpi/CMakeLists.txt): it writes a machine file that the
# reader accepts (it reads back what it writes) and `commfit plan --machine` plans with; its
# figures are measured (positive, finite), and it says what it fitted and how well.
# -DMPIEXEC -DNP -DEXE -DCOMMFIT -DMATRIX -DWORK
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(asan "ASAN_OPTIONS=detect_leaks=0")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${asan} ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP} -x ASAN_OPTIONS ${EXE}
                        --quick --blocks 3 --name "test machine" -o ${WORK}/machine.json
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 280)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "commfit-calibrate: exit ${rc}\n${out}\n${err}")
endif()
foreach(line "ranks on [0-9]+ node" "tau [^,]+, bandwidth [0-9.]+ GB/s, overhead" "an 8-byte MPI_Allreduce" "wrote .*machine.json")
  if(NOT out MATCHES "commfit-calibrate: [^\n]*${line}")
    message(FATAL_ERROR "commfit-calibrate did not say \"${line}\":\n${out}")
  endif()
endforeach()
file(READ ${WORK}/machine.json text)
foreach(field tau_s bandwidth_Bps overhead_s)
  string(JSON v GET "${text}" ${field})
  if(NOT v MATCHES "^[0-9]+(\\.[0-9]*)?(e[-+]?[0-9]+)?$" OR v MATCHES "^0(\\.0*)?$")
    message(FATAL_ERROR "${field} = ${v}:\n${text}")
  endif()
endforeach()
string(JSON name GET "${text}" name)
string(JSON sizes LENGTH "${text}" calibration intra_node_ping_pong sizes)
if(NOT name STREQUAL "test machine" OR sizes LESS 5)
  message(FATAL_ERROR "name \"${name}\", ${sizes} ping-pong sizes:\n${text}")
endif()
execute_process(COMMAND ${COMMFIT} plan ${MATRIX} -o ${WORK}/m.plan --machine ${WORK}/machine.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "  machine ${WORK}/machine.json \\(test machine\\): network flow, tau ")
  message(FATAL_ERROR "plan --machine: exit ${rc}\n${out}\n${err}")
endif()

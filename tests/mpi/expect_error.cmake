# Runs `mpirun -np NP EXE MODE`, which must fail: a non-zero exit status, and COUNT lines
# "commfit exec: error: ..." matching EXPECT on stderr (COUNT = NP: every rank reported it).
# In EXPECT, write '.' for the characters ';', '[' and ']'.
# cmake -DMPIEXEC=... -DNP=4 -DEXE=... -DMODE=... -DEXPECT=regex -DCOUNT=4 -P expect_error.cmake
execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${NP} ${EXE} ${MODE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
message("${out}${err}")
if(rc STREQUAL "0")
  message(FATAL_ERROR "${MODE}: expected a non-zero exit status, got 0")
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${MODE}: ${rc}")
endif()
# ';', '[' and ']' would split or merge CMake list items: match against a sanitised copy.
string(REPLACE ";" "," clean "${err}")
string(REPLACE "[" "(" clean "${clean}")
string(REPLACE "]" ")" clean "${clean}")
string(REGEX MATCHALL "commfit exec: error: [^\n]*" lines "${clean}")
set(n 0)
foreach(line IN LISTS lines)
  if(line MATCHES "${EXPECT}")
    math(EXPR n "${n} + 1")
  endif()
endforeach()
if(NOT n EQUAL COUNT)
  message(FATAL_ERROR "${MODE}: expected ${COUNT} error lines matching '${EXPECT}', found ${n}")
endif()
message("${MODE}: exit status ${rc}, ${n} ranks reported the expected error")

# The validation of the activity-based power (docs/energy.md): OpenSTA's switching, internal and leakage
# power of a top against capsgen's hand calculation from the Liberty tables (the same pin activities;
# switching 0.5 C V^2 x density with C the fan-out pins' Liberty capacitance plus the output ports'
# set_load; internal the internal_power tables' energies at OpenSTA's slews x duty x transitions;
# leakage the cells' cell_leakage_power), and the activity must come from the simulation (measured
# nets, none defaulted).
#   cmake -DREPORT=<report.json> -DTOP=<module> -DSWITCHING_TOL=<fraction> -DINTERNAL_TOL=<fraction>
#         -DLEAKAGE_TOL=<fraction> -P check_power.cmake
file(READ "${REPORT}" j)
include("${CMAKE_CURRENT_LIST_DIR}/report_top.cmake")
report_top("${j}" "${REPORT}" "${TOP}" found)
string(JSON sw GET "${j}" tops ${found} power power switching_w)
string(JSON hsw GET "${j}" tops ${found} power hand switching_w)
string(JSON in GET "${j}" tops ${found} power power internal_w)
string(JSON hin GET "${j}" tops ${found} power hand internal_w)
string(JSON lk GET "${j}" tops ${found} power power leakage_w)
string(JSON hlk GET "${j}" tops ${found} power hand leakage_w)
string(JSON measured GET "${j}" tops ${found} power nets measured)
string(JSON defaulted GET "${j}" tops ${found} power nets defaulted)
message(STATUS "${TOP}: switching OpenSTA ${sw} W, hand ${hsw} W; internal OpenSTA ${in} W, hand ${hin} W; "
               "leakage OpenSTA ${lk} W, hand ${hlk} W; "
               "${measured} nets measured, ${defaulted} defaulted")
if(measured LESS 1 OR NOT defaulted EQUAL 0)
  message(FATAL_ERROR "${TOP}: the activity was not mapped (measured ${measured}, defaulted ${defaulted})")
endif()
# CMake has no floating point: awk compares the relative difference.
foreach(pair "sw;hsw;${SWITCHING_TOL}" "in;hin;${INTERNAL_TOL}" "lk;hlk;${LEAKAGE_TOL}")
  list(GET pair 0 a)
  list(GET pair 1 b)
  list(GET pair 2 tol)
  execute_process(COMMAND awk "BEGIN { a = ${${a}}; b = ${${b}}; d = (a - b) / b; if (d < 0) d = -d; print (d <= ${tol}) ? \"ok\" : \"off\", d }"
                  OUTPUT_VARIABLE res OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "${a} against ${b}: ${res} (tolerance ${tol})")
  if(NOT res MATCHES "^ok")
    message(FATAL_ERROR "${TOP}: OpenSTA's ${a} differs from the hand calculation by more than ${tol}: ${res}")
  endif()
endforeach()

# Build time against run time. A Release build compiles with -O3. Most of its compile time goes to
# code whose run time nobody waits for: the RTL emitters (gen/emit), the synthesis drivers
# (gen/synth), the command-line front end (gen/cli), the Verilator model builder (gen/sim) and the
# tests. At -O3, gen/emit/engine.cpp alone takes about 90 s of CPU; at -O1, 15 s. Those targets
# compile at CAPSGEN_BUILD_TIME_OPT. The code that does the numeric work (the golden model, the
# numerics, the compiler and its cycle models, the memory, DRAM, ROMANet, PIM and search models, the
# dataset readers) and the benchmarks keep -O3.
set(CAPSGEN_BUILD_TIME_OPT -O1 CACHE STRING
    "Optimization of the emitters, CLI, synthesis drivers and tests in Release builds (empty: -O3)")

# Compiles `targets` at CAPSGEN_BUILD_TIME_OPT in a Release build. The option comes after the build
# type's -O3 on the command line, so it wins; a precompiled header built at -O3 stays usable (GCC only
# refuses one whose __OPTIMIZE__ differs, i.e. at -O0).
function(capsgen_optimize_for_build_time)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Release" OR NOT CAPSGEN_BUILD_TIME_OPT)
    return()
  endif()
  foreach(_t IN LISTS ARGN)
    get_target_property(_type ${_t} TYPE)
    if(_type MATCHES "^(STATIC_LIBRARY|EXECUTABLE|OBJECT_LIBRARY)$")
      target_compile_options(${_t} PRIVATE ${CAPSGEN_BUILD_TIME_OPT})
    endif()
  endforeach()
endfunction()

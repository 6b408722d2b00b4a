# Precompiled headers for capsgen's own C++ (not the Verilated testbenches: tb/CMakeLists.txt).
# The standard library, fmt and GoogleTest headers cost more to parse than most of our sources cost
# to compile. Two header sets are compiled once each, in a small object library, and every target of
# gen/ and tests/unit reuses them (REUSE_FROM): one for gen/ and the tools, one with GoogleTest for
# the unit tests. A source whose flags do not match the header's compiles without it (GCC ignores an
# unusable precompiled header), so the headers change build time only, never the result.

set(CAPSGEN_PCH_HEADERS <algorithm> <cstdint> <filesystem> <fstream> <map> <optional> <sstream> <stdexcept>
                        <string> <vector> <fmt/format.h>)

# An object library that only compiles `headers` into a precompiled header (with `libs`' usage
# requirements, so that its definitions equal those of the targets that reuse it).
function(capsgen_pch_provider name)
  cmake_parse_arguments(P "" "" "HEADERS;LIBS;DEFINITIONS" ${ARGN})
  file(WRITE ${CMAKE_BINARY_DIR}/${name}.cpp "// ${name}: compiles the precompiled header only\n")
  add_library(${name} OBJECT ${CMAKE_BINARY_DIR}/${name}.cpp)
  target_precompile_headers(${name} PRIVATE ${P_HEADERS})
  target_link_libraries(${name} PRIVATE ${P_LIBS})
  target_compile_definitions(${name} PRIVATE ${P_DEFINITIONS})
endfunction()

# Every library and executable defined in `dir` and its subdirectories, in `out`.
function(capsgen_targets_in dir out)
  get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    capsgen_targets_in(${_sub} _more)
    list(APPEND _targets ${_more})
  endforeach()
  set(${out} ${_targets} PARENT_SCOPE)
endfunction()

# Every C++ library and executable under `dir` reuses `provider`'s precompiled header.
function(capsgen_reuse_pch dir provider)
  capsgen_targets_in(${dir} _targets)
  foreach(_t IN LISTS _targets)
    get_target_property(_type ${_t} TYPE)
    if(_type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
      target_precompile_headers(${_t} REUSE_FROM ${provider})
    endif()
  endforeach()
endfunction()

# Gather address generator block test (tb/gather_tb.cpp), included by tb/CMakeLists.txt. The
# reference element sequence and the descriptor encoder are gen/isa/gather.cpp (the same code the
# compiler's executor uses), compiled in here; it needs only isa/program.hpp's structs.
target_sources(tb_blocks PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gather_tb.cpp
  ${CAPSGEN_ROOT}/gen/isa/gather.cpp)
capsgen_verilate(tb_blocks capsgen_gather Vgather)

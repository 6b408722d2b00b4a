# Memory-system block test (tb/memsys_tb.cpp), included by tb/CMakeLists.txt after tb_blocks and
# capsgen_verilate() are defined. capsgen_memsys exists only for the presets it supports (SEP, HY or
# SMP with codes that fit 8-bit lanes, docs/rtl-memsys.md); without it the test prints SKIP (memsys.json says why).
target_sources(tb_blocks PRIVATE ${CMAKE_CURRENT_LIST_DIR}/memsys_tb.cpp)
if(EXISTS ${CAPSGEN_RTL_DIR}/capsgen_memsys.v)
  capsgen_verilate(tb_blocks capsgen_memsys Vmemsys)
  target_compile_definitions(tb_blocks PRIVATE CAPSGEN_TB_MEMSYS=1)
endif()

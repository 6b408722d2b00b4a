# DMA block test (tb/dma_tb.cpp), included by tb/CMakeLists.txt after tb_blocks and
# capsgen_verilate() are defined. The off-chip memory model times read data with the cycle-level
# DRAM model of gen/dram (and reports its row-buffer, energy and bandwidth statistics), compiled in
# here with what it needs (the YAML reader of gen/config for dram_spec.cpp, core/input_error).
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
target_sources(tb_blocks PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/dma_tb.cpp
  ${CAPSGEN_ROOT}/gen/dram/dram_model.cpp
  ${CAPSGEN_ROOT}/gen/dram/dram_energy.cpp
  ${CAPSGEN_ROOT}/gen/dram/dram_spec.cpp
  ${CAPSGEN_ROOT}/gen/dram/address_mapping.cpp
  ${CAPSGEN_ROOT}/gen/config/yaml_util.cpp
  ${CAPSGEN_ROOT}/gen/core/input_error.cpp)
target_link_libraries(tb_blocks PRIVATE fmt::fmt yaml-cpp)
capsgen_verilate(tb_blocks capsgen_dma Vdma)

# DMA block test (tb/dma_tb.cpp), included by tb/CMakeLists.txt after tb_blocks and
# capsgen_verilate() are defined. The off-chip memory model times read data with the cycle-level
# DRAM model of gen/dram (and reports its row-buffer, energy and bandwidth statistics; compiled in by
# capsgen_add_dram_model, tb/CMakeLists.txt).
target_sources(tb_blocks PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dma_tb.cpp)
capsgen_add_dram_model(tb_blocks)
capsgen_verilate(tb_blocks capsgen_dma Vdma)

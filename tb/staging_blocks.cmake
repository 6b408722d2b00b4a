# Staging buffer block test (tb/staging_tb.cpp), included by tb/CMakeLists.txt.
target_sources(tb_blocks PRIVATE ${CMAKE_CURRENT_LIST_DIR}/staging_tb.cpp)
capsgen_verilate(tb_blocks capsgen_staging Vstaging)

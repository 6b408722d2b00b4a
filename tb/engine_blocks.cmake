# Compute-engine block test (tb/engine_tb.cpp), included by tb/CMakeLists.txt. The reference is
# gen/isa/gemm_ref.cpp (the functional executor's Gemm) and the descriptor encoder gen/isa/engine_descriptor.cpp,
# compiled in here (gather.cpp and the numerics come with the gather and activation tests, or with
# tb_engine). CAPSGEN_ENGINE_TB_TARGET: tb_blocks, or tb_engine alone (CAPSGEN_TB_ENGINE_ONLY).
target_sources(${CAPSGEN_ENGINE_TB_TARGET} PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/engine_tb.cpp
  ${CAPSGEN_ROOT}/gen/isa/engine_descriptor.cpp
  ${CAPSGEN_ROOT}/gen/isa/engine_timing.cpp
  ${CAPSGEN_ROOT}/gen/isa/gemm_ref.cpp)
target_link_libraries(${CAPSGEN_ENGINE_TB_TARGET} PRIVATE nlohmann_json::nlohmann_json)  # its results document
capsgen_verilate(${CAPSGEN_ENGINE_TB_TARGET} capsgen_engine Vengine)

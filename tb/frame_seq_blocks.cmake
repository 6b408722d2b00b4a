# Frame sequencer block test (tb/frame_seq_tb.cpp), included by tb/CMakeLists.txt after tb_blocks
# and capsgen_verilate() are defined. The testbench packs its programs with the compiler's frame
# encoding (gen/isa/frames.cpp; engine payloads through gen/isa/engine_descriptor.cpp). capsgen_frame_seq exists
# only where capsgen_chip does (chip.json: "supported": true); elsewhere the test prints SKIP.
target_sources(tb_blocks PRIVATE ${CMAKE_CURRENT_LIST_DIR}/frame_seq_tb.cpp
  ${CAPSGEN_ROOT}/gen/isa/frames.cpp ${CAPSGEN_ROOT}/gen/isa/engine_descriptor.cpp ${CAPSGEN_ROOT}/gen/isa/gather.cpp)
if(EXISTS ${CAPSGEN_RTL_DIR}/capsgen_frame_seq.v)
  capsgen_verilate(tb_blocks capsgen_frame_seq Vframe_seq)
  target_compile_definitions(tb_blocks PRIVATE CAPSGEN_TB_FRAME_SEQ_MODEL=1)
endif()

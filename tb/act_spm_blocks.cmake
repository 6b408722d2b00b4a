# Activation-unit and scratchpad block tests (tb/activation_tb.cpp, tb/scratchpad_tb.cpp), included
# by tb/CMakeLists.txt after tb_blocks and capsgen_verilate() are defined. The activation test uses
# the numerics LUT builders and operators (gen/numerics), compiled in here. The memories' models are
# also built for the PMU test (which co-simulates each PMU with its memory).
if(activation IN_LIST CAPSGEN_TB_BLOCKS)
  target_sources(tb_blocks PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/activation_tb.cpp
    ${CAPSGEN_NUMERICS_SOURCES})
  capsgen_verilate(tb_blocks capsgen_activation Vact)
  capsgen_verilate(tb_blocks capsgen_activation_bank Vact_bank)
  # The ROMs and the divider in one model, through a testbench-only wrapper (one build instead of four);
  # with TB_ACT_PIM_RECIP the same wrapper puts the reciprocal divide behind the divider's ports.
  set(_rtl_sources_saved ${RTL_SOURCES})
  list(APPEND RTL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/verilog/tb_act_parts.v)
  capsgen_verilate(tb_blocks tb_act_parts Vact_parts)
  if(EXISTS ${CAPSGEN_RTL_DIR}/capsgen_act_pim_recip.v)
    capsgen_verilate(tb_blocks tb_act_parts Vact_pim_recip +define+TB_ACT_PIM_RECIP)
    target_compile_definitions(tb_blocks PRIVATE CAPSGEN_TB_ACT_PIM_RECIP=1)
  endif()
  set(RTL_SOURCES ${_rtl_sources_saved})
  # The PIM-CapsNet units, when the preset selects them (--mode pim sweeps them).
  if(EXISTS ${CAPSGEN_RTL_DIR}/capsgen_act_pim_exp.v)
    capsgen_verilate(tb_blocks capsgen_act_pim_exp Vact_pim_exp)
    target_compile_definitions(tb_blocks PRIVATE CAPSGEN_TB_ACT_PIM_EXP=1)
  endif()
  if(EXISTS ${CAPSGEN_RTL_DIR}/capsgen_act_pim_rsqrt.v)
    capsgen_verilate(tb_blocks capsgen_act_pim_rsqrt Vact_pim_rsqrt)
    target_compile_definitions(tb_blocks PRIVATE CAPSGEN_TB_ACT_PIM_RSQRT=1)
  endif()
endif()
if(scratchpad IN_LIST CAPSGEN_TB_BLOCKS)
  target_sources(tb_blocks PRIVATE ${CMAKE_CURRENT_LIST_DIR}/scratchpad_tb.cpp)
endif()
# One model per memory of the organization (SEP: data, weight, acc; SMP: shared; HY: all four).
if(scratchpad IN_LIST CAPSGEN_TB_BLOCKS OR pmu IN_LIST CAPSGEN_TB_BLOCKS)
  foreach(_mem data weight acc shared)
    if(EXISTS ${CAPSGEN_RTL_DIR}/capsgen_spm_${_mem}.v)
      capsgen_verilate(tb_blocks capsgen_spm_${_mem} Vspm_${_mem})
      string(TOUPPER ${_mem} _MEM)
      target_compile_definitions(tb_blocks PRIVATE CAPSGEN_TB_SPM_${_MEM}=1)
    endif()
  endforeach()
endif()

# Power-management unit block test (tb/pmu_tb.cpp), included by tb/CMakeLists.txt after
# act_spm_blocks.cmake: each PMU is co-simulated with the Verilated memory of the same name
# (Vspm_<name>, built there). One model per PMU the design has (power gating on: one per memory).
target_sources(tb_blocks PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pmu_tb.cpp)
foreach(_mem data weight acc shared)
  if(EXISTS ${CAPSGEN_RTL_DIR}/capsgen_pmu_${_mem}.v)
    if(NOT EXISTS ${CAPSGEN_RTL_DIR}/capsgen_spm_${_mem}.v)
      message(FATAL_ERROR "capsgen_pmu_${_mem}.v without capsgen_spm_${_mem}.v")
    endif()
    capsgen_verilate(tb_blocks capsgen_pmu_${_mem} Vpmu_${_mem})
    string(TOUPPER ${_mem} _MEM)
    target_compile_definitions(tb_blocks PRIVATE CAPSGEN_TB_PMU_${_MEM}=1)
  endif()
endforeach()

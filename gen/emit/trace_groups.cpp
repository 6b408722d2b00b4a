#include "emit/trace_groups.hpp"

#include <fmt/format.h>

#include "emit/chip.hpp"
#include "emit/sequencer.hpp"

namespace capsgen::emit {

const TraceGroups& accel_trace_groups() {
  static const TraceGroups g = {
      {"Sequencer (program fetch)",
       {"clk_i", "rst_ni", "start_i", "busy_o", "done_o", "error_o", "pf_valid_o", "pf_ready_i", "pf_addr_o",
        "pr_valid_i", "pr_data_i", "u_seq.state_q", "u_seq.words_received_q", "stat_ops_o", "stat_fetch_wait_o"}},
      {"Engine controller",
       {"u_engine.desc_valid_i", "u_engine.desc_ready_o", "u_engine.desc_kind", "op_busy_o", "op_done_o",
        "u_engine.streaming_q", "u_engine.act_mode_q", "u_engine.batch_q", "u_engine.chunk_q", "u_engine.tile_q",
        "u_engine.vector_q", "u_engine.issue", "u_engine.last_k", "u_engine.credits_q"}},
      {"Streamer stalls",
       {"u_engine.st_rd_avail", "u_engine.tile_ok", "u_engine.credit_ok", "stat_cycles_o", "stat_vectors_o",
        "stat_stall_data_o", "stat_stall_tile_o", "stat_stall_out_o"}},
      {"Data port and gather",
       {"drd_en_o", "drd_vec_o", "drd_addr_o", "drd_data_i", "u_engine.g_valid", "u_engine.g_ready",
        "u_engine.g_zero"}},
      {"Array edges: tiles", {"wrd_en_o", "wrd_addr_o", "wrd_data_i", "u_engine.tile_ready"}},
      {"Accumulators: init", {"brd_en_o", "brd_addr_o", "brd_data_i", "u_engine.io_rd"}},
      {"Activation and output FIFO",
       {"u_engine.a_valid", "u_engine.fifo_push", "u_engine.fifo_count_q", "u_engine.pop", "u_engine.ap_busy"}},
      {"Output port", {"wr_en_o", "wr_vec_o", "wr_mask_o", "wr_addr_o", "wr_data_o"}},
  };
  return g;
}

const TraceGroups& chip_trace_groups() {
  static const TraceGroups g = {
      {"Frame sequencer", {"clk_i", "rst_ni", "start_i", "busy_o", "done_o", "error_o", "pf_valid_o", "pf_ready_i",
                           "pf_addr_o", "pr_valid_i", "pr_data_i", "u_seq.state_q", "u_seq.frame_addr_q",
                           "u_seq.frame_kind", "u_seq.frame_wait_dma", "u_seq.frame_wait_engine",
                           "u_seq.dma_outstanding_q", "u_seq.frame_taken", "u_seq.cycle_class"}},
      {"Engine", {"u_seq.eng_valid_o", "u_engine.desc_ready_o", "u_engine.desc_kind", "op_busy_o", "op_done_o",
                  "u_engine.streaming_q", "u_engine.batch_q", "u_engine.chunk_q", "u_engine.tile_q", "u_engine.issue", "stat_cycles_o",
                  "stat_stall_data_o", "stat_stall_tile_o", "stat_stall_out_o", "stat_wr_wait_o"}},
      {"Engine memory ports", {"e_drd_en", "e_drd_addr", "e_wrd_en", "e_wrd_addr", "e_brd_en", "e_brd_addr", "e_wr_en",
                               "e_wr_addr", "e_wr_ready"}},
      {"DMA", {"u_seq.dma_valid_o", "dma_busy_o", "dma_done_o", "u_dma.desc_store_i", "u_dma.desc_dram_addr_i",
               "u_dma.desc_spm_addr_i", "u_dma.desc_size_i", "d_spm_req", "d_spm_gnt", "d_spm_we", "d_spm_addr"}},
      {"Off-chip port", {"dram_req_valid_o", "dram_req_ready_i", "dram_req_addr_o", "dram_req_len_o", "dram_req_write_o",
                         "dram_rd_valid_i", "dram_rd_ready_o", "dram_wr_valid_o", "dram_wr_ready_i", "dram_wr_strb_o"}},
      {"Sectors (PMU)", {"u_seq.pmu_valid_o", "pmu_ready", "sleep_req_data", "sector_asleep_data_o", "sleep_req_weight",
                         "sector_asleep_weight_o", "sleep_req_acc", "sector_asleep_acc_o"}},
  };
  return g;
}

const TraceCodeSignals& accel_trace_code_signals() {
  static const TraceCodeSignals s = {{"u_seq.state_q", "St"}};
  return s;
}

const TraceCodeSignals& chip_trace_code_signals() {
  static const TraceCodeSignals s = {{"u_seq.state_q", "St"}, {"u_seq.cycle_class", "Cycle"}, {"u_seq.frame_kind", "Kind"}};
  return s;
}

TraceGroups present_trace_groups(const Design& design, const std::string& top, const TraceGroups& groups) {
  TraceGroups out;
  for (const auto& [group, signals] : groups) {
    std::vector<std::string> present;
    for (const std::string& s : signals)
      if (design.has_signal(top, s)) present.push_back(s);
    if (!present.empty()) out.emplace_back(group, std::move(present));
  }
  return out;
}

namespace {

std::string groups_json(const TraceGroups& groups) {
  std::string j = "[";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    j += fmt::format("{}\n    {{\"group\": \"{}\", \"signals\": [", g ? "," : "", groups[g].first);
    for (std::size_t s = 0; s < groups[g].second.size(); ++s) j += fmt::format("{}\"{}\"", s ? ", " : "", groups[g].second[s]);
    j += "]}";
  }
  return j + "\n  ]";
}

}  // namespace

void emit_trace_groups(const AccelConfig& /*cfg: the design holds it*/, Design& design) {
  std::vector<std::string> tops;
  if (design.has_module(kAccelModule))
    tops.push_back(fmt::format("\"{}\": {}", kAccelModule,
                               groups_json(present_trace_groups(design, kAccelModule, accel_trace_groups()))));
  if (design.has_module(kChipModule))
    tops.push_back(fmt::format("\"{}\": {}", kChipModule,
                               groups_json(present_trace_groups(design, kChipModule, chip_trace_groups()))));
  // Each top level's code signals, each {"value": "Name", ...}.
  std::string codes;
  for (const auto& [top, signals] :
       {std::pair{kAccelModule, &accel_trace_code_signals()}, std::pair{kChipModule, &chip_trace_code_signals()}}) {
    if (!design.has_module(top)) continue;
    std::string top_codes;
    for (const auto& [signal, prefix] : *signals) {
      const auto named = design.signal_codes(top, signal, prefix);
      if (named.empty()) continue;
      std::string values;
      for (const auto& [value, name] : named) values += fmt::format("{}\"{}\": \"{}\"", values.empty() ? "" : ", ", value, name);
      top_codes += fmt::format("{}\n      \"{}\": {{{}}}", top_codes.empty() ? "" : ",", signal, values);
    }
    if (!top_codes.empty())
      codes += fmt::format("{}\n    \"{}\": {{{}\n    }}", codes.empty() ? "" : ",", top, top_codes);
  }
  if (!codes.empty()) tops.push_back(fmt::format("\"codes\": {{{}\n  }}", codes));
  std::string j = "{";
  for (std::size_t t = 0; t < tops.size(); ++t) j += fmt::format("{}\n  {}", t ? "," : "", tops[t]);
  design.add_other_file(kTraceGroupsName, j + "\n}\n");
}

}  // namespace capsgen::emit

// The results documents the testbenches write with --results FILE, read into typed structs:
// tb_accel's (and the engine testbench's program mode) "capsgen.accel-results/1"
// (schemas/accel-results.schema.json) and tb_chip's "capsgen.chip-results/1"
// (schemas/chip-results.schema.json). Both hold every figure of the run, the functional coverage
// bins, the testbench's verdict and its problem lines; capsgen sim builds its reports from them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace capsgen::sim {

// The schema names and versions these readers accept.
inline constexpr const char* kAccelResultsSchema = "capsgen.accel-results/1";
inline constexpr const char* kChipResultsSchema = "capsgen.chip-results/1";

// How the testbench judged its run.
struct Verdict {
  bool pass = false;                  // every check passed (and the run got to its end)
  long long checks = 0, errors = 0;   // checks made, and the failed ones
  std::vector<std::string> problems;  // the MISMATCH and FAIL lines, in order
  long long simulated_cycles = 0;     // clock cycles simulated, reset included
  std::optional<long long> trace_reset_released_ps;  // where cycle 0 begins in the FST (ps); none untraced
};

// Functional coverage bins (capsgen regress sums them, docs/regress.md).
struct FunctionalCoverage {
  std::vector<std::pair<std::string, long long>> bins;  // (bin, count), in the testbench's order
  std::vector<std::string> na;                          // bins whose hardware is not in this RTL
};

// The RTL's class prediction (from its own norm codes) and the golden model's; -1 when not made.
struct Prediction {
  long long rtl = -1, golden = -1;
  std::vector<long long> norms;  // the RTL's class norm codes (accelerator testbench)
};

// ---- capsgen.accel-results/1 --------------------------------------------------------------------------

// One descriptor the engine ran: measured cycles and stalls, the compiler's cycle model of them, and
// its port activity.
struct AccelDescriptor {
  std::string id;     // the program's instruction ("i03"); "" in the engine's block test
  std::string label;  // how the testbench's problem lines name it ("conv1 (i00)")
  long long cycles = 0, accept = 0, vectors = 0, writes = 0;
  long long stall_data = 0, stall_tile = 0, stall_out = 0, wr_wait = 0;
  long long model = 0, model_stall_data = 0, model_stall_tile = 0, model_stall_out = 0;
  long long reads_data = 0, reads_data_vec = 0, reads_weight = 0, reads_bias = 0;
  long long start = 0;  // the cycle the engine accepted it
  bool vmode = false, ovec = false;
};

// The packed program as the sequencer ran it (zero unless it ran to its end on tb_accel).
struct AccelProgram {
  long long cycles = 0, model_cycles = 0, ops = 0, fetch_wait = 0, words_per_descriptor = 0;
  std::string fetch;  // "latency1" or "random"
};

struct AccelResults {
  std::string testbench;  // "accel" or "engine"
  Verdict verdict;
  std::vector<AccelDescriptor> descriptors;
  std::vector<std::string> skipped;  // ids of the instructions the engine's program mode left to the executor
  AccelProgram program;
  Prediction prediction;
  FunctionalCoverage coverage;
};

// ---- capsgen.chip-results/1 ---------------------------------------------------------------------------

struct ChipProgram {
  long long cycles = 0;  // start_i to done_o
  long long engine_cycles = 0, engine_model_cycles = 0, stream_model_cycles = 0, frames = 0, words = 0;
};

// The frame sequencer's cycle classes; they sum to the program's cycles.
struct ChipSequencer {
  long long fetch = 0, engine = 0, dma = 0, pmu = 0, eng_busy = 0, wait_dma = 0, wait_engine = 0, dma_busy = 0, pmu_wait = 0,
            drain = 0;
};

// The engine's stall cycles summed over its frames.
struct EngineStalls {
  long long stall_data = 0, stall_tile = 0, stall_out = 0, wr_wait = 0;
};

struct ChipInstruction {
  long long index = 0;
  std::string name;
  long long parts = 0, cycles = 0, model = 0;
  long long done = 0;  // the cycle of its last engine frame's op_done_o
};

// The off-chip memory's traffic, row-buffer outcomes, energy (pJ) and bandwidth (the DRAM model).
struct DramTraffic {
  long long read_beats = 0, write_beats = 0, requests = 0, reads = 0, writes = 0, row_hits = 0, misses = 0, conflicts = 0,
            bytes = 0;
  long long energy_pj = 0, act_pj = 0, pre_pj = 0, rd_pj = 0, wr_pj = 0, ref_pj = 0, standby_pj = 0;
  long long pj_per_byte_x100 = 0;                                             // pJ per byte x 100
  long long model_gbps_x1000 = 0, program_gbps_x1000 = 0, peak_gbps_x1000 = 0;  // GB/s x 1000
};

// A memory's port counters (data, weight, acc, shared, lanes).
struct ChipMemory {
  std::string name;
  long long eng_rd = 0, eng_wr = 0, dma_rd = 0, dma_wr = 0, dma_wait = 0;
};

struct ChipSector {
  std::string memory;
  long long sector = 0, asleep_cycles = 0, sleeps = 0, wakes = 0;
};

struct ChipPmu {
  std::string memory;
  long long sectors = 0, asleep_sector_cycles = 0, barrier_stall = 0, model_asleep = 0, model_all = 0;
};

struct ChipResults {
  Verdict verdict;
  ChipProgram program;
  ChipSequencer sequencer;
  EngineStalls engine_stalls;
  long long checked_operations = 0, checked_elements = 0;  // regions checked against the golden model
  Prediction prediction;
  std::vector<ChipInstruction> instructions;
  DramTraffic dram;
  std::vector<ChipMemory> memories;
  long long access_checks = 0, access_parts = 0;  // figures compared with the compiler's access model
  std::vector<ChipSector> sectors;                // with PMUs
  std::vector<ChipPmu> pmus;                      // with PMUs
  FunctionalCoverage coverage;
};

// Read a results document. Throw capsgen::InputError naming the file and the key (e.g.
// "program.cycles", "descriptors[3].label") when the file cannot be read, is not JSON, names another
// schema or version, or lacks a key or has one of the wrong type.
AccelResults read_accel_results(const std::filesystem::path& path);
ChipResults read_chip_results(const std::filesystem::path& path);

// The results of a testbench run that exited with status `rc` and was asked for `path`: the document,
// or, when the testbench wrote none (it crashed), no figures and a problem line saying so.
AccelResults accel_results_of_run(const std::filesystem::path& path, int rc);
ChipResults chip_results_of_run(const std::filesystem::path& path, int rc);

// Whether a run passed: the testbench exited 0 and judged it passed, no problem line, and the program's
// cycles (start_i to done_o) were measured.
bool run_passed(const Verdict& v, int rc, long long program_cycles);

}  // namespace capsgen::sim

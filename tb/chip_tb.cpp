// tb_chip: the whole accelerator (capsgen_chip: frame sequencer, engine, memsys, DMA, PMUs) running a
// streamed network from its frame program (`capsgen compile --dump-stream DIR`, `capsgen sim --memory dram`).
//   tb_chip --rtl DIR --program DIR [--dram FILE] [--mode stress] [--seed N] [--trace file.fst] [--results FILE]
// The testbench is only what lives outside the chip: the program memory behind the fetch port (1-cycle
// reads; --mode stress: 1-8 cycles and random back-pressure) and the off-chip memory behind the DMA's
// burst port, holding the network's DRAM image (dram.bin), with the cycle-level DRAM model of gen/dram
// (--dram: the preset's offchip.dram description; default the DDR3-1600 x8 chip) timing every read burst (no earlier than the preset's offchip.latency_cycles) and finite write
// bandwidth (--mode stress adds random back-pressure on every channel). It observes and checks:
//   - every byte the chip writes to DRAM, in order, against the frame model's store list (stores.txt):
//     address, strobes, value; a mismatch names the operation, the tensor and index, both values, the cycle;
//   - when the last store of an instruction completes (dma_done_o), every region it stores against the
//     flat executor's memory after that instruction (checks.txt; the executor is bit-exact with the golden
//     model), and at the end the whole DRAM image (dram_final.bin) and the class prediction;
//   - the counters: frames issued per kind and the sequencer's cycle classes (their sum is the cycles),
//     DMA beats, sector wake-ups against the frame model, memsys and sequencer errors.
// Prints "stat ..." lines (per instruction, totals, memories, sectors, DRAM) and "fcov" lines (sector
// sleep/wake bins) for people reading the log; with --results FILE it writes the same figures, the
// verdict and the problem lines as one JSON document (schemas/chip-results.schema.json, also when the
// run fails, as far as it got), which capsgen sim reads.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vchip.h"
#include "common/coverage_out.hpp"
#include "common/bits.hpp"
#include "common/results.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "dram/dram_model.hpp"
#include "dram/offchip_port.hpp"
#include "dram/dram_spec.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Lines that are not empty and not comments ('#' or '//').
std::vector<std::string> lines_of(const std::string& path) {
  std::istringstream in(slurp(path));
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] != '#' && l.rfind("//", 0) != 0) out.push_back(l);
  return out;
}

struct Region {
  std::string name;
  long long elem_base = 0, elements = 0, byte_base = 0;
  int code_bytes = 1;
};
struct Part {
  std::size_t instr = 0;
  std::string name;
  long long model = 0;
};
struct DmaFrame {
  std::size_t part = 0, instr = 0;
  bool store = false;
  long long elements = 0;
};
struct StoreBeat {
  long long dma = 0, byte = 0;
  int bytes = 1;
  long long value = 0;
};
struct Check {
  std::size_t instr = 0;
  std::string name, region;
  long long last_dma = 0, byte_base = 0, elements = 0;
  int code_bytes = 1;
  std::vector<long long> values;
};
// The memsys counters the streamed program must produce (access.txt, gen/compiler/access.hpp).
// The ranges of the on-chip element space: data, weight, acc, shared (HY, SMP) and lanes (HY whose
// shared words hold 32-bit psum lanes: a view of the shared memory, no sectors or PMU of its own).
constexpr int kMems = 5;
const char* const kMemNames[kMems] = {"data", "weight", "acc", "shared", "lanes"};
struct AccessModel {
  bool present = false;
  int memories = 3;
  long long mem[kMems][4] = {};  // eng_rd eng_wr dma_rd dma_wr
  std::vector<long long> sector[kMems];
  std::vector<std::vector<long long>> parts;  // eng_rd[M] eng_wr[M] dma_rd[M] dma_wr[M]
  std::vector<long long> sleeps[kMems], wakes[kMems];  // per sector, as the frame model ordered them
  long long sleep_model[kMems][2] = {};  // asleep sector-cycles and all sector-cycles, modelled
  long long outside = 0;
};
struct RdBurst {
  std::uint32_t addr;
  int len, eb, sent;
  std::uint64_t ready;
};
struct WrBurst {
  std::uint32_t addr;
  int len, eb, got;
};

template <class Dut>
class ChipTb {
 public:
  explicit ChipTb(const tb::Args& args)
      : args_(args), kv_(args.rtl_dir, "chip"), sim_(args), rng_(args.seed * 104729 + 7), report_("chip", args.max_errors),
        dut_(std::make_unique<Dut>(sim_.context())), spec_(capsgen::dram::offchip_dram(args.dram)) {
    if (!kv_.flag("supported")) throw std::runtime_error(args.rtl_dir + "/chip.json: capsgen_chip is not generated for this preset");
    sim_.add(*dut_);
    sim_.open_trace();
    word_bytes_ = kv_.num("word_bytes");
    clock_mhz_ = kv_.real("clock_mhz");
    offchip_ = std::make_unique<capsgen::dram::OffchipPort>(spec_, clock_mhz_, int(kv_.num("latency_cycles")),
                                                            int(kv_.num("max_burst")));
    stress_ = args.mode == "stress";
    if (!args.mode.empty() && !stress_) throw std::runtime_error("--mode: expected 'stress', got '" + args.mode + "'");
  }

  VerilatedContext* context() { return sim_.context(); }

  // The results document (schemas/chip-results.schema.json) before a run: every figure zero, every
  // list empty, no verdict yet (pass false).
  static tb::Json empty_results() {
    tb::Json j;
    j["schema"] = "capsgen.chip-results/1";
    j["pass"] = false;
    j["checks"] = 0;
    j["errors"] = 0;
    j["problems"] = tb::Json::array();
    j["simulated_cycles"] = 0;
    j["trace_reset_released_ps"] = nullptr;
    j["program"] = {{"cycles", 0}, {"engine_cycles", 0}, {"engine_model_cycles", 0}, {"stream_model_cycles", 0},
                    {"frames", 0}, {"words", 0}};
    j["sequencer"] = tb::Json::object();
    for (const char* k : {"fetch", "engine", "dma", "pmu", "eng_busy", "wait_dma", "wait_engine", "dma_busy", "pmu_wait", "drain"})
      j["sequencer"][k] = 0;
    j["engine_stalls"] = {{"stall_data", 0}, {"stall_tile", 0}, {"stall_out", 0}, {"wr_wait", 0}};
    j["checked"] = {{"operations", 0}, {"elements", 0}};
    j["prediction"] = {{"rtl", -1}, {"golden", -1}};
    j["instructions"] = tb::Json::array();
    j["dram"] = tb::Json::object();
    for (const char* k : {"read_beats", "write_beats", "requests", "reads", "writes", "row_hits", "misses", "conflicts", "bytes",
                          "energy_pj", "act_pj", "pre_pj", "rd_pj", "wr_pj", "ref_pj", "standby_pj", "pj_per_byte_x100",
                          "model_gbps_x1000", "program_gbps_x1000", "peak_gbps_x1000"})
      j["dram"][k] = 0;
    j["memories"] = tb::Json::array();
    j["access_model"] = {{"checks", 0}, {"parts", 0}};
    j["sectors"] = tb::Json::array();
    j["pmus"] = tb::Json::array();
    j["functional_coverage"] = tb::Json::object();
    j["functional_coverage_na"] = tb::Json::array();
    return j;
  }

  // The results document as far as the run got, with its verdict.
  tb::Json results() const { return tb::finished_results(results_, report_, sim_); }

  int run() {
    load(args_.program);
    sim_.reset();
    auto& d = *dut_;
    d.prog_base_i = 0;
    d.start_i = 1;
    d.pf_ready_i = 1;
    d.pr_valid_i = 0;
    d.dram_req_ready_i = 1;
    d.dram_rd_valid_i = 0;
    d.dram_wr_ready_i = 1;
    const long long bound = 200000 + 40 * (sum_.at("load_beats") + sum_.at("store_beats")) + 20 * sum_.at("words") +
                            4 * sum_.at("engine_model_cycles");
    std::deque<std::pair<std::uint64_t, std::uint32_t>> fetch;  // (cycle due, word address)
    std::deque<RdBurst> rd;
    std::deque<WrBurst> wr;
    std::size_t store_i = 0, check_i = 0, part = 0;
    long long dma_done = 0;
    bool done = false;
    std::vector<long long> instr_cycles(parts_.empty() ? 0 : parts_.back().instr + 1, 0),
        instr_model(instr_cycles.size(), 0);
    instr_done_.assign(instr_cycles.size(), 0);
    while (!done) {
      if ((long long)sim_.cycle() > bound) {
        report_.fail(sim_.cycle(), "watchdog: no done_o within " + std::to_string(bound) + " cycles (part " +
                                       std::to_string(part) + ", DMA frame " + std::to_string(dma_done) + ")");
        break;
      }
      const std::uint64_t cyc = sim_.cycle();
      // ---- inputs for this cycle (the chip's outputs are from its registers or the previous eval) ----
      d.pr_valid_i = 0;
      if (!fetch.empty() && fetch.front().first <= cyc) {
        const std::uint32_t a = fetch.front().second;
        d.pr_data_i = a < prog_.size() ? prog_[a] : 0;
        d.pr_valid_i = 1;
        fetch.pop_front();
      }
      d.pf_ready_i = stress_ ? rng_.chance(70) : 1;
      d.dram_req_ready_i = stress_ ? rng_.chance(75) : 1;
      if (!d.dram_rd_valid_i && !rd.empty() && rd.front().ready <= cyc && (!stress_ || rng_.chance(80))) {
        RdBurst& b = rd.front();
        const std::uint32_t a = b.addr + std::uint32_t(b.sent * b.eb);
        for (int k = 0; k < word_bytes_; ++k)  // the element in the low bytes, garbage above
          tb::put(d.dram_rd_data_i, 8 * k, 8, k < b.eb ? byte(a + std::uint32_t(k)) : rng_.next() & 0xFF);
        d.dram_rd_valid_i = 1;
      }
      d.dram_wr_ready_i = (!stress_ || rng_.chance(80)) && offchip_->write_ready((long long)cyc);
      d.eval();

      // ---- handshakes of this cycle ----
      if (d.pf_valid_o && d.pf_ready_i) fetch.emplace_back(cyc + (stress_ ? rng_.uniform(1, 8) : 1), d.pf_addr_o);
      bool rd_taken = false;
      if (d.dram_req_valid_o && d.dram_req_ready_i) {
        const std::uint32_t a = d.dram_req_addr_o;
        const int len = d.dram_req_len_o, eb = 1 << int(d.dram_req_size_o);
        if (!d.dram_req_write_o) {
          std::uint64_t ready = std::uint64_t(offchip_->read((long long)cyc, a, std::uint32_t(len * eb)));
          if (!rd.empty()) ready = std::max(ready, rd.back().ready);
          rd.push_back({a, len, eb, 0, ready});
        } else {
          wr.push_back({a, len, eb, 0});
        }
      }
      if (d.dram_rd_valid_i && d.dram_rd_ready_o) {
        if (rd.empty()) {
          report_.fail(cyc, "read beat taken with no read burst outstanding");
        } else if (++rd.front().sent == rd.front().len) {
          rd.pop_front();
        }
        rd_taken = true;
      }
      if (d.dram_wr_valid_o && d.dram_wr_ready_i) {
        if (wr.empty()) {
          report_.fail(cyc, "write beat without a write request");
        } else {
          WrBurst& b = wr.front();
          const std::uint32_t a = b.addr + std::uint32_t(b.got * b.eb);
          const std::uint64_t strb = tb::get(d.dram_wr_strb_o, 0, word_bytes_);
          std::vector<std::uint8_t> beat(std::size_t(word_bytes_), 0);
          for (int k = 0; k < word_bytes_; ++k) {
            beat[std::size_t(k)] = std::uint8_t(tb::get(d.dram_wr_data_o, 8 * k, 8));
            if ((strb >> k) & 1) set_byte(a + std::uint32_t(k), beat[std::size_t(k)]);
          }
          check_store_beat(cyc, store_i, a, strb, beat);
          if (++b.got == b.len) {
            offchip_->write((long long)cyc, b.addr, std::uint32_t(b.len * b.eb));
            wr.pop_front();
          }
        }
      }
      if (d.op_done_o) {  // an engine frame finished: its counters are valid in this cycle
        if (part >= parts_.size()) {
          report_.fail(cyc, "op_done_o after the last engine frame");
        } else {
          const long long c = (long long)d.stat_cycles_o;
          instr_cycles[parts_[part].instr] += c;
          instr_model[parts_[part].instr] += parts_[part].model;
          instr_done_[parts_[part].instr] = cyc;
          part_wr_wait_ += (long long)d.stat_wr_wait_o;
          part_stall_[0] += (long long)d.stat_stall_data_o;
          part_stall_[1] += (long long)d.stat_stall_tile_o;
          part_stall_[2] += (long long)d.stat_stall_out_o;
          engine_cycles_ += c;
          snap_.emplace_back(cyc + 1, part);
          ++part;
        }
      }
      if (d.dma_done_o) {
        if (dma_done >= (long long)dmas_.size()) {
          report_.fail(cyc, "dma_done_o after the last DMA frame");
        } else {
          const DmaFrame& f = dmas_[std::size_t(dma_done)];
          if (f.store) {  // every beat of this store frame has been written
            const bool all = store_i >= stores_.size() || stores_[store_i].dma > dma_done;
            report_.check(cyc, "DMA frame " + std::to_string(dma_done) + " (" + parts_[f.part].name + ") store beats complete", 1, all);
          }
          while (check_i < checks_.size() && checks_[check_i].last_dma == dma_done) run_check(cyc, checks_[check_i++]);
        }
        ++dma_done;
      }
      while (!snap_.empty() && (snap_.front().first <= cyc || d.done_o)) {
        check_part_accesses(cyc, snap_.front().second);
        snap_.pop_front();
      }
      sample_sectors();
      if (d.done_o) done = true;
      sim_.step();
      d.start_i = 0;
      if (rd_taken) d.dram_rd_valid_i = 0;
    }
    finish(store_i, check_i, part, dma_done, instr_cycles, instr_model);
    sim_.finish();
    results_["simulated_cycles"] = sim_.cycle();
    return report_.summary(text_["network"] + " on " + text_["preset"] + ", " + std::to_string(sum_.at("frames")) + " frames, " + std::to_string(prog_cycles_) + " program cycles, " +
                           std::to_string(sim_.cycle()) + " cycles");
  }

 private:
  void load(const std::string& dir) {
    for (const std::string& l : lines_of(dir + "/frames.hex")) prog_.push_back(std::uint32_t(std::stoul(l, nullptr, 16)));
    const std::string img = slurp(dir + "/dram.bin");
    dram_.assign(img.begin(), img.end());
    const std::string fin = slurp(dir + "/dram_final.bin");
    final_.assign(fin.begin(), fin.end());
    for (const std::string& l : lines_of(dir + "/stream.txt")) {
      std::istringstream ls(l);
      std::string k, v;
      ls >> k >> v;
      try {
        sum_[k] = std::stoll(v);
      } catch (const std::exception&) {
        text_[k] = v;
      }
    }
    for (const std::string& l : lines_of(dir + "/regions.txt")) {
      Region r;
      std::istringstream(l) >> r.name >> r.elem_base >> r.elements >> r.byte_base >> r.code_bytes;
      regions_.push_back(r);
    }
    for (const std::string& l : lines_of(dir + "/parts.txt")) {
      Part p;
      long long idx = 0, frame = 0;
      std::istringstream(l) >> idx >> p.instr >> p.name >> frame >> p.model;
      parts_.push_back(p);
    }
    for (const std::string& l : lines_of(dir + "/dma.txt")) {
      DmaFrame f;
      long long k = 0, frame = 0;
      int st = 0;
      std::istringstream(l) >> k >> frame >> f.part >> f.instr >> st >> f.elements;
      f.store = st != 0;
      dmas_.push_back(f);
    }
    for (const std::string& l : lines_of(dir + "/stores.txt")) {
      StoreBeat b;
      std::istringstream(l) >> b.dma >> b.byte >> b.bytes >> b.value;
      stores_.push_back(b);
    }
    const std::vector<std::string> cl = lines_of(dir + "/checks.txt");
    for (std::size_t i = 0; i + 1 < cl.size(); i += 2) {
      Check c;
      std::string kw;
      std::istringstream(cl[i]) >> kw >> c.instr >> c.name >> c.last_dma >> c.region >> c.byte_base >> c.code_bytes >> c.elements;
      if (kw != "check") throw std::runtime_error(dir + "/checks.txt: expected a check line, got: " + cl[i]);
      std::istringstream vs(cl[i + 1]);
      for (long long v; vs >> v;) c.values.push_back(v);
      if ((long long)c.values.size() != c.elements) throw std::runtime_error(dir + "/checks.txt: " + c.region + ": wrong number of codes");
      checks_.push_back(c);
    }
    std::stable_sort(checks_.begin(), checks_.end(), [](const Check& a, const Check& b) { return a.last_dma < b.last_dma; });
    if (std::ifstream(dir + "/access.txt")) load_access(dir + "/access.txt");
  }

  void load_access(const std::string& path) {
    const auto mem_index = [&](const std::string& n) {
      for (int m = 0; m < kMems; ++m)
        if (n == kMemNames[m]) return m;
      throw std::runtime_error(path + ": unknown memory '" + n + "'");
    };
    access_.present = true;
    for (const std::string& l : lines_of(path)) {
      std::istringstream ls(l);
      std::string kw, name;
      ls >> kw;
      if (kw == "memories") {
        ls >> access_.memories;
      } else if (kw == "mem") {
        ls >> name;
        const int m = mem_index(name);
        for (long long& v : access_.mem[m]) ls >> v;
      } else if (kw == "sector") {
        std::size_t k = 0;
        long long v = 0;
        ls >> name >> k >> v;
        auto& sec = access_.sector[mem_index(name)];
        if (sec.size() <= k) sec.resize(k + 1, 0);
        sec[k] = v;
      } else if (kw == "part") {
        std::size_t p = 0;
        ls >> p;
        std::vector<long long> a(std::size_t(4 * access_.memories), 0);
        for (long long& v : a) ls >> v;
        if (access_.parts.size() <= p) access_.parts.resize(p + 1);
        access_.parts[p] = a;
      } else if (kw == "pmu") {
        std::size_t k = 0;
        long long sl = 0, wk = 0;
        ls >> name >> k >> sl >> wk;
        const int m = mem_index(name);
        if (access_.sleeps[m].size() <= k) access_.sleeps[m].resize(k + 1, 0), access_.wakes[m].resize(k + 1, 0);
        access_.sleeps[m][k] = sl;
        access_.wakes[m][k] = wk;
      } else if (kw == "sleep_model") {
        ls >> name;
        const int m = mem_index(name);
        ls >> access_.sleep_model[m][0] >> access_.sleep_model[m][1];
      } else if (kw == "outside") {
        ls >> access_.outside;
      }
      if (!ls) throw std::runtime_error(path + ": malformed line: " + l);
    }
  }

  // The chip's per-memory pins (m: data, weight, acc, shared, lanes); 0 for a pin the chip does not have
  // (the shared memory's without HY, the psum lanes' engine writes, the PMUs' without power gating, a
  // view's PMU).
#define CAPSGEN_PIN(expr)                                             \
  [&]() -> long long {                                                \
    if constexpr (requires(Dut& x) { x.expr; }) return (long long)dut_->expr; \
    else return 0;                                                    \
  }()
#define CAPSGEN_MEM_PIN(prefix, suffix)                                                      \
  (m == 0 ? CAPSGEN_PIN(prefix##data##suffix) : m == 1 ? CAPSGEN_PIN(prefix##weight##suffix) \
   : m == 2 ? CAPSGEN_PIN(prefix##acc##suffix) : m == 3 ? CAPSGEN_PIN(prefix##shared##suffix)  \
            : CAPSGEN_PIN(prefix##lanes##suffix))
  // kind: 0 engine reads, 1 engine writes, 2 DMA reads, 3 DMA writes, 4 DMA waits.
  long long mem_counter(int m, int kind) const {
    switch (kind) {
      case 0: return CAPSGEN_MEM_PIN(cnt_eng_rd_, _o);
      case 1: return CAPSGEN_MEM_PIN(cnt_eng_wr_, _o);
      case 2: return CAPSGEN_MEM_PIN(cnt_dma_rd_, _o);
      case 3: return CAPSGEN_MEM_PIN(cnt_dma_wr_, _o);
      default: return CAPSGEN_MEM_PIN(cnt_dma_wait_, _o);
    }
  }
  long long pmu_wakes(int m) const { return CAPSGEN_MEM_PIN(pmu_, _wake_count_o); }
  long long pmu_stall(int m) const { return CAPSGEN_MEM_PIN(pmu_, _stall_cycles_o); }
#undef CAPSGEN_MEM_PIN
#undef CAPSGEN_PIN
  // A field of a wide per-sector pin (32 bits per sector, or one bit per sector).
  // 0 for a memory without sector counters (SMP has the shared memory's only: its acc range is a view).
  template <class F>
  std::uint64_t mem_field(int m, int lsb, int width, F&& f) const {
    switch (m) {
      case 0:
        if constexpr (requires(Dut& x) { x.cnt_sector_data_o; }) return f(dut_->cnt_sector_data_o, lsb, width, 0);
        return 0;
      case 1:
        if constexpr (requires(Dut& x) { x.cnt_sector_weight_o; }) return f(dut_->cnt_sector_weight_o, lsb, width, 1);
        return 0;
      case 2:
        if constexpr (requires(Dut& x) { x.cnt_sector_acc_o; }) return f(dut_->cnt_sector_acc_o, lsb, width, 2);
        return 0;
      case 3:
        if constexpr (requires(Dut& x) { x.cnt_sector_shared_o; }) return f(dut_->cnt_sector_shared_o, lsb, width, 3);
        return 0;
      default:  // the lanes view: the shared memory's sectors
        return 0;
    }
  }
  long long sector_counter(int m, int s) const {
    return (long long)mem_field(m, 32 * s, 32, [](const auto& pin, int lsb, int w, int) { return tb::get(pin, lsb, w); });
  }
  std::uint64_t sector_asleep(int m) const {
    if constexpr (requires(Dut& x) { x.sector_asleep_shared_o; } || requires(Dut& x) { x.sector_asleep_data_o; }) {
      switch (m) {
        case 0:
          if constexpr (requires(Dut& x) { x.sector_asleep_data_o; }) return tb::get(dut_->sector_asleep_data_o, 0, sectors(0));
          return 0;
        case 1:
          if constexpr (requires(Dut& x) { x.sector_asleep_weight_o; }) return tb::get(dut_->sector_asleep_weight_o, 0, sectors(1));
          return 0;
        case 2:
          if constexpr (requires(Dut& x) { x.sector_asleep_acc_o; }) return tb::get(dut_->sector_asleep_acc_o, 0, sectors(2));
          return 0;
        case 3:
          if constexpr (requires(Dut& x) { x.sector_asleep_shared_o; }) return tb::get(dut_->sector_asleep_shared_o, 0, sectors(3));
          return 0;
        default:
          return 0;
      }
    }
    return 0;
  }
  long long pmu_asleep_cycles(int m, int s) const {
    if constexpr (requires(Dut& x) { x.pmu_shared_asleep_cycles_o; } || requires(Dut& x) { x.pmu_data_asleep_cycles_o; }) {
      switch (m) {
        case 0:
          if constexpr (requires(Dut& x) { x.pmu_data_asleep_cycles_o; }) return (long long)tb::get(dut_->pmu_data_asleep_cycles_o, 32 * s, 32);
          return 0;
        case 1:
          if constexpr (requires(Dut& x) { x.pmu_weight_asleep_cycles_o; }) return (long long)tb::get(dut_->pmu_weight_asleep_cycles_o, 32 * s, 32);
          return 0;
        case 2:
          if constexpr (requires(Dut& x) { x.pmu_acc_asleep_cycles_o; }) return (long long)tb::get(dut_->pmu_acc_asleep_cycles_o, 32 * s, 32);
          return 0;
        case 3:
          if constexpr (requires(Dut& x) { x.pmu_shared_asleep_cycles_o; })
            return (long long)tb::get(dut_->pmu_shared_asleep_cycles_o, 32 * s, 32);
          return 0;
        default:
          return 0;
      }
    }
    return 0;
  }
  int memories() const {
    // HY and SMP have the shared memory; HY's lanes view has counters of its own.
    if (memories_ < 0) {
      memories_ = kv_.str("organization") == "sep" ? 3 : 4;
      if constexpr (requires(Dut& x) { x.cnt_eng_rd_lanes_o; }) memories_ = 5;
    }
    return memories_;
  }

  // Every memsys counter against the access model (gen/compiler/access.hpp): they must agree exactly.
  void check_access_totals(std::uint64_t cyc) {
    static const char* const what[4] = {"engine bank reads", "engine bank writes", "DMA reads", "DMA writes"};
    report_.check(cyc, "access model: accesses outside every memory", 0, access_.outside);
    report_.check(cyc, "access model: memories", memories(), access_.memories);
    for (int m = 0; m < memories(); ++m) {
      for (int k = 0; k < 4; ++k)
        report_.check(cyc, std::string(kMemNames[m]) + " memory " + what[k] + " (memsys counter vs access model)", access_.mem[m][k],
                      mem_counter(m, k));
      for (int s = 0; s < sectors(m); ++s) {
        const long long want = std::size_t(s) < access_.sector[m].size() ? access_.sector[m][std::size_t(s)] : -1;
        report_.check(cyc,
                      std::string(kMemNames[m]) + " memory sector " + std::to_string(s) + " bank accesses (memsys counter vs access model)",
                      want, sector_counter(m, s));
        ++access_checks_;
      }
      access_checks_ += 4;
    }
    const long long checks = access_checks_ + 2 * memories() * (long long)access_.parts.size();
    std::printf("stat access checks=%lld parts=%zu\n", checks, access_.parts.size());
    results_["access_model"] = {{"checks", checks}, {"parts", access_.parts.size()}};
  }

  // The engine's bank accesses of the part that finished (memsys counts them one cycle late, so this
  // runs one cycle after op_done_o: the last write was in the cycle before op_done_o, its count lands two
  // cycles later; the next part's first access, at the earliest in that cycle, lands two cycles after it).
  void check_part_accesses(std::uint64_t cyc, std::size_t p) {
    for (int m = 0; m < memories(); ++m)
      for (int k = 0; k < 2; ++k) {
        const long long now = mem_counter(m, k);
        const long long got = (now - eng_seen_[m][k]) & 0xFFFFFFFFLL;
        eng_seen_[m][k] = now;
        if (!access_.present || p >= access_.parts.size()) continue;
        report_.check(cyc,
                      "part " + std::to_string(p) + " (" + parts_[p].name + ") engine " + kMemNames[m] + (k ? " writes" : " reads") +
                          " (memsys counter vs access model)",
                      access_.parts[p][std::size_t(k * access_.memories + m)], got);
      }
  }

  std::uint8_t byte(std::uint32_t a) const { return a < dram_.size() ? dram_[a] : 0; }
  void set_byte(std::uint32_t a, std::uint8_t v) {
    if (a >= dram_.size()) {
      ++stray_writes_;
      return;
    }
    dram_[a] = v;
  }
  // The code stored at a byte address (its `bytes` bytes, little-endian, unsigned).
  std::uint64_t code_at(long long byte_addr, int bytes) const {
    std::uint64_t u = 0;
    for (int k = 0; k < bytes; ++k) u |= std::uint64_t(byte(std::uint32_t(byte_addr + k))) << (8 * k);
    return u;
  }
  // A code as the golden model states it (signed, or an unsigned norm code) against the stored bytes:
  // equal modulo 2^(8 * bytes). Reported sign-extended, or as stored when the golden value is unsigned
  // and does not fit the signed range.
  static long long as_stored(std::uint64_t u, int bytes, long long expected) {
    const long long s = tb::sign_extend(u, 8 * bytes);
    return expected >= 0 && s < 0 ? (long long)u : s;
  }
  static bool same_code(long long expected, std::uint64_t u, int bytes) {
    return (std::uint64_t(expected) & tb::mask64(8 * bytes)) == u;
  }
  // "tensor[index]" of a DRAM byte address.
  std::string tensor_of(long long byte_addr) const {
    for (const Region& r : regions_)
      if (byte_addr >= r.byte_base && byte_addr < r.byte_base + r.elements * r.code_bytes)
        return r.name + "[" + std::to_string((byte_addr - r.byte_base) / r.code_bytes) + "]";
    return "byte " + std::to_string(byte_addr) + " (no tensor)";
  }
  std::string op_of_dma(long long k) const {
    if (k < 0 || k >= (long long)dmas_.size()) return "DMA frame " + std::to_string(k) + " (past the program)";
    const DmaFrame& f = dmas_[std::size_t(k)];
    return "op " + parts_.at(f.part).name + " (instruction " + std::to_string(f.instr) + ", part " + std::to_string(f.part) +
           ", DMA frame " + std::to_string(k) + (f.store ? " store" : " load") + ")";
  }

  // One write beat: the elements it must hold are the next ones of the store list (a packed move puts
  // several consecutive codes in one beat), starting at the beat's address; the strobes mark exactly
  // their bytes. Advances `i` past them.
  void check_store_beat(std::uint64_t cyc, std::size_t& i, std::uint32_t a, std::uint64_t strb, const std::vector<std::uint8_t>& beat) {
    if (i >= stores_.size()) {
      report_.fail(cyc, "store beat at DRAM byte " + std::to_string(a) + ": more elements than the program stores");
      return;
    }
    const long long dma = stores_[i].dma;
    int off = 0;
    while (i < stores_.size() && stores_[i].dma == dma && off < word_bytes_ && ((strb >> off) & 1)) {
      const StoreBeat& e = stores_[i];
      const std::string where = op_of_dma(e.dma) + " " + tensor_of(e.byte);
      report_.check(cyc, where + " DRAM address", e.byte, (long long)a + off);
      std::uint64_t u = 0;
      for (int k = 0; k < e.bytes && off + k < word_bytes_; ++k) u |= std::uint64_t(beat[std::size_t(off + k)]) << (8 * k);
      report_.check(cyc, where + " value", e.value, same_code(e.value, u, e.bytes) ? e.value : as_stored(u, e.bytes, e.value));
      off += e.bytes;
      ++i;
    }
    report_.check(cyc, op_of_dma(dma) + " write strobes of the beat at DRAM byte " + std::to_string(a),
                  (long long)tb::mask64(off), (long long)strb);
  }

  void run_check(std::uint64_t cyc, const Check& c) {
    long long bad = 0;
    for (long long j = 0; j < c.elements; ++j) {
      const std::uint64_t u = code_at(c.byte_base + j * c.code_bytes, c.code_bytes);
      const long long want = c.values[std::size_t(j)];
      if (!same_code(want, u, c.code_bytes)) {
        if (bad++ < 3)
          report_.mismatch(cyc, "op " + c.name + " (instruction " + std::to_string(c.instr) + ") DRAM " + c.region + "[" +
                                    std::to_string(j) + "]", want, as_stored(u, c.code_bytes, want));
      }
    }
    report_.check(cyc, "op " + c.name + " DRAM " + c.region + " elements differing from the golden model", 0, bad);
    ++checked_ops_;
    checked_elements_ += c.elements;
    if (c.instr == std::size_t(sum_.at("prediction_instr"))) {  // the class norms: unsigned codes
      std::size_t best = 0;
      for (long long j = 1; j < c.elements; ++j)
        if (code_at(c.byte_base + j * c.code_bytes, c.code_bytes) > code_at(c.byte_base + long(best) * c.code_bytes, c.code_bytes))
          best = std::size_t(j);
      prediction_ = (long long)best;
    }
  }

  // Sector sleep and wake events (rising and falling sleep acknowledgements) for the coverage bins.
  void sample_sectors() {
    if constexpr (requires(Dut& d) { d.sector_asleep_data_o; } || requires(Dut& d) { d.sector_asleep_shared_o; }) {
      for (int m = 0; m < memories(); ++m) {
        const std::uint64_t now = sector_asleep(m);
        if (sleeps_[m].empty()) {
          sleeps_[m].assign(std::size_t(sectors(m)), 0);
          wakes_[m].assign(std::size_t(sectors(m)), 0);
        }
        for (int s = 0; s < sectors(m); ++s) {
          const bool was = (prev_asleep_[m] >> s) & 1, is = (now >> s) & 1;
          if (is && !was) ++sleeps_[m][std::size_t(s)];
          if (!is && was) ++wakes_[m][std::size_t(s)];
        }
        prev_asleep_[m] = now;
      }
    }
  }
  // Sectors per memory (chip.json), read once: sample_sectors() runs every cycle.
  int sectors(int m) const {
    if (sectors_[m] < 0) sectors_[m] = m == 4 ? 0 : kv_.num(std::string("sectors_") + kMemNames[m]);
    return sectors_[m];
  }

  void finish(std::size_t store_i, std::size_t check_i, std::size_t part, long long dma_done, const std::vector<long long>& instr_cycles,
              const std::vector<long long>& instr_model) {
    auto& d = *dut_;
    const std::uint64_t cyc = sim_.cycle();
    report_.check(cyc, "error_o (sequencer, engine or memory system)", 0, d.error_o);
    report_.check(cyc, "engine frames run", (long long)parts_.size(), (long long)part);
    report_.check(cyc, "DMA frames done", (long long)dmas_.size(), dma_done);
    report_.check(cyc, "store beats written", (long long)stores_.size(), (long long)store_i);
    report_.check(cyc, "instruction checks run", (long long)checks_.size(), (long long)check_i);
    report_.check(cyc, "writes outside the DRAM image", 0, stray_writes_);
    report_.check(cyc, "sequencer engine frames", sum_.at("engine"), (long long)d.seq_engine_o);
    report_.check(cyc, "sequencer DMA frames", sum_.at("dma"), (long long)d.seq_dma_o);
    report_.check(cyc, "sequencer PMU frames", sum_.at("pmu"), (long long)d.seq_pmu_o);
    const long long classes = (long long)d.seq_engine_o + d.seq_dma_o + d.seq_pmu_o + d.seq_fetch_o + d.seq_eng_busy_o +
                              d.seq_wait_dma_o + d.seq_wait_engine_o + d.seq_dma_busy_o + d.seq_pmu_wait_o + d.seq_drain_o;
    report_.check(cyc, "sequencer cycle classes sum to its cycles", (long long)d.seq_cycles_o, classes);
    report_.check(cyc, "DMA read beats", sum_.at("load_beats"), (long long)d.dma_beats_read_o);
    report_.check(cyc, "DMA write beats", sum_.at("store_beats"), (long long)d.dma_beats_written_o);
    long long diff = 0;
    for (std::size_t a = 0; a < final_.size(); ++a)
      if (a >= dram_.size() || dram_[a] != final_[a]) {
        if (diff++ < 5) report_.mismatch(cyc, "final DRAM image " + tensor_of((long long)a), final_[a], a < dram_.size() ? dram_[a] : -1);
      }
    report_.check(cyc, "final DRAM bytes differing from the flat program's memory", 0, diff);
    if (sum_.at("prediction_instr") >= 0)
      report_.check(cyc, "RTL class prediction vs the golden model's", sum_.at("golden"), prediction_);
    prog_cycles_ = (long long)d.seq_cycles_o;
    if (access_.present) check_access_totals(cyc);

    report_program(d);
    report_instructions(instr_cycles, instr_model);
    report_dram(d);
    report_memories();
    if constexpr (requires(Dut& x) { x.pmu_data_wake_count_o; } || requires(Dut& x) { x.pmu_shared_wake_count_o; })
      report_sectors(cyc);
  }

  // Each report_* prints its "stat" lines and puts the same figures into the results document.
  // The program's cycles, the sequencer's cycle classes and the engine's stalls summed over its frames.
  void report_program(const Dut& d) {
    std::printf("stat program cycles=%lld engine_cycles=%lld engine_model=%lld stream_model=%lld frames=%lld words=%lld\n", prog_cycles_,
                engine_cycles_, sum_.at("engine_model_cycles"), sum_.at("stream_model_cycles"), sum_.at("frames"), sum_.at("words"));
    results_["program"] = {{"cycles", prog_cycles_}, {"engine_cycles", engine_cycles_},
                           {"engine_model_cycles", sum_.at("engine_model_cycles")},
                           {"stream_model_cycles", sum_.at("stream_model_cycles")}, {"frames", sum_.at("frames")},
                           {"words", sum_.at("words")}};
    std::printf("stat sequencer fetch=%u engine=%u dma=%u pmu=%u eng_busy=%u wait_dma=%u wait_engine=%u dma_busy=%u pmu_wait=%u drain=%u\n",
                d.seq_fetch_o, d.seq_engine_o, d.seq_dma_o, d.seq_pmu_o, d.seq_eng_busy_o, d.seq_wait_dma_o, d.seq_wait_engine_o,
                d.seq_dma_busy_o, d.seq_pmu_wait_o, d.seq_drain_o);
    results_["sequencer"] = {{"fetch", d.seq_fetch_o},       {"engine", d.seq_engine_o},         {"dma", d.seq_dma_o},
                             {"pmu", d.seq_pmu_o},           {"eng_busy", d.seq_eng_busy_o},     {"wait_dma", d.seq_wait_dma_o},
                             {"wait_engine", d.seq_wait_engine_o}, {"dma_busy", d.seq_dma_busy_o}, {"pmu_wait", d.seq_pmu_wait_o},
                             {"drain", d.seq_drain_o}};
    std::printf("stat engine stall_data=%lld stall_tile=%lld stall_out=%lld wr_wait=%lld\n", part_stall_[0], part_stall_[1],
                part_stall_[2], part_wr_wait_);
    results_["engine_stalls"] = {{"stall_data", part_stall_[0]}, {"stall_tile", part_stall_[1]}, {"stall_out", part_stall_[2]},
                                 {"wr_wait", part_wr_wait_}};
    std::printf("stat checks ops=%lld elements=%lld prediction=%lld golden=%lld\n", checked_ops_, checked_elements_, prediction_,
                sum_.at("golden"));
    results_["checked"] = {{"operations", checked_ops_}, {"elements", checked_elements_}};
    results_["prediction"] = {{"rtl", prediction_}, {"golden", sum_.at("golden")}};
  }

  // Per instruction: its engine frames, their cycles and the model's, and when the last one finished.
  void report_instructions(const std::vector<long long>& instr_cycles, const std::vector<long long>& instr_model) {
    tb::Json& instrs = results_["instructions"];
    for (std::size_t i = 0; i < instr_cycles.size(); ++i) {
      std::string name;
      long long n = 0;
      for (const Part& p : parts_)
        if (p.instr == i) {
          name = p.name;
          ++n;
        }
      std::printf("stat instr index=%zu name=%s parts=%lld cycles=%lld model=%lld done=%llu\n", i, name.c_str(), n,
                  instr_cycles[i], instr_model[i], static_cast<unsigned long long>(instr_done_[i]));
      instrs.push_back({{"index", i}, {"name", name}, {"parts", n}, {"cycles", instr_cycles[i]}, {"model", instr_model[i]},
                        {"done", instr_done_[i]}});
    }
  }

  // DRAM figures of the accelerator's real access stream (ROMANet's DRAM model, gen/dram): column
  // accesses, row-buffer outcomes, energy by command (pJ), and bandwidth over the model's busy span
  // and over the whole program.
  void report_dram(const Dut& d) {
    capsgen::dram::DramModel& dram_model = offchip_->model();
    dram_model.finish();
    const auto& ds = dram_model.stats();
    const auto en = dram_model.energy();
    const double bytes = double(ds.bytes()), run_ns = double(prog_cycles_) * 1000.0 / clock_mhz_;
    const tb::Json j = {{"read_beats", d.dma_beats_read_o},
                        {"write_beats", d.dma_beats_written_o},
                        {"requests", ds.requests()},
                        {"reads", ds.reads},
                        {"writes", ds.writes},
                        {"row_hits", ds.hits},
                        {"misses", ds.misses},
                        {"conflicts", ds.conflicts},
                        {"bytes", ds.bytes()},
                        {"energy_pj", std::llround(en.total())},
                        {"act_pj", std::llround(en.act)},
                        {"pre_pj", std::llround(en.pre)},
                        {"rd_pj", std::llround(en.rd)},
                        {"wr_pj", std::llround(en.wr)},
                        {"ref_pj", std::llround(en.ref)},
                        {"standby_pj", std::llround(en.act_standby + en.pre_standby)},
                        {"pj_per_byte_x100", bytes > 0 ? std::llround(100.0 * en.total() / bytes) : 0LL},
                        {"model_gbps_x1000", std::llround(1000.0 * dram_model.throughput_gbps())},
                        {"program_gbps_x1000", run_ns > 0 ? std::llround(1000.0 * bytes / run_ns) : 0LL},
                        {"peak_gbps_x1000", std::llround(1000.0 * spec_.peak_gbps())}};
    std::string line = "stat dram";
    for (const auto& [k, v] : j.items()) line += " " + k + "=" + v.dump();
    std::printf("%s\n", line.c_str());
    results_["dram"] = j;
  }

  // The memory system's port counters per memory.
  void report_memories() {
    for (int m = 0; m < memories(); ++m) {
      std::printf("stat memory name=%s eng_rd=%lld eng_wr=%lld dma_rd=%lld dma_wr=%lld dma_wait=%lld\n", kMemNames[m], mem_counter(m, 0),
                  mem_counter(m, 1), mem_counter(m, 2), mem_counter(m, 3), mem_counter(m, 4));
      results_["memories"].push_back({{"name", kMemNames[m]}, {"eng_rd", mem_counter(m, 0)}, {"eng_wr", mem_counter(m, 1)},
                                      {"dma_rd", mem_counter(m, 2)}, {"dma_wr", mem_counter(m, 3)}, {"dma_wait", mem_counter(m, 4)}});
    }
  }

  // With PMUs: every sector's sleep against the frame model, the sleep/wake coverage bins, and per memory
  // its sectors' sleep, measured and modelled.
  void report_sectors(std::uint64_t cyc) {
    long long wakes = 0;
    for (int m = 0; m < memories(); ++m) wakes += pmu_wakes(m);
    report_.check(cyc, "sector wake-ups (PMUs) vs the frame model", sum_.at("wakes"), wakes);
    for (int m = 0; m < memories(); ++m) {
      long long asleep = 0;
      for (int s = 0; s < sectors(m); ++s) {
        const long long c = pmu_asleep_cycles(m, s);
        asleep += c;
        const long long sl = sleeps_[m].empty() ? 0 : sleeps_[m][std::size_t(s)], wk = wakes_[m].empty() ? 0 : wakes_[m][std::size_t(s)];
        std::printf("stat sector memory=%s sector=%d asleep_cycles=%lld sleeps=%lld wakes=%lld\n", kMemNames[m], s, c, sl, wk);
        results_["sectors"].push_back(
            {{"memory", kMemNames[m]}, {"sector", s}, {"asleep_cycles", c}, {"sleeps", sl}, {"wakes", wk}});
        if (access_.present) {  // what the sector did (its sleep_ack) against what the PMU frames ordered
          const std::size_t k = std::size_t(s);
          report_.check(cyc, std::string(kMemNames[m]) + " sector " + std::to_string(s) + " sleeps (sleep_ack rises) vs the frame model",
                        k < access_.sleeps[m].size() ? access_.sleeps[m][k] : -1, sl);
          report_.check(cyc, std::string(kMemNames[m]) + " sector " + std::to_string(s) + " wake-ups (sleep_ack falls) vs the frame model",
                        k < access_.wakes[m].size() ? access_.wakes[m][k] : -1, wk);
        }
        const std::string bin = std::string("pmu.") + kMemNames[m] + ".s" + std::to_string(s);
        std::printf("fcov %s.sleep %lld\nfcov %s.wake %lld\n", bin.c_str(), sl, bin.c_str(), wk);
        results_["functional_coverage"][bin + ".sleep"] = sl;
        results_["functional_coverage"][bin + ".wake"] = wk;
      }
      std::printf("stat pmu memory=%s sectors=%d asleep_sector_cycles=%lld barrier_stall=%lld model_asleep=%lld model_all=%lld\n",
                  kMemNames[m], sectors(m), asleep, pmu_stall(m), access_.sleep_model[m][0], access_.sleep_model[m][1]);
      results_["pmus"].push_back({{"memory", kMemNames[m]}, {"sectors", sectors(m)}, {"asleep_sector_cycles", asleep},
                                  {"barrier_stall", pmu_stall(m)}, {"model_asleep", access_.sleep_model[m][0]},
                                  {"model_all", access_.sleep_model[m][1]}});
    }
  }

  tb::Args args_;
  tb::Summary kv_;
  tb::Sim sim_;
  tb::Rng rng_;
  tb::Report report_;
  tb::Json results_ = empty_results();
  std::unique_ptr<Dut> dut_;
  capsgen::dram::DramSpec spec_;
  std::unique_ptr<capsgen::dram::OffchipPort> offchip_;  // timing of the off-chip memory (gen/dram)
  int word_bytes_ = 4;
  double clock_mhz_ = 100.0;
  bool stress_ = false;
  std::vector<std::uint32_t> prog_;
  std::vector<std::uint8_t> dram_, final_;
  std::map<std::string, long long> sum_;
  std::map<std::string, std::string> text_;
  std::vector<Region> regions_;
  std::vector<Part> parts_;
  std::vector<DmaFrame> dmas_;
  std::vector<StoreBeat> stores_;
  std::vector<Check> checks_;
  long long stray_writes_ = 0, checked_ops_ = 0, checked_elements_ = 0, prediction_ = -1, prog_cycles_ = 0, engine_cycles_ = 0;
  long long part_wr_wait_ = 0, part_stall_[3] = {0, 0, 0};
  std::vector<std::uint64_t> instr_done_;  // per instruction: the cycle of its last engine frame's op_done_o
  std::uint64_t prev_asleep_[kMems] = {0, 0, 0, 0, 0};
  std::vector<long long> sleeps_[kMems], wakes_[kMems];
  AccessModel access_;
  std::deque<std::pair<std::uint64_t, std::size_t>> snap_;  // (cycle, part): engine counters to check
  long long eng_seen_[kMems][2] = {};
  long long access_checks_ = 0;
  mutable int sectors_[kMems] = {-1, -1, -1, -1, -1};
  mutable int memories_ = -1;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string results_path;
  std::unique_ptr<ChipTb<Vchip>> t;
  try {
    tb::CoverageOut coverage(argc, argv);
    if (!coverage.usable("tb_chip")) return 2;
    const tb::Args args =
        tb::Args::parse(coverage.argc(), coverage.argv(), "--program DIR [--dram FILE] [--mode stress] [--coverage-out FILE] [--results FILE]");
    if (args.program.empty()) {
      std::fprintf(stderr, "tb_chip: --program DIR (capsgen compile --dump-stream DIR) is required\n");
      return 2;
    }
    results_path = args.results;
    t = std::make_unique<ChipTb<Vchip>>(args);
    const int rc = t->run();
    coverage.write(t->context());
    tb::write_results(results_path, t->results(), "");
    return rc;
  } catch (const std::exception& ex) {
    const std::string line = std::string("FAIL tb chip: ") + ex.what();
    std::fprintf(stderr, "%s\n", line.c_str());
    try {
      tb::write_results(results_path, t ? t->results() : ChipTb<Vchip>::empty_results(), line);
    } catch (const std::exception& wex) {
      std::fprintf(stderr, "FAIL tb chip: %s\n", wex.what());
    }
    return 1;
  }
}

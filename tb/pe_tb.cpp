// Block test of capsgen_pe: random and corner stimuli on every input each cycle, every output
// compared each cycle with a cycle model of the PE contract (docs/rtl-datapath.md), arithmetic by
// capsgen::fx. Registers without reset are compared only once they hold a defined value.
#include <cstdio>
#include <memory>
#include <string>

#include "Vpe.h"
#include "common/bits.hpp"
#include "common/rng.hpp"
#include "common/sim.hpp"
#include "numerics/fixed.hpp"

namespace fx = capsgen::fx;

namespace {

// Cycle model of one PE. `known` flags track registers that have been written with defined values.
struct PeModel {
  int dw, ww, pw;
  bool pipe;
  std::int64_t data = 0, w1 = 0, w2 = 0, prod = 0, sum = 0;
  bool swap = false, arm = false;
  bool data_k = false, w1_k = false, w2_k = false, prod_k = false, sum_k = false;

  struct In {
    std::int64_t data, weight, psum;
    bool swap, load, last, arm;
  };
  void clock(const In& in) {
    const std::int64_t product = data * w2;  // exact
    const bool product_k = data_k && w2_k;
    const bool en = in.load && in.arm;
    const std::int64_t addend = pipe ? prod : product;
    const bool addend_k = pipe ? prod_k : product_k;
    // next state
    const std::int64_t n_sum = fx::wrap_s(in.psum + addend, pw);
    if (pipe) {
      prod = product;
      prod_k = product_k;
    }
    sum = n_sum;
    sum_k = addend_k;
    if (in.swap) {
      w2 = w1;
      w2_k = w1_k;
    }
    if (en) {
      w1 = in.weight;
      w1_k = true;
    }
    if (in.load) arm = in.arm && !in.last;
    data = in.data;
    data_k = true;
    swap = in.swap;
  }
};

}  // namespace

int pe_tb_main(int argc, char** argv) {
  const tb::Args args = tb::Args::parse(argc, argv, "");
  const tb::RtlConfig cfg = tb::RtlConfig::load(args.rtl_dir);
  tb::Sim sim(args);
  auto dut = std::make_unique<Vpe>(sim.context(), "pe");
  sim.add(*dut);
  sim.open_trace();
  tb::Rng rng(args.seed);
  tb::Report report("pe", args.max_errors);

  const int dw = cfg.data_bits, ww = cfg.weight_bits, pw = cfg.psum_bits;
  PeModel model{dw, ww, pw, cfg.pe_pipeline != 0};
  const long long cycles = static_cast<long long>(20000 * args.scale);

  auto drive = [&](const PeModel::In& in) {
    tb::put(dut->data_i, 0, dw, static_cast<std::uint64_t>(in.data));
    tb::put(dut->weight_i, 0, ww, static_cast<std::uint64_t>(in.weight));
    tb::put(dut->psum_i, 0, pw, static_cast<std::uint64_t>(in.psum));
    dut->swap_i = in.swap;
    dut->weight_load_i = in.load;
    dut->weight_last_i = in.last;
    dut->weight_arm_i = in.arm;
  };
  auto check = [&]() {
    const auto c = sim.cycle();
    const std::string at = "cycle_index=" + std::to_string(c);
    if (model.data_k) report.check(c, "data_o " + at, model.data, tb::get_signed(dut->data_o, 0, dw));
    report.check(c, "swap_o " + at, model.swap, dut->swap_o);
    if (model.w1_k) report.check(c, "weight_o " + at, model.w1, tb::get_signed(dut->weight_o, 0, ww));
    report.check(c, "weight_arm_o " + at, model.arm, dut->weight_arm_o);
    if (model.sum_k) report.check(c, "psum_o " + at, model.sum, tb::get_signed(dut->psum_o, 0, pw));
  };

  sim.reset();
  // Phase 1: directed corners: load a weight, swap it in, stream data; includes min x min.
  const std::int64_t corners_d[] = {fx::smin(dw), fx::smax(dw), -1, 0, 1};
  const std::int64_t corners_w[] = {fx::smin(ww), fx::smax(ww), -1, 0, 1};
  for (std::int64_t w : corners_w) {
    PeModel::In in{0, w, 0, false, true, true, true};
    drive(in), check(), model.clock(in), sim.step();
    for (std::int64_t d : corners_d) {
      for (std::int64_t p : {std::int64_t{0}, fx::smax(pw), fx::smin(pw)}) {
        PeModel::In din{d, 0, p, d == corners_d[0], false, false, false};
        drive(din), check(), model.clock(din), sim.step();
      }
    }
  }
  // Phase 2: random stimulus on every input.
  for (long long i = 0; i < cycles && !report.too_many(); ++i) {
    PeModel::In in;
    in.data = rng.signed_value(dw);
    in.weight = rng.signed_value(ww);
    // psum: any value; the wrap of the PE adder is part of the contract.
    in.psum = rng.signed_value(pw);
    in.swap = rng.chance(20);
    in.load = rng.chance(40);
    in.last = rng.chance(30);
    in.arm = rng.chance(60);
    drive(in);
    check();
    model.clock(in);
    sim.step();
  }
  check();
  sim.finish();
  return report.summary(cfg.name + (cfg.pe_pipeline ? " (pe_pipeline)" : ""));
}

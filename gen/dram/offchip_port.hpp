// The off-chip memory behind the DMA's burst port (docs/rtl-dma.md "Off-chip port"), as the
// testbenches put it there (tb/dma_tb.cpp, tb/chip_tb.cpp) and the chip's timing model assumes it
// (compiler/chip_timing.hpp): the cycle-level DRAM model at its own clock, seen in accelerator cycles.
// A read burst's data is due no earlier than the model's completion and the preset's minimum latency
// after the request (the caller keeps bursts in request order); writes are posted: a burst enters the
// model with its last beat, and write beats are refused while the model's backlog exceeds the latency
// plus a burst (its write bandwidth is finite).
#pragma once

#include <cstdint>

#include "dram/address_mapping.hpp"
#include "dram/dram_model.hpp"
#include "dram/dram_spec.hpp"

namespace capsgen::dram {

class OffchipPort {
 public:
  OffchipPort(const DramSpec& spec, double clock_mhz, int latency_cycles, int max_burst);

  // The read burst of `bytes` at `byte_address` requested in accelerator cycle `cycle`: the first
  // cycle its data may be presented.
  long long read(long long cycle, std::uint64_t byte_address, std::uint32_t bytes);
  // Whether write data is taken in `cycle`.
  bool write_ready(long long cycle) const;
  // A write burst of `bytes` at `byte_address` whose last beat was taken in `cycle`.
  void write(long long cycle, std::uint64_t byte_address, std::uint32_t bytes);

  DramModel& model() { return model_; }
  const DramModel& model() const { return model_; }

 private:
  std::uint64_t arrival(long long cycle) const;

  DramModel model_;
  AddressMapping mapping_;
  std::uint64_t capacity_;
  double ratio_;  // DRAM clocks per accelerator clock
  long long latency_;
  int max_burst_;
};

}  // namespace capsgen::dram

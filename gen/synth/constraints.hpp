// Constraints generated from the preset: SDC for static timing (ASIC flow), the serial I/O harness
// that lets any block be placed and routed on a small FPGA, and the iCE40 PCF for that harness.
#pragma once

#include <string>
#include <vector>

#include "synth/rtl_info.hpp"

namespace capsgen::synth {

struct SdcOptions {
  std::string top;
  std::string preset;         // for the header
  double target_mhz = 0;      // clock.target_mhz
  double io_delay_frac = 0;   // input and output delay as a fraction of the period
  std::string driving_cell;   // library cell driving every input ("" = none)
  double output_load = 0;     // capacitive load on every output, library units (0 = none)
};

// Clock port: "clk_i" when the module has it, else the first 1-bit input whose name starts with
// "clk"; "" when there is none (a virtual clock is used).
std::string clock_port(const std::vector<Port>& ports);
// Asynchronous reset port: "rst_ni"/"rst_n"/"rst_i" style 1-bit input, "" when there is none.
std::string reset_port(const std::vector<Port>& ports);

// The SDC text. Clock period 1000 / target_mhz ns; the asynchronous reset is a false path (its
// deassertion is synchronized to the clock outside the block); input/output delays as a fraction
// of the period on every other port.
std::string make_sdc(const SdcOptions& opt, const std::vector<Port>& ports);

// Verilog of module capsgen_fpga_harness: clk_i, rst_ni, sin_i, cap_i in, sout_o out. Every data
// input bit of `top` comes from a shift register fed by sin_i; every output bit is captured into a
// register (cap_i) that shifts out through sout_o. Keeps all of the DUT's logic observable with
// five pins, and makes every DUT port a register boundary.
std::string make_fpga_harness(const std::string& top, const std::vector<Port>& ports);
inline constexpr const char* kHarnessModule = "capsgen_fpga_harness";

// iCE40 package pins for the harness (clock on a global-buffer pin). Supported devices: "up5k"
// (package sg48, pins of the iCEBreaker board) and "hx8k" (ct256, iCE40-HX8K breakout board).
struct Ice40Device {
  std::string name;       // up5k, hx8k
  std::string package;    // sg48, ct256
  std::string flag;       // nextpnr option: --up5k, --hx8k
  bool use_dsp = false;   // synth_ice40 -dsp (the device has SB_MAC16 blocks)
};
const std::vector<Ice40Device>& ice40_devices();
std::string make_pcf(const Ice40Device& dev);

}  // namespace capsgen::synth

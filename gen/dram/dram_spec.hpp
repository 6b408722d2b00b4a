// DRAM device description: organization, timings (clock cycles) and datasheet currents.
// Loaded from a YAML data file (configs/dram/*.yaml) with the strict readers of config/yaml_util.hpp;
// docs/dram.md lists the bundled devices and organizations and the source of every value, and what
// each controller policy does.
#pragma once

#include <cstdint>
#include <string>

namespace capsgen::dram {

struct DramOrganization {
  int channels = 1;
  int ranks = 1;
  int chips_per_rank = 1;  // chips operating in lock step; a beat carries chips_per_rank * device_width bits
  int device_width = 8;    // bits per chip (x8)
  int banks = 8;
  // Bank groups (DDR4): bank b belongs to group b % bank_groups; column commands, ACTs and the write
  // to read turnaround within one group take the _l timings (tCCD_L, tRRD_L, tWTR_L). 1: no groups.
  int bank_groups = 1;
  int rows = 32768;
  int columns = 1024;  // per row, in beats (one beat = one column of every chip of the rank)
  int burst_length = 8;

  // Bytes moved per beat (one column access of the rank): the "word" of Eq. 15-17 (Dp chips x 8 bits).
  int word_bytes() const { return chips_per_rank * device_width / 8; }
  std::uint64_t words_per_row() const { return static_cast<std::uint64_t>(columns); }
  std::uint64_t capacity_words() const {
    return static_cast<std::uint64_t>(channels) * ranks * banks * rows * static_cast<std::uint64_t>(columns);
  }
  std::uint64_t capacity_bytes() const { return capacity_words() * static_cast<std::uint64_t>(word_bytes()); }
};

// All timings in clock cycles of tck_ns.
struct DramTiming {
  double tck_ns = 1.25;
  int cl = 11, cwl = 8;  // read and write latency
  int rcd = 11;          // ACT -> READ/WRITE
  int rp = 11;           // PRE -> ACT
  int ras = 28;          // ACT -> PRE
  int rc = 39;           // ACT -> ACT, same bank
  int rrd = 5;           // ACT -> ACT, different banks
  int faw = 24;          // window of four ACTs
  int ccd = 4;           // column command -> column command
  int rtp = 6;           // READ -> PRE
  int wtr = 6;           // end of write data -> READ
  int wr = 12;           // end of write data -> PRE (write recovery)
  int rfc = 128;         // REF -> next command
  int refi = 6240;       // average refresh interval
  // Same-bank-group values (DDR4); equal to ccd, rrd and wtr for devices without bank groups.
  int ccd_l = 4, rrd_l = 5, wtr_l = 6;
};

// How the controller orders commands (docs/dram.md, "Controller policies"). Requests are always
// served first come, first served: column commands (READ/WRITE) issue in arrival order.
enum class ControllerPolicy {
  // Every command of a request issues after the previous request's column command: the next
  // request's PRE/ACT wait for the current request's READ/WRITE (ROMANet's setup; the default).
  Fcfs,
  // Open-bank lookahead: a request's PRE/ACT issue as soon as its bank and the ACT limits (tRP, tRAS,
  // tRC, tRRD, tFAW) allow, while earlier requests still wait for tRCD/CL, once it is among the
  // queue_depth oldest requests not yet served; row commands stay in arrival order.
  FcfsOverlap,
};
const char* to_string(ControllerPolicy p);

struct DramController {
  ControllerPolicy policy = ControllerPolicy::Fcfs;
  // FcfsOverlap: requests the controller holds at once (request n's commands wait for the column
  // command of request n - queue_depth). Fcfs behaves as a queue of one.
  int queue_depth = 1;
};

// Datasheet currents (mA, per chip) and supply (V).
struct DramPower {
  double vdd = 1.5;
  double idd0 = 70, idd2n = 43, idd3n = 55, idd4r = 156, idd4w = 145, idd5b = 195;
};

struct DramSpec {
  std::string name;
  std::string description;
  std::string source_path;
  DramOrganization org;
  DramTiming timing;
  DramPower power;
  DramController controller;

  int burst_cycles() const { return org.burst_length / 2; }  // DDR: two beats per clock
  double peak_gbps() const;  // bytes per second of the data bus at 100% utilization / 1e9
};

// The bundled ROMANet setup without reading a file (the values of configs/dram/micron-mt41j256m8-ddr3-1600.yaml;
// a unit test checks that both agree).
DramSpec ddr3_1600_2gb_x8();
// Eight of those chips side by side: a 64-bit rank (12.8 GB/s; a BL8 burst moves 64 bytes), the
// values of configs/dram/micron-mt41j256m8-ddr3-1600-x64.yaml.
DramSpec ddr3_1600_2gb_x64_rank();

// Loads and validates a DRAM data file. Throws InputError naming file, line and field.
DramSpec load_dram_spec(const std::string& path);
// The DRAM behind the accelerator's off-chip port (a preset's offchip.dram): the file at `path`, or
// the built-in DDR3-1600 x8 chip when `path` is empty.
DramSpec offchip_dram(const std::string& path);
DramSpec parse_dram_spec(const std::string& yaml_text, const std::string& file_name);

}  // namespace capsgen::dram

// Cycle-level DRAM model: one channel's command and data bus, per-bank row buffers, open-row policy,
// first-come-first-serve (requests are served strictly in arrival order), burst (BL8) and non-burst
// modes, periodic refresh. The controller policy is a field of the DRAM description
// (DramSpec::controller): with fcfs (the default) the commands of a request are issued after the
// previous request's READ/WRITE; with fcfs-overlap a request's PRE/ACT may issue while earlier
// requests wait for tRCD/CL (open-bank lookahead, up to queue_depth requests ahead; docs/dram.md).
//
// Request interface (for the trace generator and, later, the testbench's off-chip memory):
//   access(address, write, arrival)      one column access (a burst, or one beat in non-burst mode)
//   request(byte address, write, bytes, arrival, mapping)   splits a transfer into column accesses
// Both return the completion cycle (last data beat) and the row-buffer outcome; stats() counts
// requests, row hits/misses/conflicts, commands, busy cycles; energy() applies dram_energy.hpp.
//
// Row-buffer outcomes (ROMANet Sec. II-C): hit = the row is open; miss = the bank has no open row
// (ACT); conflict = another row is open (PRE, then ACT).
//
// Timing constraints modelled: tRCD, tRP, tRAS, tRC, tRRD, tFAW, tCCD, tRTP, tWR, tWTR (the _L values
// of tRRD, tCCD and tWTR within a DDR4 bank group), read-to-write
// turnaround (CL + tBURST + 2 - CWL), CL/CWL, data-bus occupancy (BL/2 cycles per column access in
// both modes: DDR3's shortest burst still takes tCCD = 4 cycles), one command per cycle, refresh
// (all banks precharged, REF, tRFC) every tREFI. Not modelled: power-down, rank-to-rank switching
// (one rank in the ROMANet setup), ODT, command/address parity.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "dram/address_mapping.hpp"
#include "dram/dram_energy.hpp"
#include "dram/dram_spec.hpp"

namespace capsgen::dram {

enum class RowOutcome { Hit, Miss, Conflict };
const char* to_string(RowOutcome o);

struct DramModelOptions {
  bool burst = true;    // one column access moves burst_length beats; false: one beat (non-burst mode)
  bool refresh = true;  // issue REF every tREFI
  bool log_commands = false;  // keep every issued command (command_log(), for checking the timing)
};

// One issued command. PreAll and Ref concern every bank (bank = -1).
struct IssuedCommand {
  enum class Kind { Act, Pre, PreAll, Read, Write, Ref };
  std::uint64_t cycle = 0;
  Kind kind = Kind::Act;
  int bank = -1;  // flat bank index (channel, rank, bank)
};

struct AccessResult {
  std::uint64_t first_command = 0;  // cycle of the request's first command (PRE, ACT or the column command)
  std::uint64_t column_command = 0; // cycle of the READ/WRITE
  std::uint64_t done = 0;           // cycle after the last data beat
  RowOutcome outcome = RowOutcome::Hit;
};

struct DramStats {
  std::uint64_t reads = 0, writes = 0;  // column accesses (requests)
  std::uint64_t bytes_read = 0, bytes_written = 0;  // useful bytes
  std::uint64_t hits = 0, misses = 0, conflicts = 0;
  CommandCounts commands;
  std::uint64_t first_arrival = 0;
  std::uint64_t end_cycle = 0;          // after the last data beat
  std::uint64_t latency_cycles = 0;     // sum over requests of done - arrival
  // Sum over requests of done - first command, by RowOutcome (hit, miss, conflict): the access latency
  // once the controller starts serving the request (ROMANet Fig. 15b).
  std::array<std::uint64_t, 3> service_cycles{};
  double mean_service_cycles(RowOutcome o) const;

  std::uint64_t requests() const { return reads + writes; }
  std::uint64_t bytes() const { return bytes_read + bytes_written; }
  std::uint64_t cycles() const { return end_cycle > first_arrival ? end_cycle - first_arrival : 0; }
};

// The part of a run between two snapshots of stats() (a layer of a network): counts subtract; the
// span starts at `before.end_cycle`.
DramStats stats_delta(const DramStats& after, const DramStats& before);

class DramModel {
 public:
  explicit DramModel(const DramSpec& spec, DramModelOptions options = {});

  const DramSpec& spec() const { return spec_; }
  const DramModelOptions& options() const { return options_; }
  // Beats (words) moved by one column access.
  int beats_per_access() const { return options_.burst ? spec_.org.burst_length : 1; }

  // One column access. `bytes` (useful bytes, for the statistics) defaults to a full access.
  AccessResult access(const DramAddress& a, bool write, std::uint64_t arrival = 0, std::uint32_t bytes = 0);

  // A transfer of `bytes` bytes from `byte_address`, split into aligned column accesses (bursts or
  // beats) decoded by `mapping`, issued in address order. Returns the last access's result (its
  // `first_command` is the first access's). bytes must be > 0.
  AccessResult request(std::uint64_t byte_address, bool write, std::uint32_t bytes, std::uint64_t arrival,
                       const AddressMapping& mapping);

  // Closes the books up to the last completion (standby time, refreshes due). Call once at the end;
  // stats() and energy() are final afterwards (they stay valid, if partial, before).
  void finish();
  // The cycle after the last issued command or data beat.
  std::uint64_t now() const;

  const DramStats& stats() const { return stats_; }
  // In issue order per request (not sorted by cycle); empty unless options.log_commands.
  const std::vector<IssuedCommand>& command_log() const { return log_; }
  EnergyBreakdown energy() const { return energy_of(energy_per_command_, stats_.commands); }
  const CommandEnergy& command_energy_values() const { return energy_per_command_; }
  // Achieved bandwidth: useful bytes / (end - first arrival), in GB/s.
  double throughput_gbps() const;

 private:
  struct Bank {
    int open_row = -1;
    std::uint64_t act_time = 0;
    std::uint64_t act_ready = 0;  // earliest ACT (tRP after PRE, tRC after the last ACT)
    std::uint64_t pre_ready = 0;  // earliest PRE (tRAS, tRTP, tWR)
  };
  std::size_t bank_index(const DramAddress& a) const;
  int group_of(const DramAddress& a) const { return a.bank % spec_.org.bank_groups; }
  bool overlap() const { return spec_.controller.policy == ControllerPolicy::FcfsOverlap; }
  std::uint64_t commands_end() const;  // the cycle after the last issued command
  std::uint64_t issue(std::uint64_t earliest);  // claims the command bus at >= earliest
  void log(std::uint64_t t, IssuedCommand::Kind k, std::size_t bank);
  void account_background(std::uint64_t until);
  void refresh_until(std::uint64_t t);
  std::uint64_t precharge(Bank& b, std::uint64_t earliest);
  void prune_command_slots();
  void note_act(std::uint64_t t);

  DramSpec spec_;
  DramModelOptions options_;
  CommandEnergy energy_per_command_;
  DramStats stats_;
  std::vector<Bank> banks_;
  std::vector<IssuedCommand> log_;
  int open_banks_ = 0;
  // fcfs: the next free command-bus cycle. fcfs-overlap: no command before it (start, after a REF);
  // the cycles taken at or above it are in cmd_slots_.
  std::uint64_t cmd_free_ = 0;
  std::set<std::uint64_t> cmd_slots_;  // fcfs-overlap: command-bus cycles already taken
  std::uint64_t cmd_last_ = 0;        // fcfs-overlap: the latest issued command
  bool any_cmd_ = false;
  std::uint64_t last_row_cmd_ = 0;    // fcfs-overlap: the latest PRE/ACT (row commands stay in order)
  bool any_row_cmd_ = false;
  std::vector<std::uint64_t> col_history_;  // fcfs-overlap: column command of request n, at n % queue_depth
  std::uint64_t served_ = 0;          // column accesses so far
  std::uint64_t last_col_ = 0;        // tCCD
  bool any_col_ = false;
  // Per bank group (one entry without groups): the latest column command (tCCD_L), ACT (tRRD_L) and
  // end of write data (tWTR_L); -1: none yet.
  std::vector<std::int64_t> group_col_, group_act_, group_wr_end_;
  std::uint64_t data_free_ = 0;       // data bus
  std::uint64_t last_rd_cmd_ = 0;     // for read-to-write turnaround
  bool any_rd_ = false;
  std::uint64_t last_wr_end_ = 0;     // for tWTR
  bool any_wr_ = false;
  std::array<std::uint64_t, 4> act_window_{};  // last four ACTs (tFAW), ring
  int act_count_ = 0;
  std::uint64_t last_act_ = 0;
  std::uint64_t next_refresh_ = 0;
  std::uint64_t background_until_ = 0;  // standby time accounted up to here
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace capsgen::dram

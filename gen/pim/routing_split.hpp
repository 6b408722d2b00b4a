// PIM-CapsNet's workload distribution of the dynamic-routing procedure (Zhang et al., HPCA 2020,
// section 5.1.2, Eq. 7-12): the routing of one batch is split across the HMC vaults along the batch
// (B), the low-level capsules (L) or the high-level capsules (H). Each split is scored by
// S = 1 / (alpha E + beta M), with E the largest per-vault operation count and M the inter-vault
// bytes; the best split has the largest S. docs/pim-capsnet.md lists the formulas and assumptions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace capsgen::pim {

enum class Split { kB, kL, kH };
const char* to_string(Split s);  // "B", "L", "H"

// One routing procedure (the paper's Table 3 symbols in brackets).
struct RoutingShape {
  std::string name;
  int batch = 100;      // N_B
  int l_caps = 1152;    // N_L, low-level capsules
  int h_caps = 10;      // N_H, high-level capsules
  int iterations = 3;   // I
  int l_dim = 8;        // C_L, scalars per low-level capsule
  int h_dim = 16;       // C_H, scalars per high-level capsule
};

// The device: vaults with PEs at one clock, and the link the inter-vault data goes through.
// alpha = 1 / (pes_per_vault * f) seconds per operation of the busiest vault;
// beta = 1 / link bandwidth seconds per byte moved between vaults.
struct Device {
  int vaults = 32;            // N_vault (HMC Gen3)
  int pes_per_vault = 16;     // PEs in each vault's logic layer (Table 4)
  double freq_mhz = 312.5;    // PE clock (Table 4; section 6.4 also uses 625 and 937.5)
  double link_gbs = 16.0;     // GB/s: one vault's share of the 512 GB/s internal bandwidth
  int value_bytes = 4;        // SIZE of one scalar (FP32)
  int packet_bytes = 16;      // SIZE_pkt: HMC packet head + tail (one 16-byte FLIT)
  double alpha() const;
  double beta() const;
};

// The paper's HMC setup (Table 4) at a PE clock.
Device hmc_gen3(double freq_mhz = 312.5);

// capsgen's systolic array read as the paper's vaults (docs/pim-capsnet.md "On capsgen's array"):
// each of the `cols` columns is a vault whose `rows` PEs do a multiply and an add per cycle (2 rows
// operations, the paper's counting); every exchange between columns goes through the engine's output
// writer and the data scratchpad, one `act_bits` code per cycle; no packet headers.
Device array_device(int rows, int cols, int act_bits, double clock_mhz);

struct SplitCost {
  Split split = Split::kB;
  double e_ops = 0;    // E: operations of the busiest vault
  double m_bytes = 0;  // M: bytes moved between vaults
  double seconds = 0;  // alpha E + beta M
  double score = 0;    // S = 1 / seconds
};

// Eq. 7 (the simplified Eq. 6: N_L >> 1), Eq. 8; Eq. 9, 10; Eq. 11, 12.
double work_b(const RoutingShape& r, int vaults);
double work_l(const RoutingShape& r, int vaults);
double work_h(const RoutingShape& r, int vaults);
double move_b(const RoutingShape& r, const Device& d);
double move_l(const RoutingShape& r, const Device& d);
double move_h(const RoutingShape& r, const Device& d);

SplitCost evaluate(const RoutingShape& r, const Device& d, Split s);

struct Choice {
  std::array<SplitCost, 3> costs;  // B, L, H
  Split best = Split::kB;          // largest score; ties go to the earlier of B, L, H
};
Choice choose(const RoutingShape& r, const Device& d);

// Table 1's twelve benchmarks (Caps-MN1 .. Caps-SV3) with CapsNet-MNIST's capsule sizes (C_L = 8,
// C_H = 16), which the paper uses for all of them (section 3: "CapsNet-MNIST like structure").
const std::vector<RoutingShape>& table1();
const RoutingShape& table1(const std::string& name);  // throws std::out_of_range

// The choices the paper states in its text (section 6.4; Fig. 18's heat map has no numbers).
struct PaperChoice {
  std::string benchmark;
  double freq_mhz;
  Split split;
};
const std::vector<PaperChoice>& paper_choices();

}  // namespace capsgen::pim

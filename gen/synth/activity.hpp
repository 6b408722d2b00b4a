// Switching activity of a simulated inference (`capsgen sim --memory dram --activity FILE`): the number
// of value changes of every register and port bit of the chip over the run, taken from Verilator's
// toggle coverage (a model built with --coverage counts, per bit, every cycle in which the bit
// differs from its previous value). The document (`capsgen.activity/1`, schemas/activity.schema.json)
// is what `capsgen synth --target asic-osu018 --activity FILE` maps onto a synthesized block's
// netlist for OpenSTA's power analysis (synth/power.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace capsgen::synth {

inline constexpr const char* kActivitySchema = "capsgen.activity/1";

// One module instance of the simulated design: its hierarchical path below the top ("u_engine.u_array")
// and its module ("capsgen_systolic_array").
struct ActivityInstance {
  std::string path, module;
};

struct ActivityDoc {
  std::string top;             // the simulated top module ("capsgen_chip")
  std::string preset, network;
  long long cycles = 0;          // clock cycles the toggles were counted over (the whole simulation)
  long long program_cycles = 0;  // of which the inference (start_i to done_o)
  double clock_mhz = 0;
  long long useful_macs = 0;     // the inference's MACs (for energy per MAC)
  std::vector<ActivityInstance> instances;
  // "u_engine.u_array.u_pe_r0_c0.sum_q[3]" -> value changes over `cycles` (paths below the top).
  std::map<std::string, long long> toggles;
};

// The toggle points of a verilator_coverage file (`text`, from `file` for messages): every point
// whose page is "v_toggle/<module>" becomes a bit of the instance named by its hierarchy, which
// must start with "TOP.<top>" (the path is taken below it). Line and branch points are skipped.
// Throws InputError naming the file when the text holds no toggle point of `top`.
ActivityDoc activity_from_coverage(const std::string& text, const std::string& file, const std::string& top);

// The document as JSON text, and back (read_activity: InputError naming the file and field).
std::string activity_json(const ActivityDoc& doc);
ActivityDoc read_activity(const std::string& path);

// read_activity, and an InputError (field "preset") when the document was simulated on another preset.
ActivityDoc read_activity_of_preset(const std::string& path, const std::string& preset);

// The instance of `module` in the document; InputError (naming `file`) when there is none or more
// than one.
const ActivityInstance& find_instance(const ActivityDoc& doc, const std::string& module, const std::string& file);

// The toggles of the bits below instance `path`, by name relative to it ("u_pe_r0_c0.sum_q[3]").
std::map<std::string, long long> toggles_below(const ActivityDoc& doc, const std::string& path);

}  // namespace capsgen::synth

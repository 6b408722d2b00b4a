// The flow scripts of flows/ (compiled in) and the {{NAME}} substitution that fills them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace capsgen::synth {

struct FlowTemplate {
  const char* name;  // path relative to flows/, e.g. "yosys/asic_osu018.ys"
  const char* text;
};

const std::vector<FlowTemplate>& flow_templates();  // generated: flow_templates.cpp

// The template of that name; throws std::out_of_range.
std::string flow_template(const std::string& name);

// Replaces every {{KEY}} by vars[KEY]. Throws std::invalid_argument naming the template when a
// field has no value (so a template and its caller cannot drift apart silently).
std::string fill_template(const std::string& text, const std::map<std::string, std::string>& vars,
                          const std::string& template_name);

}  // namespace capsgen::synth

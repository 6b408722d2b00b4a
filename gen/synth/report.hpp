// Markdown view of a `capsgen synth` JSON report (the JSON is the single source: the Markdown only
// formats what the JSON holds).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace capsgen::synth {

std::string synth_report_markdown(const nlohmann::ordered_json& j);
// A few lines for the terminal.
std::string synth_report_summary(const nlohmann::ordered_json& j);

}  // namespace capsgen::synth

// Report of one golden-model inference: per-tensor formats, ranges, checksums and error against
// the float reference, class norms and the prediction. Markdown for people, JSON for tools.
#pragma once

#include <string>

#include "golden/fixed_model.hpp"
#include "golden/float_model.hpp"
#include "golden/workload.hpp"

namespace capsgen {

// FNV-1a over the codes: a compact fingerprint to compare runs and the RTL's outputs.
std::uint64_t tensor_checksum(const IntTensor& t);

struct GoldenRun {
  const Workload* workload = nullptr;
  std::string input_source;
  FixedTrace fixed;
  FloatTrace flt;
  GoldenStats stats;
  int label = -1;  // true class when known
};

std::string golden_report_markdown(const GoldenRun& run);
std::string golden_report_json(const GoldenRun& run);

}  // namespace capsgen

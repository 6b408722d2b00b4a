// The results document a testbench writes with --results FILE (tb_accel and the engine's program
// mode: schemas/accel-results.schema.json; tb_chip: schemas/chip-results.schema.json): every figure
// its "stat" lines print, the functional coverage bins, the verdict and the problem lines. capsgen sim
// reads it (gen/sim/results.hpp); the stdout lines are for people reading the log.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/sim.hpp"

namespace tb {

using Json = nlohmann::ordered_json;

// The verdict of a run into `doc`: pass, the checks and errors counted, the problem lines.
inline void set_verdict(Json& doc, const Report& report) {
  doc["pass"] = report.errors() == 0;
  doc["checks"] = report.checks();
  doc["errors"] = report.errors();
  doc["problems"] = report.problems();
}

// Where cycle 0 begins in the run's FST into `doc` ("trace_reset_released_ps", ps; null without a
// trace): capsgen sim opens its GTKWave save file there.
inline void set_trace_start(Json& doc, const Sim& sim) {
  const long long ps = sim.reset_released_ps();
  doc["trace_reset_released_ps"] = ps < 0 ? Json(nullptr) : Json(ps);
}

// The results document as far as the run got: its `figures` with the verdict and the trace start.
inline Json finished_results(Json figures, const Report& report, const Sim& sim) {
  set_verdict(figures, report);
  set_trace_start(figures, sim);
  return figures;
}

// Functional coverage bins into `doc`: "functional_coverage" {bin: count} in `order`, and
// "functional_coverage_na" the bins whose hardware is not in this RTL (counted 0).
inline void set_functional_coverage(Json& doc, const std::vector<std::string>& order,
                                    const std::map<std::string, long long>& counts, const std::vector<std::string>& na) {
  Json bins = Json::object();
  for (const std::string& b : order) bins[b] = counts.count(b) ? counts.at(b) : 0;
  for (const std::string& b : na) bins[b] = 0;
  doc["functional_coverage"] = bins;
  doc["functional_coverage_na"] = na;
}

// Writes `doc` to `path` (nothing when `path` is empty) through a temporary file and a rename, so a
// reader never sees half a document. `failure` (the message of an exception that ended the run, or
// empty) is added to its problems and fails it.
inline void write_results(const std::string& path, Json doc, const std::string& failure) {
  if (path.empty()) return;
  if (!failure.empty()) {
    doc["pass"] = false;
    doc["problems"].push_back(failure);
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << doc.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace tb

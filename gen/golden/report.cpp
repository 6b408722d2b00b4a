#include "golden/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace capsgen {

std::uint64_t tensor_checksum(const IntTensor& t) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::int32_t v : t.data) {
    auto u = static_cast<std::uint32_t>(v);
    for (int b = 0; b < 4; ++b) {
      h ^= (u >> (8 * b)) & 0xffu;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

namespace {

struct TensorRow {
  std::string name;
  std::string shape;
  int frac = 0;
  std::int32_t min = 0, max = 0;
  double max_err = 0, mean_err = 0;  // vs float, in real units
  bool has_float = false;
  std::uint64_t checksum = 0;
};

std::vector<TensorRow> rows_of(const GoldenRun& run) {
  std::vector<TensorRow> rows;
  const Workload& w = *run.workload;
  for (const auto& [name, t] : run.fixed.tensors) {
    TensorRow r;
    r.name = name;
    r.shape = shape_str(t.shape);
    r.frac = trace_frac(w.net, w.qm, name);
    auto [mn, mx] = std::minmax_element(t.data.begin(), t.data.end());
    r.min = *mn;
    r.max = *mx;
    r.checksum = tensor_checksum(t);
    if (const FloatTensor* f = run.flt.find(name); f && f->shape == t.shape) {
      r.has_float = true;
      double sum = 0;
      for (std::size_t i = 0; i < t.size(); ++i) {
        const double e = std::fabs(std::ldexp(double(t[i]), -r.frac) - (*f)[i]);
        r.max_err = std::max(r.max_err, e);
        sum += e;
      }
      r.mean_err = t.size() ? sum / double(t.size()) : 0;
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

std::string golden_report_markdown(const GoldenRun& run) {
  const Workload& w = *run.workload;
  std::string out;
  out += fmt::format("# capsgen golden model: {} on {}\n\n", w.net.name, w.cfg.name);
  out += fmt::format("- preset: `{}` ({}x{} array, {}-bit data, {}-bit weights, {}-bit partial sums)\n",
                     w.cfg.source_path, w.cfg.array.rows, w.cfg.array.cols, w.cfg.widths.data, w.cfg.widths.weight,
                     w.cfg.widths.psum);
  out += fmt::format("- network: `{}`\n- weights: {}\n- input: {}\n- calibration images: {}\n\n", w.net.source_path,
                     w.weights_source, run.input_source, w.calib.size());
  out += "## Layer formats\n\n| layer | in frac | w frac | out frac | shift | extra |\n|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < w.qm.layers.size(); ++i) {
    const LayerQuant& q = w.qm.layers[i];
    std::string extra;
    if ((w.net.layers[i].kind == LayerKind::ClassCaps || w.net.layers[i].kind == LayerKind::ConvCaps3d))
      extra = fmt::format("s_shift {}, b_shift {}, norm_shift {}", q.s_shift, q.b_shift, q.norm_shift);
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", q.name, q.in_frac, q.w_frac, q.out_frac, q.shift, extra);
  }
  out += "\n## Intermediate tensors (fixed point vs float reference)\n\n";
  out += "| tensor | shape | frac | min code | max code | max abs err | mean abs err | checksum |\n";
  out += "|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows_of(run)) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:016x} |\n", r.name, r.shape, r.frac, r.min, r.max,
                       r.has_float ? fmt::format("{:.4f}", r.max_err) : "-",
                       r.has_float ? fmt::format("{:.4f}", r.mean_err) : "-", r.checksum);
  }
  out += "\n## Classification\n\n| class | norm (fixed) | norm (float) |\n|---|---|---|\n";
  for (std::size_t j = 0; j < run.fixed.class_norms.size(); ++j)
    out += fmt::format("| {} | {:.4f} | {:.4f} |\n", j, run.fixed.class_norms[j],
                       j < run.flt.class_norms.size() ? run.flt.class_norms[j] : NAN);
  out += fmt::format("\nprediction: fixed-point **{}**, float **{}**{}{}\n", run.fixed.prediction, run.flt.prediction,
                     run.fixed.prediction == run.flt.prediction ? " (agree)" : " (DISAGREE)",
                     run.label >= 0 ? fmt::format(", true label {}", run.label) : "");
  out += fmt::format("\nwork: {} MACs, {} accumulator saturations, {} output saturations\n", run.stats.macs,
                     run.stats.psum_saturations, run.stats.output_saturations);
  return out;
}

std::string golden_report_json(const GoldenRun& run) {
  const Workload& w = *run.workload;
  nlohmann::ordered_json j;
  j["network"] = w.net.name;
  j["preset"] = w.cfg.name;
  j["weights"] = w.weights_source;
  j["input"] = run.input_source;
  j["prediction"] = run.fixed.prediction;
  j["float_prediction"] = run.flt.prediction;
  if (run.label >= 0) j["label"] = run.label;
  j["class_norms"] = run.fixed.class_norms;
  j["float_class_norms"] = run.flt.class_norms;
  j["macs"] = run.stats.macs;
  j["psum_saturations"] = run.stats.psum_saturations;
  j["output_saturations"] = run.stats.output_saturations;
  for (std::size_t i = 0; i < w.qm.layers.size(); ++i) {
    const LayerQuant& q = w.qm.layers[i];
    nlohmann::ordered_json l{{"name", q.name}, {"in_frac", q.in_frac}, {"w_frac", q.w_frac},
                             {"out_frac", q.out_frac}, {"shift", q.shift}};
    if ((w.net.layers[i].kind == LayerKind::ClassCaps || w.net.layers[i].kind == LayerKind::ConvCaps3d)) {
      l["s_shift"] = q.s_shift;
      l["b_shift"] = q.b_shift;
      l["norm_shift"] = q.norm_shift;
    }
    j["layers"].push_back(l);
  }
  for (const auto& r : rows_of(run)) {
    nlohmann::ordered_json t{{"name", r.name}, {"shape", r.shape},           {"frac", r.frac},
                             {"min", r.min},   {"max", r.max},               {"checksum", fmt::format("{:016x}", r.checksum)}};
    if (r.has_float) {
      t["max_abs_err"] = r.max_err;
      t["mean_abs_err"] = r.mean_err;
    }
    j["tensors"].push_back(t);
  }
  return j.dump(2) + "\n";
}

}  // namespace capsgen

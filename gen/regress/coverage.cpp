#include "regress/coverage.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace capsgen::cli::regress {

std::vector<CovPoint> parse_coverage_dat(const std::string& text) {
  std::vector<CovPoint> out;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.rfind("C '", 0) != 0) continue;
    const std::size_t close = line.rfind('\'');
    if (close <= 2) throw std::runtime_error("coverage data line " + std::to_string(line_no) + ": no closing quote");
    const std::string key = line.substr(3, close - 3);
    CovPoint p;
    try {
      std::size_t pos = 0;
      p.count = std::stoll(line.substr(close + 1), &pos);
    } catch (const std::exception&) {
      throw std::runtime_error("coverage data line " + std::to_string(line_no) + ": no count after the key");
    }
    std::string page;
    // Fields: \x01 name \x02 value, repeated.
    std::size_t i = 0;
    while (i < key.size()) {
      if (key[i] != '\x01') {
        ++i;
        continue;
      }
      const std::size_t sep = key.find('\x02', i + 1);
      if (sep == std::string::npos) break;
      std::size_t next = key.find('\x01', sep + 1);
      if (next == std::string::npos) next = key.size();
      const std::string name = key.substr(i + 1, sep - i - 1), value = key.substr(sep + 1, next - sep - 1);
      if (name == "page") page = value;
      else if (name == "f") p.file = value;
      else if (name == "l") p.line = std::atoi(value.c_str());
      else if (name == "o") p.comment = value;
      else if (name == "h") p.hier = value;
      else if (name == "t" && p.type.empty()) p.type = value;
      i = next;
    }
    if (page.rfind("v_", 0) == 0 && page.find('/') != std::string::npos) {
      p.type = page.substr(2, page.find('/') - 2);
      p.module = page.substr(page.find('/') + 1);
      // Verilator names parameterized copies "<module>__<params>" (capsgen_act_fifo__W9): one module.
      if (const std::size_t k = p.module.find("__"); k != std::string::npos && k > 0) p.module.resize(k);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::map<std::string, ModuleCoverage> coverage_by_module(const std::vector<CovPoint>& points) {
  // Per module: line -> hit (any point on it), toggle point (comment, without the instance) -> hit.
  std::map<std::string, std::map<std::pair<std::string, int>, bool>> lines;
  std::map<std::string, std::map<std::string, bool>> toggles;
  std::map<std::string, ModuleCoverage> out;
  for (const CovPoint& p : points) {
    if (p.module.empty()) continue;
    ModuleCoverage& m = out[p.module];
    if (!p.file.empty()) m.files.insert(p.file);
    if (!p.hier.empty()) m.instances.insert(p.hier);
    if (p.type == "line") {
      bool& hit = lines[p.module][{p.file, p.line}];
      hit = hit || p.count > 0;
    } else if (p.type == "toggle") {
      bool& hit = toggles[p.module][p.file + ":" + std::to_string(p.line) + ":" + p.comment];
      hit = hit || p.count > 0;
    }
  }
  for (auto& [name, m] : out) {
    for (const auto& [l, hit] : lines[name]) {
      ++m.lines;
      if (hit) ++m.lines_hit;
      else m.uncovered_lines[l.first].push_back(l.second);
    }
    for (const auto& [k, hit] : toggles[name]) {
      ++m.toggles;
      if (hit) ++m.toggles_hit;
    }
  }
  return out;
}

double percent(long long hit, long long total) { return total ? 100.0 * double(hit) / double(total) : 100.0; }

void FunctionalCoverage::add(const std::map<std::string, long long>& run_bins, const std::vector<std::string>& run_na,
                             const std::vector<std::string>& run_order) {
  for (const std::string& b : run_order)
    if (!bins.count(b)) {
      bins[b] = 0;
      runs[b] = 0;
      order.push_back(b);
    }
  for (const auto& [b, n] : run_bins) {
    if (!bins.count(b)) {
      bins[b] = 0;
      runs[b] = 0;
      order.push_back(b);
    }
    bins[b] += n;
    if (n > 0) ++runs[b];
    if (std::find(run_na.begin(), run_na.end(), b) == run_na.end()) {
      measured.insert(b);
      na.erase(b);
    }
  }
  for (const std::string& b : run_na)
    if (!measured.count(b)) na.insert(b);
}

std::vector<std::string> FunctionalCoverage::never_hit() const {
  std::vector<std::string> out;
  for (const std::string& b : order)
    if (bins.at(b) == 0 && !na.count(b)) out.push_back(b);
  return out;
}

}  // namespace capsgen::cli::regress

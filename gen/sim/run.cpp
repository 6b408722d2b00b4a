// Running testbenches and reading their traces (sim/run.hpp).
#include "sim/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "core/shell.hpp"
#include "core/atomic_file.hpp"
#include "emit/generate.hpp"

namespace capsgen::sim {

namespace fs = std::filesystem;

// Runs a shell command with its output in `log`; returns the exit status.
int run_logged(const std::string& cmd, const fs::path& log) {
  const int rc = std::system((cmd + " > " + quote(log.string()) + " 2>&1").c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

// The generated RTL in `dir` equals what build_design would write (same files, same contents).
bool rtl_up_to_date(const std::vector<emit::OutputFile>& files, const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / emit::kFileListName, ec)) return false;
  std::size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) ++on_disk;
  if (on_disk != files.size()) return false;
  for (const emit::OutputFile& f : files)
    if (slurp(dir / f.name) != f.contents) return false;
  return true;
}

// The value of `key` in a CMake cache ("KEY:TYPE=value" lines); empty when absent.
std::string cmake_cache_value(const fs::path& cache, const std::string& key) {
  std::istringstream in(slurp(cache));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0 && line.find('=') != std::string::npos) return line.substr(line.find('=') + 1);
  return "";
}

std::uint64_t clock_period_ps(double mhz) { return static_cast<std::uint64_t>(std::llround(1e6 / mhz)); }

TraceWindow trace_window(std::optional<long long> reset_released_ps, std::uint64_t period_ps, std::uint64_t first,
                         std::uint64_t end) {
  if (!reset_released_ps || *reset_released_ps < 0) return {};
  const auto reset_released = static_cast<std::uint64_t>(*reset_released_ps);
  return {reset_released + first * period_ps, reset_released + end * period_ps};
}

namespace {

// The window of a .gtkw: GTKWave's wave pane with [size] kGtkwWidth x kGtkwHeight and the two
// signal panes at their widths below is about kWavePanePixels wide.
constexpr int kGtkwWidth = 1400, kGtkwHeight = 800, kSstWidth = 220, kSignalsWidth = 260, kWavePanePixels = 880;

// A VCD timescale ("1ps", "10 ns") in ps; 0 when not understood.
std::uint64_t timescale_ps(const std::string& ts) {
  std::size_t digits = 0;
  while (digits < ts.size() && std::isdigit(static_cast<unsigned char>(ts[digits]))) ++digits;
  const std::uint64_t n = digits ? std::stoull(ts.substr(0, digits)) : 0;
  std::string unit = ts.substr(digits);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  const std::map<std::string, double> ps_per = {{"fs", 1e-3}, {"ps", 1},   {"ns", 1e3},
                                                 {"us", 1e6},  {"ms", 1e9}, {"s", 1e12}};
  const auto it = ps_per.find(unit);
  const double v = it == ps_per.end() ? 0.0 : static_cast<double>(n) * it->second;
  return v >= 1.0 ? static_cast<std::uint64_t>(v) : 0;
}

// GTKWave's zoom (the save file's "*" line) that shows `span` time units across `pixels`: it shows
// zoombase^-zoom units per 200 pixels, and its zoombase is 2 unless an rc file changes it.
double gtkw_zoom(std::uint64_t span, int pixels) {
  return -std::log2(200.0 * static_cast<double>(span) / static_cast<double>(pixels));
}

}  // namespace

std::string write_gtkw(const fs::path& fst, const fs::path& gtkw, const std::string& top, const TraceGroups& groups,
                       const TraceWindow& window, const TraceCodes& codes) {
  std::map<std::string, std::string> sig;  // name at the engine's scope -> full name with range
  std::string timescale;
  const std::string cmd = "fst2vcd -f " + quote(fst.string()) + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "cannot run fst2vcd";
  std::vector<std::string> scope;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) {
    std::istringstream ls(buf);
    std::string kw;
    ls >> kw;
    if (kw == "$timescale") {  // "$timescale 1ps $end", or over several lines
      for (std::string t;;) {
        if (!(ls >> t)) {
          if (!std::fgets(buf, sizeof buf, p)) break;
          ls = std::istringstream(buf);
          continue;
        }
        if (t == "$end") break;
        timescale += t;
      }
    } else if (kw == "$scope") {
      std::string type, name;
      ls >> type >> name;
      scope.push_back(name);
    } else if (kw == "$upscope") {
      if (!scope.empty()) scope.pop_back();
    } else if (kw == "$var") {
      std::string type, width, id, name, range;
      ls >> type >> width >> id >> name >> range;
      // Signals of the top module (scope TOP.<top>) and of its direct instances.
      if (scope.size() >= 2 && scope.size() <= 3 && scope[1] == top) {
        std::string rel = scope.size() == 3 ? scope[2] + "." + name : name, full;
        for (const std::string& s : scope) full += s + ".";
        full += name;
        sig[rel] = range.rfind('[', 0) == 0 ? full + range : full;
      }
    } else if (kw == "$enddefinitions") {
      break;
    }
  }
  pclose(p);
  if (sig.empty()) return "no " + top + " signals in the trace";
  std::string out = fmt::format("[dumpfile] \"{}\"\n[savefile] \"{}\"\n", fs::absolute(fst).string(),
                                fs::absolute(gtkw).string());
  // The view: from window.start_ps, zoomed so that the window fills the wave pane; the times of the
  // save file are in the trace's timescale.
  const std::uint64_t unit_ps = timescale_ps(timescale);
  if (window.end_ps > window.start_ps && unit_ps > 0) {
    const std::uint64_t start = window.start_ps / unit_ps;
    const std::uint64_t span = (window.end_ps - window.start_ps + unit_ps - 1) / unit_ps;
    out += fmt::format("[timestart] {}\n[size] {} {}\n[pos] -1 -1\n*{:.6f} -1\n[sst_width] {}\n[signals_width] {}\n",
                       start, kGtkwWidth, kGtkwHeight, gtkw_zoom(span, kWavePanePixels), kSstWidth, kSignalsWidth);
  } else {
    out += "[timestart] 0\n";
  }
  out += "[sst_expanded] 1\n";
  int filters = 0;
  for (const auto& [group, names] : groups) {
    out += fmt::format("@800200\n-{}\n", group);
    for (const std::string& n : names) {
      const auto it = sig.find(n);
      if (it == sig.end()) continue;
      const auto named = codes.find(n);
      if (named != codes.end() && !named->second.empty()) {
        // Decimal, right-justified, through a translate file (GTKWave's TR_FTRANSLATED, 0x2000).
        fs::path table = gtkw;
        std::string stem = n;
        std::replace(stem.begin(), stem.end(), '.', '_');
        table.replace_extension("." + stem + ".txt");
        std::string lines;
        for (const auto& [value, name] : named->second) lines += fmt::format("{} {}\n", value, name);
        write_file_atomic(table.string(), lines);
        out += fmt::format("@2024\n^{} {}\n{}\n", ++filters, fs::absolute(table).string(), it->second);
        continue;
      }
      out += (it->second.find('[') == std::string::npos ? "@28\n" : "@24\n") + it->second + "\n";
    }
    out += fmt::format("@1000200\n-{}\n", group);
  }
  write_file_atomic(gtkw.string(), out);
  return "";
}

std::string trace_report_line(const fs::path& trace, const std::string& top, const TraceGroups& groups,
                              const TraceWindow& window, std::string& gtkw, const TraceCodes& codes) {
  const fs::path g = fs::path(trace).replace_extension(".gtkw");
  const std::string err = write_gtkw(trace, g, top, groups, window, codes);
  gtkw = err.empty() ? g.string() : "";
  return err.empty() ? fmt::format("- trace: {} (open with `gtkwave {}`)\n", trace.string(), g.string())
                     : fmt::format("- trace: {} (no .gtkw: {})\n", trace.string(), err);
}

std::string problems_section(const std::vector<std::string>& problems) {
  if (problems.empty()) return "";
  std::string md = "\n## Problems\n\n```\n";
  for (const std::string& p : problems) md += p + "\n";
  return md + "```\n";
}

namespace {

// The RTL directory's trace_groups.json (emit/trace_groups.hpp); null when absent or not JSON.
nlohmann::json read_trace_groups_json(const fs::path& rtl) {
  std::ifstream in(rtl / emit::kTraceGroupsName);
  if (!in) return nullptr;
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

TraceCodes read_trace_codes(const fs::path& rtl, const std::string& top) {
  const nlohmann::json j = read_trace_groups_json(rtl);
  TraceCodes codes;
  if (!j.is_object() || !j.contains("codes") || !j["codes"].is_object() || !j["codes"].contains(top)) return codes;
  for (const auto& [signal, values] : j["codes"][top].items()) {
    if (!values.is_object()) continue;
    auto& named = codes[signal];
    for (const auto& [value, name] : values.items())
      if (name.is_string() && !value.empty() && value.find_first_not_of("0123456789") == std::string::npos)
        named.emplace_back(std::stoull(value), name.get<std::string>());
    std::sort(named.begin(), named.end());
  }
  return codes;
}

TraceGroups read_trace_groups(const fs::path& rtl, const std::string& top) {
  const nlohmann::json j = read_trace_groups_json(rtl);
  TraceGroups groups;
  if (!j.is_object() || !j.contains(top) || !j[top].is_array()) return groups;
  for (const nlohmann::json& g : j[top])
    groups.emplace_back(g.value("group", ""), g.value("signals", std::vector<std::string>{}));
  return groups;
}

}  // namespace capsgen::sim

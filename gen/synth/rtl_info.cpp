#include "synth/rtl_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "core/input_error.hpp"
#include "core/summary_json.hpp"
#include "synth/tool.hpp"

namespace capsgen::synth {
namespace fs = std::filesystem;

bool RtlInfo::has_module(const std::string& m) const {
  return std::find(modules.begin(), modules.end(), m) != modules.end();
}

std::vector<std::string> RtlInfo::roots() const {
  std::set<std::string> used;
  for (const auto& [m, subs] : instances)
    for (const auto& [s, n] : subs) used.insert(s);
  std::vector<std::string> out;
  for (const std::string& m : modules)
    if (!used.count(m)) out.push_back(m);
  return out;
}

std::vector<std::string> RtlInfo::submodules(const std::string& top) const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::function<void(const std::string&)> visit = [&](const std::string& m) {
    auto it = instances.find(m);
    if (it == instances.end()) return;
    for (const auto& [s, n] : it->second) {
      if (seen.count(s)) continue;
      seen.insert(s);
      visit(s);
      out.push_back(s);
    }
  };
  visit(top);
  return out;
}

namespace {

std::string strip_comments(const std::string& t) {
  std::string out;
  out.reserve(t.size());
  for (std::size_t i = 0; i < t.size();) {
    if (t.compare(i, 2, "//") == 0) {
      while (i < t.size() && t[i] != '\n') ++i;
    } else if (t.compare(i, 2, "/*") == 0) {
      const auto e = t.find("*/", i + 2);
      i = e == std::string::npos ? t.size() : e + 2;
      out += ' ';
    } else if (t[i] == '"') {
      out += t[i++];
      while (i < t.size() && t[i] != '"') {
        if (t[i] == '\\' && i + 1 < t.size()) out += t[i++];
        out += t[i++];
      }
      if (i < t.size()) out += t[i++];
    } else {
      out += t[i++];
    }
  }
  return out;
}

std::vector<std::string> tokens(const std::string& t) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '\\' || c == '$') {
      std::size_t j = i + 1;
      if (c == '\\') {
        while (j < t.size() && !std::isspace(static_cast<unsigned char>(t[j]))) ++j;
      } else {
        while (j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_' || t[j] == '$')) ++j;
      }
      out.push_back(t.substr(i, j - i));
      i = j;
    } else {
      out.push_back(std::string(1, c));
      ++i;
    }
  }
  return out;
}

}  // namespace

void scan_verilog(const std::string& text, RtlInfo& info) {
  const auto tk = tokens(strip_comments(text));
  // pass 1: module names
  for (std::size_t i = 0; i + 1 < tk.size(); ++i)
    if (tk[i] == "module" || tk[i] == "macromodule")
      if (!info.has_module(tk[i + 1])) info.modules.push_back(tk[i + 1]);
  // pass 2: instances of known modules inside module bodies
  std::string current;
  for (std::size_t i = 0; i < tk.size(); ++i) {
    if ((tk[i] == "module" || tk[i] == "macromodule") && i + 1 < tk.size()) {
      current = tk[i + 1];
      ++i;
      continue;
    }
    if (tk[i] == "endmodule") {
      current.clear();
      continue;
    }
    if (current.empty() || !info.has_module(tk[i])) continue;
    // <module> [#( ... )] <instance name> (
    std::size_t j = i + 1;
    if (j < tk.size() && tk[j] == "#") {
      ++j;
      if (j < tk.size() && tk[j] == "(") {
        int depth = 0;
        for (; j < tk.size(); ++j) {
          if (tk[j] == "(") ++depth;
          if (tk[j] == ")" && --depth == 0) break;
        }
        ++j;
      }
    }
    if (j + 1 < tk.size() && (std::isalpha(static_cast<unsigned char>(tk[j][0])) || tk[j][0] == '_' || tk[j][0] == '\\') &&
        tk[j + 1] == "(")
      ++info.instances[current][tk[i]];
  }
}

RtlInfo load_rtl_info(const fs::path& dir_in) {
  RtlInfo info;
  info.dir = fs::absolute(dir_in).lexically_normal();
  const fs::path list = info.dir / "files.f";
  std::ifstream in(list);
  if (!in) throw InputError(list.string(), 0, 0, "--rtl", "cannot read the file list (a 'capsgen generate' output?)");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line.rfind("//", 0) == 0 || line[0] == '#') continue;
    fs::path p = line;
    if (p.is_relative()) p = info.dir / p;
    if (!fs::exists(p)) throw InputError(list.string(), n, 1, "files.f", fmt::format("'{}' does not exist", line));
    info.files.push_back(p);
  }
  if (info.files.empty()) throw InputError(list.string(), 0, 0, "files.f", "lists no Verilog files");
  for (const fs::path& f : info.files) scan_verilog(read_text(f), info);
  const fs::path summary = info.dir / "config.json";  // emit::kConfigSummaryName
  if (fs::exists(summary)) {
    const nlohmann::json cfg = read_summary(summary, "--rtl");
    if (!cfg.contains("name") || !cfg["name"].is_string())
      throw InputError(summary.string(), 0, 0, "name", "missing or not a string");
    info.preset = cfg["name"].get<std::string>();
  }
  return info;
}

std::vector<Port> parse_portlist(const std::string& text) {
  std::vector<Port> ports;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string dir, range, name;
    ls >> dir;
    if (dir != "input" && dir != "output" && dir != "inout") continue;
    ls >> range >> name;
    if (name.empty()) {  // no range printed
      name = range;
      range.clear();
    }
    Port p;
    p.name = name;
    p.direction = dir;
    if (!range.empty() && range.front() == '[') {
      int hi = 0, lo = 0;
      if (std::sscanf(range.c_str(), "[%d:%d]", &hi, &lo) == 2) p.width = std::abs(hi - lo) + 1;
    }
    ports.push_back(p);
  }
  return ports;
}

}  // namespace capsgen::synth

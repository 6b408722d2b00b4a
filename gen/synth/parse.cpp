#include "synth/parse.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace capsgen::synth {
namespace {

std::string unescape(std::string s) {
  if (!s.empty() && s[0] == '\\') s.erase(0, 1);
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

YosysStat parse_yosys_stat_json(const std::string& text) {
  // `tee -o` may prefix the JSON with log lines: start at the first '{'.
  const auto b = text.find('{');
  if (b == std::string::npos) throw std::runtime_error("Yosys stat JSON: no JSON object");
  // Yosys 0.23 `stat -json -top` also prints the hierarchy tree ("  capsgen_pe  16") into the
  // JSON: keep only lines that can be JSON.
  std::string clean;
  {
    std::istringstream in(text.substr(b));
    std::string line;
    while (std::getline(in, line)) {
      const auto f = line.find_first_not_of(" \t\r");
      if (f != std::string::npos && line[f] != '"' && line[f] != '{' && line[f] != '}' && line[f] != ']' &&
          line[f] != '[')
        continue;
      clean += line + "\n";
    }
  }
  const auto j = nlohmann::json::parse(clean);
  YosysStat st;
  for (const auto& [name, m] : j.at("modules").items()) {
    auto& counts = st.modules[unescape(name)];
    if (m.contains("num_cells_by_type"))
      for (const auto& [t, n] : m.at("num_cells_by_type").items()) counts[unescape(t)] = n.get<long long>();
  }
  if (j.contains("design")) {
    st.has_design = true;
    if (j.at("design").contains("num_cells_by_type"))
      for (const auto& [t, n] : j.at("design").at("num_cells_by_type").items()) st.design[unescape(t)] = n.get<long long>();
  }
  return st;
}

YosysChipArea parse_yosys_chip_area(const std::string& text) {
  YosysChipArea a;
  static const std::regex mod_re(R"(Chip area for module '\\?([^']+)':\s*([0-9.eE+-]+))");
  static const std::regex top_re(R"(Chip area for top module '\\?([^']+)':\s*([0-9.eE+-]+))");
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, top_re))
      a.top = std::atof(m[2].str().c_str());
    else if (std::regex_search(line, m, mod_re))
      a.modules[m[1].str()] = std::atof(m[2].str().c_str());
  }
  return a;
}

std::vector<MemoryInfo> parse_yosys_memories(const std::string& dump) {
  std::vector<MemoryInfo> out;
  std::istringstream in(dump);
  std::string line;
  MemoryInfo* cur = nullptr;
  auto int_param = [](const std::string& v) -> long long {
    // "128" or "32'00000000000000000000000010000000"
    const auto q = v.find('\'');
    if (q == std::string::npos) return std::atoll(v.c_str());
    return std::strtoll(v.substr(q + 1).c_str(), nullptr, 2);
  };
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.rfind("cell $mem_v2 ", 0) == 0) {
      out.emplace_back();
      cur = &out.back();
      cur->name = unescape(t.substr(13));
      continue;
    }
    if (t.rfind("end", 0) == 0 && t.size() == 3) {
      cur = nullptr;
      continue;
    }
    if (!cur || t.rfind("parameter ", 0) != 0) continue;
    std::istringstream ls(t.substr(10));
    std::string key, value;
    ls >> key >> value;
    key = unescape(key);
    if (key == "SIZE") cur->words = int_param(value);
    else if (key == "WIDTH") cur->width = int_param(value);
    else if (key == "ABITS") cur->abits = int_param(value);
    else if (key == "RD_PORTS") cur->read_ports = static_cast<int>(int_param(value));
    else if (key == "WR_PORTS") cur->write_ports = static_cast<int>(int_param(value));
    else if (key == "RD_CLK_ENABLE") cur->sync_read = value.find('1', value.find('\'') + 1) != std::string::npos;
    else if (key == "MEMID" && value.size() > 2) {
      std::string id = value.substr(1, value.size() - 2);  // quotes
      if (id.rfind("\\\\", 0) == 0) id.erase(0, 2);
      else if (!id.empty() && id[0] == '\\') id.erase(0, 1);
      cur->name = id;
    }
  }
  return out;
}

std::vector<std::string> yosys_warnings(const std::string& log) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const auto p = line.find("Warning: ");
    if (p == std::string::npos) continue;
    const std::string w = trim(line.substr(p));
    if (seen.insert(w).second) out.push_back(w);
  }
  return out;
}

StaReport parse_sta_log(const std::string& log) {
  StaReport r;
  std::istringstream in(log);
  std::string line, section;
  StaPath* cur = nullptr;
  int clock_lines = 0;
  bool in_path = false, arrival_seen = false, required_seen = false;
  static const std::regex num_desc(R"(^\s*(-?[0-9.]+)\s+(-?[0-9.]+)\s+(.*)$)");
  static const std::regex one_num(R"(^\s*(-?[0-9.]+)\s+(.*)$)");
  std::smatch m;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.rfind("CAPSGEN-SECTION ", 0) == 0) {
      std::istringstream ls(t.substr(16));
      ls >> section;
      if (section == "registers") {
        ls >> r.registers;
        cur = nullptr;
      } else if (section == "summary" || section == "end") {
        cur = nullptr;
      } else {
        cur = &r.sections[section];
      }
      clock_lines = 0;
      in_path = false;
      continue;
    }
    if (t.rfind("Error:", 0) == 0 || t.rfind("Error ", 0) == 0) r.errors.push_back(t);
    if (t.rfind("Warning:", 0) == 0) r.warnings.push_back(t);
    if (t.rfind("wns ", 0) == 0) r.wns = std::atof(t.substr(4).c_str());
    if (t.rfind("tns ", 0) == 0) r.tns = std::atof(t.substr(4).c_str());
    if (!cur) continue;
    if (cur->found && t.rfind("Startpoint:", 0) == 0) {  // only the first (worst) path of a section
      cur = nullptr;
      continue;
    }
    if (t.rfind("Startpoint:", 0) == 0) {
      cur->found = true;
      arrival_seen = required_seen = false;
      clock_lines = 0;
      std::string rest = trim(t.substr(11));
      const auto sp = rest.find(' ');
      cur->startpoint = sp == std::string::npos ? rest : rest.substr(0, sp);
      cur->startpoint_kind = sp == std::string::npos ? "" : trim(rest.substr(sp));
      continue;
    }
    if (t.rfind("Endpoint:", 0) == 0) {
      std::string rest = trim(t.substr(9));
      const auto sp = rest.find(' ');
      cur->endpoint = sp == std::string::npos ? rest : rest.substr(0, sp);
      cur->endpoint_kind = sp == std::string::npos ? "" : trim(rest.substr(sp));
      continue;
    }
    if (t.rfind("Delay", 0) == 0 && t.find("Time") != std::string::npos) {
      in_path = true;
      continue;
    }
    if (!in_path) continue;
    if (std::regex_match(t, m, num_desc)) {
      const double delay = std::atof(m[1].str().c_str());
      const double time = std::atof(m[2].str().c_str());
      const std::string desc = m[3].str();
      if (desc.rfind("clock ", 0) == 0 && desc.find("edge)") != std::string::npos) {
        if (++clock_lines == 2) cur->period = time;
      } else if (desc == "data arrival time") {
        cur->arrival = time;
        arrival_seen = true;
      } else if (desc == "library setup time") {
        cur->setup = -delay;
      } else if (desc == "output external delay") {
        cur->output_external = -delay;
      } else if (desc == "data required time") {
        cur->required = time;
        required_seen = true;
      } else if (clock_lines == 1 && !arrival_seen && (desc.rfind("^ ", 0) == 0 || desc.rfind("v ", 0) == 0)) {
        // "^ u_pe/_123_/Y (XOR2X1)"
        std::string pin = desc.substr(2), cell;
        const auto lp = pin.rfind(" (");
        if (lp != std::string::npos) {
          cell = pin.substr(lp + 2, pin.size() - lp - 3);
          pin = pin.substr(0, lp);
        }
        cur->points.emplace_back(pin, cell);
      }
    } else if (std::regex_match(t, m, one_num)) {
      // The first "data arrival/required time" lines are the path's; the summary repeats them
      // (arrival negated) before the slack.
      const std::string desc = m[2].str();
      if (desc.rfind("slack", 0) == 0) {
        cur->slack = std::atof(m[1].str().c_str());
        in_path = false;
      } else if (desc == "data arrival time" && !arrival_seen) {
        cur->arrival = std::atof(m[1].str().c_str());
        arrival_seen = true;
      } else if (desc == "data required time" && !required_seen) {
        cur->required = std::atof(m[1].str().c_str());
        required_seen = true;
      }
    }
  }
  return r;
}

std::map<std::string, NetlistCell> parse_netlist_cells(const std::string& v, const std::string& module) {
  std::map<std::string, NetlistCell> cells;
  // Find the module body.
  const std::string head = "module " + module;
  auto start = v.find(head + "(");
  if (start == std::string::npos) start = v.find(head + " ");
  if (start == std::string::npos) start = v.find(head + "\n");
  if (start == std::string::npos) return cells;
  const auto end = v.find("endmodule", start);
  std::istringstream in(v.substr(start, end == std::string::npos ? std::string::npos : end - start));
  std::string line;
  NetlistCell* cur = nullptr;
  static const std::regex inst_re(R"(^\s*([A-Za-z_][A-Za-z0-9_$]*)\s+(\\\S+|[A-Za-z_][A-Za-z0-9_$]*)\s*\($)");
  static const std::regex pin_re(R"(^\s*\.([A-Za-z_][A-Za-z0-9_]*)\((.*)\),?\s*$)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, inst_re)) {
      const std::string type = m[1].str();
      if (type == "module" || type == "input" || type == "output" || type == "wire" || type == "reg" ||
          type == "assign" || type == "always")
        continue;
      NetlistCell& c = cells[unescape(m[2].str())];
      c.type = type;
      cur = &c;
      continue;
    }
    if (cur && std::regex_match(line, m, pin_re)) {
      std::string net = trim(m[2].str());
      if (!net.empty() && net[0] == '\\') {
        // "\u_pe.sum_q [3]" -> "u_pe.sum_q[3]"
        net.erase(0, 1);
        const auto sp = net.find(' ');
        if (sp != std::string::npos) net = net.substr(0, sp) + trim(net.substr(sp));
      }
      cur->pins[m[1].str()] = net;
      continue;
    }
    if (trim(line) == ");") cur = nullptr;
  }
  return cells;
}

PnrReport parse_nextpnr_report(const std::string& text) {
  PnrReport r;
  const auto j = nlohmann::json::parse(text);
  if (j.contains("utilization"))
    for (const auto& [k, v] : j.at("utilization").items())
      r.utilization[k] = {v.value("used", 0LL), v.value("available", 0LL)};
  if (j.contains("fmax"))
    for (const auto& [k, v] : j.at("fmax").items()) r.fmax[k] = {v.value("achieved", 0.0), v.value("constraint", 0.0)};
  return r;
}

}  // namespace capsgen::synth

namespace capsgen::synth {
namespace {

struct Decl {
  int msb = 0, lsb = 0;
  bool ranged = false;
};

// "\u_pe.sum_q " / "data_i" identifier at s[i]; returns the identifier as written (with '\' and without
// the terminating space) and advances i.
std::string read_ident(const std::string& s, std::size_t& i) {
  std::size_t b = i;
  if (s[i] == '\\') {
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::string id = s.substr(b, i - b);
    return id;
  }
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '$')) ++i;
  return s.substr(b, i - b);
}

void skip_ws(const std::string& s, std::size_t& i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
}

std::string bit_ref(const std::string& id, const Decl* d, int bit) {
  if (d && !d->ranged) return id[0] == '\\' ? id + " " : id;
  return id[0] == '\\' ? fmt::format("{} [{}]", id, bit) : fmt::format("{}[{}]", id, bit);
}

// Expands one concatenation item to bit references, MSB first.
std::vector<std::string> expand_item(const std::string& item, const std::map<std::string, Decl>& decls) {
  std::vector<std::string> bits;
  std::size_t i = 0;
  skip_ws(item, i);
  if (i < item.size() && std::isdigit(static_cast<unsigned char>(item[i]))) {
    // N'b...
    const auto q = item.find('\'', i);
    if (q == std::string::npos || q + 1 >= item.size() || (item[q + 1] != 'b' && item[q + 1] != 'B'))
      throw std::runtime_error("cannot split constant " + item);
    const int n = std::atoi(item.substr(i, q - i).c_str());
    std::string v;
    for (std::size_t k = q + 2; k < item.size(); ++k)
      if (item[k] == '0' || item[k] == '1' || item[k] == 'x' || item[k] == 'z') v += item[k];
    while (static_cast<int>(v.size()) < n) v.insert(v.begin(), '0');
    for (char ch : v) bits.push_back(fmt::format("1'b{}", ch));
    return bits;
  }
  const std::string id = read_ident(item, i);
  if (id.empty()) throw std::runtime_error("cannot split item " + item);
  auto it = decls.find(id);
  const Decl* d = it == decls.end() ? nullptr : &it->second;
  skip_ws(item, i);
  if (i < item.size() && item[i] == '[') {
    int hi = 0, lo = 0;
    const std::string sel = item.substr(i);
    if (std::sscanf(sel.c_str(), "[%d:%d]", &hi, &lo) == 2) {
    } else if (std::sscanf(sel.c_str(), "[%d]", &hi) == 1) {
      lo = hi;
    } else {
      throw std::runtime_error("cannot split select " + item);
    }
    const int step = hi >= lo ? -1 : 1;
    for (int b = hi;; b += step) {
      bits.push_back(bit_ref(id, d ? d : nullptr, b));
      if (b == lo) break;
    }
    return bits;
  }
  if (!d) throw std::runtime_error("no declaration of " + id);
  if (!d->ranged) return {bit_ref(id, d, 0)};
  const int step = d->msb >= d->lsb ? -1 : 1;
  for (int b = d->msb;; b += step) {
    bits.push_back(bit_ref(id, d, b));
    if (b == d->lsb) break;
  }
  return bits;
}

std::vector<std::string> expand(const std::string& expr, const std::map<std::string, Decl>& decls) {
  const std::string e = trim(expr);
  if (e.empty() || e[0] != '{') return expand_item(e, decls);
  const auto close = e.rfind('}');
  const std::string inner = e.substr(1, close - 1);
  std::vector<std::string> bits;
  std::string cur;
  for (std::size_t k = 0; k <= inner.size(); ++k) {
    if (k == inner.size() || inner[k] == ',') {
      for (auto& b : expand_item(cur, decls)) bits.push_back(b);
      cur.clear();
    } else {
      if (inner[k] == '{') throw std::runtime_error("nested concatenation: " + e);
      cur += inner[k];
    }
  }
  return bits;
}

}  // namespace

std::string split_concat_assigns(const std::string& v) {
  // declarations
  std::map<std::string, Decl> decls;
  {
    std::istringstream in(v);
    std::string line;
    static const std::regex decl_re(R"(^\s*(wire|reg|input|output|inout)\s+(?:signed\s+)?(?:\[(-?\d+):(-?\d+)\]\s*)?(\\\S+|[A-Za-z_][A-Za-z0-9_$]*)\s*;)");
    std::smatch m;
    while (std::getline(in, line)) {
      if (!std::regex_search(line, m, decl_re)) continue;
      Decl d;
      if (m[2].matched) {
        d.ranged = true;
        d.msb = std::atoi(m[2].str().c_str());
        d.lsb = std::atoi(m[3].str().c_str());
      }
      decls[m[4].str()] = d;
    }
  }
  std::string out;
  std::istringstream in(v);
  std::string line;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.rfind("assign {", 0) != 0) {
      out += line + "\n";
      continue;
    }
    // assign { ... } = ... ;
    const auto eq = t.find("} = ");
    if (eq == std::string::npos || t.back() != ';') throw std::runtime_error("cannot split: " + t);
    const std::string lhs = t.substr(7, eq + 1 - 7);
    const std::string rhs = t.substr(eq + 4, t.size() - (eq + 4) - 1);
    const auto lb = expand(lhs, decls), rb = expand(rhs, decls);
    if (lb.size() != rb.size())
      throw std::runtime_error(fmt::format("cannot split (widths {} and {}): {}", lb.size(), rb.size(), t));
    for (std::size_t k = 0; k < lb.size(); ++k) out += fmt::format("  assign {} = {};\n", lb[k], rb[k]);
  }
  return out;
}

}  // namespace capsgen::synth

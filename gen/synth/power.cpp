#include "synth/power.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "synth/parse.hpp"

namespace capsgen::synth {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// "\u_pe.sum_q " -> "u_pe.sum_q"
std::string plain_name(std::string s) {
  s = trim(s);
  if (!s.empty() && s[0] == '\\') s.erase(0, 1);
  return trim(s);
}

const char* const kZero = "1'b0";
const char* const kOne = "1'b1";

// The bits of a netlist module: declared ranges, ports, and the nets that `assign` joins (union-find
// over bit names; the constants are the nets "1'b0" and "1'b1").
class ModuleNets {
 public:
  ModuleNets(const std::string& verilog, const std::string& top) {
    const std::string head = "module " + top;
    auto start = verilog.find(head + "(");
    if (start == std::string::npos) start = verilog.find(head + " ");
    if (start == std::string::npos) throw std::runtime_error("netlist: no module " + top);
    const auto end = verilog.find("endmodule", start);
    std::istringstream in(verilog.substr(start, end == std::string::npos ? std::string::npos : end - start));
    static const std::regex decl_re(R"(^\s*(input|output|inout|wire)\s+(\[(-?\d+):(-?\d+)\]\s+)?(\\\S+|[A-Za-z_][A-Za-z0-9_$]*)\s*;\s*$)");
    static const std::regex assign_re(R"(^\s*assign\s+(.+?)\s*=\s*(.+?)\s*;\s*$)");
    std::string line;
    std::smatch m;
    std::vector<std::pair<std::string, std::string>> assigns;
    while (std::getline(in, line)) {
      if (std::regex_match(line, m, decl_re)) {
        const std::string name = plain_name(m[5].str());
        if (m[2].matched) ranges_[name] = {std::stoi(m[3].str()), std::stoi(m[4].str())};
        declared_.insert(name);
        if (m[1].str() == "input") inputs_.insert(name);
        if (m[1].str() == "output") outputs_.insert(name);
      } else if (std::regex_match(line, m, assign_re)) {
        assigns.emplace_back(m[1].str(), m[2].str());
      }
    }
    for (const auto& [lhs, rhs] : assigns) {
      const std::vector<std::string> l = bits(lhs), r = bits(rhs);
      if (l.empty() || r.empty()) continue;
      // Align at the least significant bit (Verilog's assignment rule).
      for (std::size_t i = 0; i < l.size() && i < r.size(); ++i) join(l[l.size() - 1 - i], r[r.size() - 1 - i]);
    }
  }

  // A reference's bits, most significant first: name, name[i], name[h:l], a sized constant.
  std::vector<std::string> bits(const std::string& ref) const {
    std::string s = trim(ref);
    static const std::regex const_re(R"(^(\d+)'([bhd])([0-9a-fA-FxXzZ_]+)$)");
    std::smatch m;
    if (std::regex_match(s, m, const_re)) return constant_bits(std::stoi(m[1].str()), m[2].str()[0], m[3].str());
    if (s.size() >= 2 && s.front() == '{' && s.back() == '}') return concat_bits(s.substr(1, s.size() - 2));
    if (s.find('{') != std::string::npos) return {};
    std::string name = s, index;
    if (s[0] == '\\') {
      const auto sp = s.find(' ');
      name = s.substr(1, sp == std::string::npos ? std::string::npos : sp - 1);
      index = sp == std::string::npos ? "" : trim(s.substr(sp));
    } else if (const auto br = s.find('['); br != std::string::npos) {
      name = trim(s.substr(0, br));
      index = s.substr(br);
    }
    static const std::regex bit_re(R"(^\[(-?\d+)\]$)"), range_re(R"(^\[(-?\d+):(-?\d+)\]$)");
    if (std::regex_match(index, m, bit_re)) return {name + index};
    int h = 0, l = 0;
    if (std::regex_match(index, m, range_re)) {
      h = std::stoi(m[1].str());
      l = std::stoi(m[2].str());
    } else if (auto it = ranges_.find(name); it != ranges_.end()) {
      std::tie(h, l) = it->second;
    } else {
      return {name};
    }
    std::vector<std::string> out;
    for (int i = h;; i += h >= l ? -1 : 1) {
      out.push_back(fmt::format("{}[{}]", name, i));
      if (i == l) break;
    }
    return out;
  }

  std::string root(const std::string& n) {
    auto it = parent_.find(n);
    if (it == parent_.end() || it->second == n) return n;
    const std::string r = root(it->second);
    parent_[n] = r;
    return r;
  }
  // Every name joined with `n`'s net.
  std::vector<std::string> members(const std::string& r) {
    auto it = members_.find(r);
    return it == members_.end() ? std::vector<std::string>{r} : it->second;
  }
  // Every declared bit name.
  std::vector<std::string> declared_bits() const {
    std::vector<std::string> out;
    for (const std::string& n : declared_) {
      const std::vector<std::string> b = bits(n);
      out.insert(out.end(), b.begin(), b.end());
    }
    return out;
  }
  bool is_input_bit(const std::string& bit) const { return inputs_.count(base(bit)) > 0; }
  bool is_output_bit(const std::string& bit) const { return outputs_.count(base(bit)) > 0; }

 private:
  static std::string base(const std::string& bit) {
    const auto br = bit.find('[');
    return br == std::string::npos ? bit : bit.substr(0, br);
  }
  // "a , \b [3] , 2'b01" (the inside of a concatenation): every part's bits in order; none when a part
  // is not understood (a replication, say).
  std::vector<std::string> concat_bits(const std::string& inside) const {
    std::vector<std::string> out;
    std::size_t begin = 0;
    while (begin <= inside.size()) {
      auto comma = inside.find(',', begin);
      if (comma == std::string::npos) comma = inside.size();
      const std::vector<std::string> part = bits(inside.substr(begin, comma - begin));
      if (part.empty()) return {};
      out.insert(out.end(), part.begin(), part.end());
      begin = comma + 1;
    }
    return out;
  }
  static std::vector<std::string> constant_bits(int width, char radix, const std::string& digits) {
    unsigned long long v = 0;
    for (char c : digits) {
      if (c == '_') continue;
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
      v = radix == 'b' ? v * 2 + unsigned(d & 1) : radix == 'h' ? v * 16 + unsigned(d) : v * 10 + unsigned(d);
    }
    std::vector<std::string> out;
    for (int i = width - 1; i >= 0; --i) out.push_back(i < 64 && ((v >> i) & 1ULL) ? kOne : kZero);
    return out;
  }
  void join(const std::string& a, const std::string& b) {
    std::string ra = root(a), rb = root(b);
    if (ra == rb) return;
    // Constants stay roots, so a constant net is recognised by its root.
    if (rb == kZero || rb == kOne) std::swap(ra, rb);
    std::vector<std::string> mb = members(rb), ma = members(ra);
    parent_[rb] = ra;
    parent_.emplace(ra, ra);
    ma.insert(ma.end(), mb.begin(), mb.end());
    members_[ra] = std::move(ma);
    members_.erase(rb);
  }

  std::map<std::string, std::pair<int, int>> ranges_;
  std::set<std::string> inputs_, outputs_, declared_;
  std::map<std::string, std::string> parent_;
  std::map<std::string, std::vector<std::string>> members_;
};

std::string const_name(const std::string& net) {
  if (net == "1'b0" || net == "1'h0") return kZero;
  if (net == "1'b1" || net == "1'h1") return kOne;
  return net;
}

Activity eval_density(const BoolExpr& e, const std::function<Activity(const std::string&)>& var);

// The first `count` operands of an AND, OR or XOR, folded from the left (OpenSTA's parser builds the
// binary tree ((a op b) op c)).
Activity eval_operands(BoolExpr::Op op, const std::vector<BoolExpr>& operands, std::size_t count,
                       const std::function<Activity(const std::string&)>& var) {
  Activity acc = eval_density(operands.at(0), var);
  for (std::size_t i = 1; i < count; ++i) {
    const Activity b = eval_density(operands[i], var);
    if (op == BoolExpr::Op::kAnd)
      acc = {acc.density * b.duty + b.density * acc.duty, acc.duty * b.duty};
    else if (op == BoolExpr::Op::kOr)
      acc = {acc.density * (1 - b.duty) + b.density * (1 - acc.duty), 1 - (1 - acc.duty) * (1 - b.duty)};
    else {
      const double p1 = acc.duty * (1 - b.duty), p2 = b.duty * (1 - acc.duty);
      acc = {acc.density * p1 + b.density * p2, p1 + p2};
    }
  }
  return acc;
}

// The transition density and duty of a Boolean function of independent inputs, by OpenSTA 2.0.17's own
// rules (Power::evalActivity), so that its re-propagation from the pins set here gives the same values.
Activity eval_density(const BoolExpr& e, const std::function<Activity(const std::string&)>& var) {
  switch (e.op()) {
    case BoolExpr::Op::kVar:
      return var(e.var());
    case BoolExpr::Op::kConst:
      return {0.0, e.value() ? 1.0 : 0.0};
    case BoolExpr::Op::kNot: {
      const Activity a = eval_density(e.operands().at(0), var);
      return {a.density, 1.0 - a.duty};
    }
    case BoolExpr::Op::kAnd:
    case BoolExpr::Op::kOr:
    case BoolExpr::Op::kXor:
      return eval_operands(e.op(), e.operands(), e.operands().size(), var);
  }
  return {};
}

// The probability of the condition under which a transition of input `from` reaches the output of
// `function`, as OpenSTA 2.0.17 infers it when an internal_power group has no `when`
// (Power::inferedWhen on its binary tree): the other operand of the top AND (or its negation for OR and
// XOR) when one operand is `from` or !`from`; 1 for a function of `from` alone; none otherwise.
std::optional<double> infered_when_duty(const BoolExpr& f, const std::string& from,
                                        const std::function<Activity(const std::string&)>& var) {
  auto is_ref = [&](const BoolExpr& e) {
    const auto lit = e.as_literal();
    return lit && lit->first == from && (e.op() == BoolExpr::Op::kVar || e.operands()[0].op() == BoolExpr::Op::kVar);
  };
  switch (f.op()) {
    case BoolExpr::Op::kVar:
      return f.var() == from ? std::optional<double>(1.0) : std::nullopt;
    case BoolExpr::Op::kNot:
      return infered_when_duty(f.operands()[0], from, var);
    case BoolExpr::Op::kAnd:
    case BoolExpr::Op::kOr:
    case BoolExpr::Op::kXor: {
      const auto& o = f.operands();
      const bool negate = f.op() != BoolExpr::Op::kAnd;
      auto duty = [&](double d) { return negate ? 1.0 - d : d; };
      if (o.size() == 2 && is_ref(o[0])) return duty(eval_density(o[1], var).duty);
      if (is_ref(o.back())) return duty(eval_operands(f.op(), o, o.size() - 1, var).duty);
      return std::nullopt;
    }
    case BoolExpr::Op::kConst:
      return std::nullopt;
  }
  return std::nullopt;
}

// The cells of `top` with their library cells, and the driver (cell, pin) of every net root.
struct Design {
  ModuleNets nets;
  std::map<std::string, NetlistCell> cells;
  std::map<std::string, const LibCell*> lib_cells;
  std::map<std::string, std::pair<std::string, std::string>> driver;  // net root -> (instance, pin)

  Design(const std::string& netlist, const std::string& top, const Library& lib)
      : nets(netlist, top), cells(parse_netlist_cells(netlist, top)) {
    for (const auto& [inst, c] : cells) {
      const LibCell* lc = lib.cell(c.type);
      if (!lc) throw std::runtime_error(fmt::format("netlist {}: cell {} ({}) is not in the library", top, inst, c.type));
      lib_cells[inst] = lc;
      for (const auto& [pin, net] : c.pins) {
        const LibPin* lp = lc->pin(pin);
        if (lp && lp->direction == "output" && !net.empty()) driver[nets.root(const_name(net))] = {inst, pin};
      }
    }
  }
  std::string root_of(const std::string& net) { return nets.root(const_name(net)); }
};

// A count Verilator shares between the instances of a module ("u_pe_r*_c*.sum_q[3]": its coverage
// points of a module instantiated several times name them with '*'): the bits it stands for, and how
// many of the netlist's bits match, over which the count is spread evenly.
struct SharedCount {
  std::regex pattern;
  long long count = 0, instances = 1;
};

std::vector<SharedCount> shared_counts(const ModuleNets& nets, const std::map<std::string, long long>& toggles) {
  std::vector<SharedCount> out;
  std::vector<std::string> bits;
  for (const auto& [name, n] : toggles) {
    if (name.find('*') == std::string::npos) continue;
    if (bits.empty()) bits = nets.declared_bits();
    std::string re;
    for (char ch : name) {
      if (ch == '*') re += "[^.]*";
      else if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') re += ch;
      else re += std::string("\\") + ch;
    }
    SharedCount s{std::regex(re), n, 0};
    for (const std::string& b : bits) s.instances += std::regex_match(b, s.pattern) ? 1 : 0;
    if (s.instances > 0) out.push_back(std::move(s));
  }
  return out;
}

// Whether OpenSTA finds a clock for a net (Power::findClkedActivity, which otherwise uses 0.1
// transitions per second): a net a flip-flop or an input port drives, or a combinational cell with a
// clocked input. The nets of removed RAM cells' read data are undriven, so unclocked.
class ClockedNets {
 public:
  explicit ClockedNets(Design& d) : d_(d) {}
  bool operator()(const std::string& root) {
    if (auto it = memo_.find(root); it != memo_.end()) return it->second;
    memo_[root] = false;  // a combinational loop is not a clock source
    bool c = false;
    for (const std::string& name : d_.nets.members(root)) c = c || d_.nets.is_input_bit(name);
    if (auto drv = d_.driver.find(root); !c && drv != d_.driver.end()) {
      const LibCell* lc = d_.lib_cells.at(drv->second.first);
      c = lc->is_sequential();
      for (const auto& [pin, net] : d_.cells.at(drv->second.first).pins) {
        const LibPin* lp = lc->pin(pin);
        if (!c && lp && lp->direction == "input" && !net.empty()) c = (*this)(d_.root_of(net));
      }
    }
    return memo_[root] = c;
  }

 private:
  Design& d_;
  std::map<std::string, bool> memo_;
};

}  // namespace

BlockActivity map_activity(const std::string& netlist, const std::string& top, const Library& lib,
                           const std::map<std::string, long long>& toggles, long long cycles) {
  Design d(netlist, top, lib);
  BlockActivity out;
  const std::vector<SharedCount> shared = shared_counts(d.nets, toggles);
  auto toggles_of = [&](const std::string& name) -> double {
    if (auto t = toggles.find(name); t != toggles.end()) return double(t->second);
    for (const SharedCount& s : shared)
      if (std::regex_match(name, s.pattern)) return double(s.count) / double(s.instances);
    return -1;
  };
  std::map<std::string, Activity> memo;
  std::set<std::string> visiting;
  std::function<Activity(const std::string&)> net_act = [&](const std::string& net) -> Activity {
    const std::string r = d.root_of(net);
    if (auto it = memo.find(r); it != memo.end()) return it->second;
    if (r == kZero || r == kOne) {
      ++out.nets.constant;
      return memo[r] = {0.0, r == kOne ? 1.0 : 0.0};
    }
    auto drv = d.driver.find(r);
    const LibCell* lc = drv == d.driver.end() ? nullptr : d.lib_cells.at(drv->second.first);
    const LibPin* lp = lc ? lc->pin(drv->second.second) : nullptr;
    // A net a combinational cell drives takes the propagated activity even when the simulation measured
    // it (an RTL wire): OpenSTA's re-propagation would replace a measured value there.
    if (lc && !lc->is_sequential() && lp && lp->function && !visiting.count(r)) {
      visiting.insert(r);
      const NetlistCell& c = d.cells.at(drv->second.first);
      const Activity a = eval_density(*lp->function, [&](const std::string& pin) {
        auto p = c.pins.find(pin);
        return p == c.pins.end() ? Activity{0.0, 0.0} : net_act(p->second);
      });
      visiting.erase(r);
      ++out.nets.propagated;
      return memo[r] = a;
    }
    double measured = -1;
    for (const std::string& name : d.nets.members(r)) measured = std::max(measured, toggles_of(name));
    if (measured >= 0) {
      ++out.nets.measured;
      for (const std::string& name : d.nets.members(r))
        if (d.nets.is_input_bit(name)) out.ports.push_back({name, {double(measured) / double(cycles), 0.5}});
      out.measured_toggles += double(measured) / double(cycles);
      return memo[r] = {double(measured) / double(cycles), 0.5};
    }
    if (!lc && !d.nets.is_input_bit(r)) {  // undriven
      ++out.nets.constant;
      return memo[r] = {0.0, 0.0};
    }
    ++out.nets.defaulted;
    if (out.nets.defaulted_names.size() < 8) out.nets.defaulted_names.push_back(r);
    return memo[r] = {kDefaultActivity, 0.5};
  };
  for (const auto& [inst, c] : d.cells) {
    const LibCell* lc = d.lib_cells.at(inst);
    for (const auto& [pin, net] : c.pins) {
      const LibPin* lp = lc->pin(pin);
      if (!lp || lp->is_clock || net.empty()) continue;
      out.pins.push_back({inst, pin, net_act(net)});
      if (!lc->is_sequential() || lp->direction != "output" || !lp->function) continue;
      if (const auto lit = lp->function->as_literal(); lit && !lc->pin(lit->first)) {
        const Activity a = out.pins.back().act;
        out.state_pins.push_back({inst, lit->first, {a.density, lit->second ? 1.0 - a.duty : a.duty}});
      }
    }
  }
  return out;
}

std::string power_tcl(const std::string& liberty, const std::string& netlist, const std::string& top,
                      const std::string& sdc, const BlockActivity& act) {
  std::string t = fmt::format(
      "# capsgen synth --activity: OpenSTA power of {} with the activities of a simulated inference.\n"
      "# Run again by hand:  sta -no_init -exit <this script>\n"
      "read_liberty {{{}}}\nread_verilog {{{}}}\nlink_design {}\nread_sdc {{{}}}\n"
      "# The first report propagates OpenSTA's own activities; the pin activities below (transitions per\n"
      "# clock period) replace them. The second report propagates again from the input ports (and through\n"
      "# asynchronous clear/preset arcs), by the rules the values below were computed with.\n"
      "report_power > /dev/null\n",
      top, liberty, netlist, top, sdc);
  // Input ports are the roots of OpenSTA's propagation, which runs again after the pins are set: their
  // activities must be user activities too.
  for (const auto& [port, a] : act.ports)
    t += fmt::format("sta::set_power_input_port_activity [get_ports {{{}}}] {:.9g} {:.6g}\n", port, a.density, a.duty);
  // The flip-flops' state pins: the search from the input ports reaches Q through an asynchronous
  // clear/preset arc and evaluates Q's function of the state pin (power.hpp).
  for (const std::vector<PinActivity>* pins : {&act.pins, &act.state_pins})
    for (const PinActivity& p : *pins)
      t += fmt::format("sta::set_power_pin_activity [get_pins {{{}/{}}}] {:.9g} {:.6g}\n", p.instance, p.pin,
                       p.act.density, p.act.duty);
  t += fmt::format("puts \"{}\"\nreport_power -digits 6\nputs \"{}\"\n", kPowerBegin, kPowerEnd);
  // The slews of the delay calculation at every cell input, for the hand calculation of internal power.
  t += fmt::format(
      "foreach pin [get_pins *] {{\n"
      "  if {{[get_property $pin direction] == \"input\"}} {{\n"
      "    puts \"{} [get_full_name $pin] [get_property $pin actual_rise_transition_max] "
      "[get_property $pin actual_fall_transition_max]\"\n"
      "  }}\n}}\n",
      kPowerSlew);
  return t;
}

PowerReport parse_power_log(const std::string& log) {
  PowerReport r;
  std::istringstream in(log);
  std::string line;
  bool inside = false, seen = false;
  while (std::getline(in, line)) {
    if (line.rfind("Error", 0) == 0) r.errors.push_back(line);
    if (line.rfind(kPowerSlew, 0) == 0) {
      std::istringstream ls(line.substr(std::string(kPowerSlew).size()));
      std::string pin;
      double rise = 0, fall = 0;
      if (ls >> pin >> rise >> fall) r.slews[pin] = {rise, fall};
      continue;
    }
    if (line.find(kPowerBegin) != std::string::npos && line.find("puts") == std::string::npos) {
      inside = seen = true;
      continue;
    }
    if (line.find(kPowerEnd) != std::string::npos) inside = false;
    if (!inside) continue;
    std::istringstream ls(line);
    std::string group;
    PowerFigures f;
    double total = 0;
    if (!(ls >> group >> f.internal >> f.switching >> f.leakage >> total)) continue;
    if (group == "Sequential") r.sequential = f;
    if (group == "Combinational") r.combinational = f;
    if (group == "Total") r.total = f;
  }
  if (!seen) throw std::runtime_error("OpenSTA log: no power report between the CAPSGEN-POWER markers");
  return r;
}

namespace {

// OpenSTA 2.0.17's internal power (Power::findInternalPower) of every pin of the clocked cells, from the
// Liberty internal_power tables at the slews of OpenSTA's delay calculation (`slews`, ns, by
// "instance/pin") and the output loads `load` (F, by net root): for every group of a pin, the rise and
// fall energies x the group's duty x the pin's transitions per second. The duty is the `when`'s
// probability, else the inferred condition's probability x (transitions of the related pin / of the
// pin), else 1 from a clock pin, else 0.5. Clock pins switch twice per period.
void hand_internal(Design& d, const Library& lib, const BlockActivity& act, const std::map<std::string, double>& load,
                   ClockedNets& clocked, double period_ns, const std::map<std::string, std::pair<double, double>>& slews,
                   HandPower& h) {
  std::map<std::string, Activity> pin_act;
  for (const PinActivity& p : act.pins) pin_act[p.instance + "/" + p.pin] = p.act;
  const double per_s = 1.0 / (period_ns * 1e-9), unit = lib.energy_unit_j();
  const double slew_unit = lib.time_unit_ns(), cap_unit = lib.capacitive_unit_f();
  for (const auto& [inst, c] : d.cells) {
    const LibCell* lc = d.lib_cells.at(inst);
    bool inst_clocked = lc->is_sequential();
    for (const auto& [pin, net] : c.pins) {
      const LibPin* lp = lc->pin(pin);
      if (!inst_clocked && lp && lp->direction == "input" && !net.empty()) inst_clocked = clocked(d.root_of(net));
    }
    // Transitions per clock period and duty of a pin of this cell (OpenSTA's findActivity).
    auto activity = [&](const std::string& pin) -> Activity {
      const LibPin* lp = lc->pin(pin);
      if (lp && lp->is_clock) return {2.0, 0.5};
      const auto it = pin_act.find(inst + "/" + pin);
      return it == pin_act.end() ? Activity{0.0, 0.0} : it->second;
    };
    for (const auto& [pin, net] : c.pins) {
      const LibPin* lp = lc->pin(pin);
      if (!lp || net.empty() || lp->internal_power.empty()) continue;
      const Activity to = activity(pin);
      const double cap = lp->direction == "output" ? load.count(d.root_of(net)) ? load.at(d.root_of(net)) : 0.0 : 0.0;
      double energy = 0;  // J per transition of the pin
      for (const LibInternalPower& g : lp->internal_power) {
        const std::string from = g.related_pin.empty() ? pin : g.related_pin;
        if (!c.pins.count(from) || c.pins.at(from).empty()) continue;
        const LibPin* from_lp = lc->pin(from);
        double duty = 0.5;
        std::optional<double> inferred;
        if (!g.when && !g.related_pin.empty() && lp->function) inferred = infered_when_duty(*lp->function, from, activity);
        if (g.when) duty = eval_density(*g.when, activity).duty;
        else if (inferred) duty = to.density == 0 ? 0.0 : activity(from).density / to.density * *inferred;
        else if (from_lp && from_lp->is_clock) duty = 1.0;
        const auto sl = slews.find(inst + "/" + from);
        const double rise_slew = sl == slews.end() ? 0.0 : sl->second.first, fall_slew = sl == slews.end() ? 0.0 : sl->second.second;
        const double e = (g.rise ? g.rise->lookup(rise_slew / slew_unit, cap / cap_unit) : 0.0) +
                         (g.fall ? g.fall->lookup(fall_slew / slew_unit, cap / cap_unit) : 0.0);
        energy += e * unit * duty;
      }
      (inst_clocked ? h.internal : h.unclocked_internal) += energy * to.density * per_s;
    }
  }
}

}  // namespace

HandPower hand_power(const std::string& netlist, const std::string& top, const Library& lib, const BlockActivity& act,
                     double period_ns, double port_load_pf, const std::map<std::string, std::pair<double, double>>& slews) {
  Design d(netlist, top, lib);
  const double cap_f = lib.capacitive_unit_f();
  // Load of every net root, rising and falling: the input pins it drives, and the output ports it reaches
  // (set_load on every output port). OpenSTA's load is the larger of the two sums.
  std::map<std::string, std::pair<double, double>> rise_fall;
  for (const auto& [inst, c] : d.cells) {
    const LibCell* lc = d.lib_cells.at(inst);
    for (const auto& [pin, net] : c.pins) {
      const LibPin* lp = lc->pin(pin);
      if (!lp || lp->direction != "input" || net.empty()) continue;
      auto& [rise, fall] = rise_fall[d.root_of(net)];
      rise += lp->rise_capacitance * cap_f;
      fall += lp->fall_capacitance * cap_f;
    }
  }
  for (const auto& [root, drv] : d.driver)
    for (const std::string& name : d.nets.members(root))
      if (d.nets.is_output_bit(name)) {
        rise_fall[root].first += port_load_pf * 1e-12;
        rise_fall[root].second += port_load_pf * 1e-12;
      }
  std::map<std::string, double> load;
  for (const auto& [root, rf] : rise_fall) load[root] = std::max(rf.first, rf.second);
  HandPower h;
  const double v = lib.nom_voltage;
  ClockedNets clocked(d);
  for (const PinActivity& p : act.pins) {
    const LibCell* lc = d.lib_cells.at(p.instance);
    const LibPin* lp = lc->pin(p.pin);
    if (!lp || lp->direction != "output") continue;
    const std::string root = d.root_of(d.cells.at(p.instance).pins.at(p.pin));
    const double w = 0.5 * load[root] * v * v * p.act.density / (period_ns * 1e-9);
    (clocked(root) ? h.switching : h.unclocked_switching) += w;
  }
  if (!slews.empty()) hand_internal(d, lib, act, load, clocked, period_ns, slews, h);
  for (const auto& [inst, lc] : d.lib_cells) h.leakage += lc->leakage * lib.leakage_unit_w();
  return h;
}

}  // namespace capsgen::synth

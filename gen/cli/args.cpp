#include "cli/args.hpp"

#include <fmt/format.h>

#include "core/input_error.hpp"

namespace capsgen::cli {

Args::Args(std::string command, std::string synopsis, std::string description)
    : command_(std::move(command)), synopsis_(std::move(synopsis)), description_(std::move(description)) {}

Args& Args::option(const std::string& name, const std::string& value_name, const std::string& help,
                   std::optional<std::string> default_value) {
  order_.push_back(name);
  specs_[name] = Spec{value_name, help, std::move(default_value)};
  return *this;
}

bool Args::parse(const std::vector<std::string>& argv) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") return false;
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it = specs_.find(name);
    if (it == specs_.end()) {
      std::string allowed;
      for (const auto& o : order_) allowed += (allowed.empty() ? "--" : ", --") + o;
      throw InputError("capsgen " + command_, 0, 0, "--" + name,
                       fmt::format("unknown option (allowed: {}; see 'capsgen {} --help')", allowed, command_));
    }
    if (values_.count(name)) throw InputError("capsgen " + command_, 0, 0, "--" + name, "given more than once");
    if (it->second.value_name.empty()) {
      if (inline_value) throw InputError("capsgen " + command_, 0, 0, "--" + name, "takes no value");
      values_[name] = "1";
    } else if (inline_value) {
      values_[name] = *inline_value;
    } else {
      if (i + 1 >= argv.size())
        throw InputError("capsgen " + command_, 0, 0, "--" + name, "missing value " + it->second.value_name);
      values_[name] = argv[++i];
    }
  }
  return true;
}

bool Args::has(const std::string& name) const { return values_.count(name) > 0; }

std::optional<std::string> Args::get_opt(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  if (auto it = specs_.find(name); it != specs_.end() && it->second.default_value) return it->second.default_value;
  return std::nullopt;
}

std::string Args::get(const std::string& name) const {
  auto v = get_opt(name);
  if (!v) throw InputError("capsgen " + command_, 0, 0, "--" + name, "required option missing");
  return *v;
}

long long Args::get_int(const std::string& name, long long lo, long long hi) const {
  const std::string v = get(name);
  std::size_t pos = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &pos, 0);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != v.size() || v.empty())
    throw InputError("capsgen " + command_, 0, 0, "--" + name, fmt::format("expected an integer, got '{}'", v));
  if (x < lo || x > hi)
    throw InputError("capsgen " + command_, 0, 0, "--" + name, fmt::format("{} is outside [{}, {}]", x, lo, hi));
  return x;
}

std::string Args::help() const {
  std::string out = fmt::format("usage: capsgen {} {}\n\n{}\n\noptions:\n", command_, synopsis_, description_);
  for (const auto& name : order_) {
    const Spec& s = specs_.at(name);
    std::string lhs = "--" + name + (s.value_name.empty() ? "" : " " + s.value_name);
    out += fmt::format("  {:<26} {}", lhs, s.help);
    if (s.default_value && !s.value_name.empty()) out += fmt::format(" (default: {})", *s.default_value);
    out += "\n";
  }
  out += fmt::format("  {:<26} {}\n", "--help", "show this help");
  return out;
}

}  // namespace capsgen::cli

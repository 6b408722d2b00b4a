#include "cli/args.hpp"

#include <fmt/format.h>

#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "core/parse_number.hpp"

namespace capsgen::cli {

Args::Args(std::string command, std::string synopsis, std::string description)
    : command_(std::move(command)), synopsis_(std::move(synopsis)), description_(std::move(description)) {
  // Caps every command shares (docs/limits.md); applied when the arguments are parsed.
  option("max-array-mib", "N", "largest .npy/.npz array data read, after decompression (MiB)",
         std::to_string(input_limits().max_array_bytes >> 20));
  option("max-model-elements", "N", "largest weight count (summed) and tensor of a network golden/compile/sim run",
         std::to_string(input_limits().max_model_elements));
}

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
      if (positional_.size() >= max_positional_)
        throw InputError("capsgen " + command_, 0, 0, a,
                         max_positional_ == 0 ? "unexpected argument (options start with --; see 'capsgen " + command_ + " --help')"
                                              : "unexpected argument");
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
      const std::string& next = argv[i + 1];
      if (next.rfind("--", 0) == 0 && next.size() > 2)
        throw InputError("capsgen " + command_, 0, 0, "--" + name,
                         fmt::format("missing value {} ('{}' is an option; write --{}={} for a value starting with --)",
                                     it->second.value_name, next, name, next));
      values_[name] = argv[++i];
    }
  }
  if (has("max-array-mib")) input_limits().max_array_bytes = std::uint64_t(get_int("max-array-mib", 1, 1 << 20)) << 20;
  if (has("max-model-elements"))
    input_limits().max_model_elements = std::uint64_t(get_int("max-model-elements", 1, 1LL << 40));
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
  const std::optional<long long> parsed = parse_decimal_int(v);
  if (!parsed)
    throw InputError("capsgen " + command_, 0, 0, "--" + name, fmt::format("expected a decimal integer, got '{}'", v));
  const long long x = *parsed;
  if (x < lo || x > hi)
    throw InputError("capsgen " + command_, 0, 0, "--" + name, fmt::format("{} is outside [{}, {}]", x, lo, hi));
  return x;
}

std::string Args::help() const {
  std::string out = fmt::format("usage: capsgen {} {}\n\n{}\n\noptions:\n", command_, synopsis_, description_);
  // The caps every command shares come last.
  std::vector<std::string> names;
  for (const auto& name : order_)
    if (name != "max-array-mib" && name != "max-model-elements") names.push_back(name);
  names.insert(names.end(), {"max-array-mib", "max-model-elements"});
  for (const auto& name : names) {
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

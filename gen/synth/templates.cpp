#include "synth/templates.hpp"

#include <stdexcept>

namespace capsgen::synth {

std::string flow_template(const std::string& name) {
  for (const FlowTemplate& t : flow_templates())
    if (name == t.name) return t.text;
  throw std::out_of_range("no flow template " + name);
}

std::string fill_template(const std::string& text, const std::map<std::string, std::string>& vars,
                          const std::string& template_name) {
  std::string out;
  std::size_t i = 0;
  for (;;) {
    const std::size_t open = text.find("{{", i);
    if (open == std::string::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) throw std::invalid_argument(template_name + ": unterminated {{ field");
    out.append(text, i, open - i);
    const std::string key = text.substr(open + 2, close - open - 2);
    auto it = vars.find(key);
    if (it == vars.end()) throw std::invalid_argument(template_name + ": no value for field {{" + key + "}}");
    out += it->second;
    i = close + 2;
  }
  return out;
}

}  // namespace capsgen::synth

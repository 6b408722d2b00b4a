#include "nas/space_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "config/yaml_util.hpp"

namespace capsgen::nas {
namespace {

// The lists of choices, by key, with the bounds of their values.
struct ChoiceList {
  const char* key;
  std::vector<int> SearchSpace::*member;
  int lo, hi;
};

const ChoiceList kChoiceLists[] = {
    {"conv_kernels", &SearchSpace::conv_kernels, 1, 15},
    {"conv_strides", &SearchSpace::conv_strides, 1, 4},
    {"conv_channels", &SearchSpace::conv_channels, 1, 1024},
    {"primary_kernels", &SearchSpace::primary_kernels, 1, 15},
    {"primary_strides", &SearchSpace::primary_strides, 1, 4},
    {"primary_types", &SearchSpace::primary_types, 1, 256},
    {"primary_dims", &SearchSpace::primary_dims, 1, 32},
    {"caps_counts", &SearchSpace::caps_counts, 1, 1024},
    {"class_dims", &SearchSpace::class_dims, 1, 32},
    {"routing", &SearchSpace::routing, 1, 8},
    {"cell_kernels", &SearchSpace::cell_kernels, 1, 15},
    {"cell_strides", &SearchSpace::cell_strides, 1, 4},
    {"cell_types", &SearchSpace::cell_types, 1, 256},
    {"cell_dims", &SearchSpace::cell_dims, 1, 32},
    {"cell_routing", &SearchSpace::cell_routing, 0, 8},  // 0: the parallel layer is ConvCaps2D
};

std::vector<int> read_choices(const yaml::Value& v, int lo, int hi) {
  if (!v.is_seq()) v.fail("expected a list of integers, got " + v.describe());
  std::vector<int> out;
  for (const yaml::Value& e : v.as_seq()) {
    const int x = e.as_int(lo, hi);
    if (!out.empty() && x <= out.back()) e.fail(fmt::format("{} follows {}: choices must be ascending and distinct", x, out.back()));
    out.push_back(x);
  }
  if (out.empty()) v.fail("expected at least one choice");
  return out;
}

}  // namespace

SearchSpace parse_search_space(const std::string& yaml_text, const std::string& file_name) {
  const yaml::MapReader top = yaml::MapReader::root(yaml::parse(yaml_text, file_name), file_name);
  std::vector<std::string_view> keys = {"input",          "classes",   "min_convs", "max_convs",
                                        "max_class_caps", "min_cells", "max_cells"};
  for (const ChoiceList& c : kChoiceLists) keys.push_back(c.key);
  top.allow_only(keys);
  SearchSpace s;
  if (top.has("input")) {
    const yaml::MapReader in = top.get_map("input");
    in.allow_only({"channels", "height", "width"});
    s.in_channels = in.get_int("channels", 1, 64);
    s.in_height = in.get_int("height", 1, 1024);
    s.in_width = in.get_int("width", 1, 1024);
  }
  s.classes = top.get_int("classes", 2, 1024, s.classes);
  s.min_convs = top.get_int("min_convs", 1, 8, s.min_convs);
  s.max_convs = top.get_int("max_convs", 1, 8, s.max_convs);
  if (s.max_convs < s.min_convs)
    top.fail("max_convs", fmt::format("{} is below min_convs {}", s.max_convs, s.min_convs));
  s.max_class_caps = top.get_int("max_class_caps", 1, 4, s.max_class_caps);
  s.min_cells = top.get_int("min_cells", 0, 8, s.min_cells);
  s.max_cells = top.get_int("max_cells", 0, 8, s.max_cells);
  if (s.max_cells < s.min_cells)
    top.fail("max_cells", fmt::format("{} is below min_cells {}", s.max_cells, s.min_cells));
  for (const ChoiceList& c : kChoiceLists)
    if (auto v = top.find(c.key)) s.*c.member = read_choices(*v, c.lo, c.hi);
  return s;
}

SearchSpace load_search_space(const std::string& path) { return parse_search_space(yaml::read_file(path), path); }

std::string search_space_yaml(const SearchSpace& s) {
  std::string y = fmt::format("input: {{channels: {}, height: {}, width: {}}}\nclasses: {}\n", s.in_channels,
                              s.in_height, s.in_width, s.classes);
  y += fmt::format("min_convs: {}\nmax_convs: {}\nmax_class_caps: {}\nmin_cells: {}\nmax_cells: {}\n", s.min_convs,
                   s.max_convs, s.max_class_caps, s.min_cells, s.max_cells);
  for (const ChoiceList& c : kChoiceLists) y += fmt::format("{}: [{}]\n", c.key, fmt::join(s.*c.member, ", "));
  return y;
}

}  // namespace capsgen::nas

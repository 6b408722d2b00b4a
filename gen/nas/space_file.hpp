// The search space of `capsgen dse nas` as a YAML file (docs/nas.md section 2.1; configs/nas/):
// the input, the class count, the layer counts and the choices of every gene. Every key is
// optional and defaults to SearchSpace{}: the paper's CapsNet-like space on 28x28x1 inputs, no CapsCells.
#pragma once

#include <string>

#include "nas/genome.hpp"

namespace capsgen::nas {

// Strict reading (config/yaml_util.hpp): unknown keys, values out of range, an empty, unsorted or
// repeated list of choices are InputErrors naming the file, line and field.
SearchSpace parse_search_space(const std::string& yaml_text, const std::string& file_name);
SearchSpace load_search_space(const std::string& path);

// The space as YAML that parse_search_space reads back to the same space (every key written).
std::string search_space_yaml(const SearchSpace& s);

}  // namespace capsgen::nas

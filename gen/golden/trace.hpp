// The intermediate tensors of one inference, in the order they are produced. Fixed-point and float
// models name them the same way (docs/golden.md), so they can be compared tensor by tensor and
// later checked against the RTL operation by operation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace capsgen {

template <typename T>
struct Trace {
  std::vector<std::pair<std::string, Tensor<T>>> tensors;
  int prediction = -1;
  std::vector<double> class_norms;  // real-valued ||v_j|| of the last capsule layer

  void add(std::string name, Tensor<T> t) { tensors.emplace_back(std::move(name), std::move(t)); }
  const Tensor<T>* find(const std::string& name) const {
    for (const auto& [n, t] : tensors)
      if (n == name) return &t;
    return nullptr;
  }
  const Tensor<T>& get(const std::string& name) const {
    if (const auto* t = find(name)) return *t;
    throw std::out_of_range("trace has no tensor '" + name + "'");
  }
};

using FloatTrace = Trace<float>;
using FixedTrace = Trace<std::int32_t>;

}  // namespace capsgen

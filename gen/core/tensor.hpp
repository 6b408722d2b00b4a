// A dense row-major tensor: the one container every capsgen module passes around.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace capsgen {

using Shape = std::vector<std::size_t>;

inline std::size_t shape_size(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), std::size_t{1}, std::multiplies<>());
}

std::string shape_str(const Shape& s);

template <typename T>
struct Tensor {
  Shape shape;
  std::vector<T> data;

  Tensor() = default;
  explicit Tensor(Shape s, T fill = T{}) : shape(std::move(s)), data(shape_size(shape), fill) {}

  std::size_t size() const { return data.size(); }
  T& operator[](std::size_t i) { return data[i]; }
  const T& operator[](std::size_t i) const { return data[i]; }

  // Flat index of a multi-dimensional position (row-major).
  std::size_t index(std::initializer_list<std::size_t> pos) const {
    if (pos.size() != shape.size()) throw std::logic_error("Tensor::index: rank mismatch");
    std::size_t idx = 0;
    std::size_t d = 0;
    for (std::size_t p : pos) idx = idx * shape[d++] + p;
    return idx;
  }
  T& at(std::initializer_list<std::size_t> pos) { return data[index(pos)]; }
  const T& at(std::initializer_list<std::size_t> pos) const { return data[index(pos)]; }
};

using FloatTensor = Tensor<float>;
using IntTensor = Tensor<std::int32_t>;

// Multi-dimensional position of a flat index, for error messages ("[3,0,5]").
std::string index_str(const Shape& s, std::size_t flat);

}  // namespace capsgen

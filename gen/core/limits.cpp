#include "core/limits.hpp"

namespace capsgen {

InputLimits& input_limits() {
  static InputLimits limits;
  return limits;
}

}  // namespace capsgen

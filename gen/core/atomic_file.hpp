// Writes a whole file or nothing: content goes to "<path>.tmp.<pid>" and is renamed into place.
#pragma once

#include <string>

namespace capsgen {

// Throws std::runtime_error naming the path on failure; leaves no temporary file behind.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace capsgen

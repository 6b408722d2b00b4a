// Writes a whole file or nothing: content goes to "<path>.tmp" and is renamed into place, so
// readers never see a half-written file and a failed run leaves nothing behind.
#pragma once

#include <string>

namespace capsgen {

// Throws InputError (file = path) on failure; removes the temporary file.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace capsgen

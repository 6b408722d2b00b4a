// Writes a whole file or nothing: content goes to "<path>.tmp" and is renamed into place, so
// readers never see a half-written file and a failed run leaves nothing behind.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace capsgen {

// Throws InputError (file = path) on failure; removes the temporary file.
void write_file_atomic(const std::string& path, const std::string& content);

// Several files, all or none: every content is first written to "<path>.tmp"; only when all of
// them were written are they renamed into place. On a failure no destination is created or
// changed and the temporary files are removed (InputError names the file that failed). A destination
// that is a directory, or one path given for two files, is refused before anything is written.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace capsgen

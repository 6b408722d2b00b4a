#include "core/atomic_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/input_error.hpp"

namespace capsgen {

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  std::error_code ignored;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, 0, 0, "", fmt::format("cannot create {}: {}", tmp, std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      const int err = errno;
      std::filesystem::remove(tmp, ignored);
      throw InputError(path, 0, 0, "", fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ignored);
    throw InputError(path, 0, 0, "", fmt::format("cannot rename {} to it: {}", tmp, ec.message()));
  }
}

namespace {

// Destinations a rename cannot replace, found before anything is staged: a directory, or one path
// given for two of the files (the second would replace the first).
void check_destinations(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::filesystem::path> seen;
  for (const auto& [path, content] : files) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw InputError(path, 0, 0, "", "is a directory, nothing was written");
    std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
    if (ec) canonical = std::filesystem::path(path).lexically_normal();
    for (const auto& other : seen)
      if (other == canonical) throw InputError(path, 0, 0, "", "given for two outputs, nothing was written");
    seen.push_back(canonical);
  }
}

}  // namespace

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  check_destinations(files);
  std::vector<std::string> staged;
  std::error_code ignored;
  const auto discard = [&] {
    for (const auto& t : staged) std::filesystem::remove(t, ignored);
  };
  for (const auto& [path, content] : files) {
    const std::string tmp = path + ".tmp";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      const int err = errno;
      discard();
      throw InputError(path, 0, 0, "", fmt::format("cannot create {}: {}", tmp, std::strerror(err)));
    }
    staged.push_back(tmp);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      const int err = errno;
      discard();
      throw InputError(path, 0, 0, "", fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(staged[i], files[i].first, ec);
    if (ec) {
      staged.erase(staged.begin(), staged.begin() + std::ptrdiff_t(i));
      discard();
      throw InputError(files[i].first, 0, 0, "", fmt::format("cannot rename {} to it: {}", files[i].first + ".tmp", ec.message()));
    }
  }
}

}  // namespace capsgen

#include "core/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace capsgen {

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + path + " (cannot create " + tmp + ")");
    f.write(content.data(), std::streamsize(content.size()));
    f.flush();
    if (!f) {
      f.close();
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write " + path + " (write failed)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + ec.message());
  }
}

}  // namespace capsgen

// Verilator model builds keyed on their inputs; see model_build.hpp.
#include "sim/model_build.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/input_error.hpp"

namespace capsgen::sim {
namespace {

namespace fs = std::filesystem;

// 128-bit FNV-1a (two 64-bit lanes with different offset bases): a content digest for cache keys.
class Digest {
 public:
  void bytes(const std::string& s) {
    add_u64(s.size());  // length first: ("ab","c") and ("a","bc") differ
    for (unsigned char c : s) add_byte(c);
  }
  std::string hex() const { return fmt::format("{:016x}{:016x}", h_[0], h_[1]); }

 private:
  void add_byte(unsigned char c) {
    for (std::uint64_t& h : h_) h = (h ^ c) * 0x100000001b3ULL;
  }
  void add_u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) add_byte(static_cast<unsigned char>(v >> (8 * i)));
  }
  std::array<std::uint64_t, 2> h_ = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL};
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string command_output(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return "(cannot run: " + cmd + ")";
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  return out;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run_logged(const std::string& cmd, const fs::path& log) {
  const int rc = std::system((cmd + " > " + quote(log.string()) + " 2>&1").c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

// The testbench sources a model compiles: tb/ and the parts of gen/ that tb/CMakeLists.txt compiles
// in (with the headers they include), as sorted (relative path, contents).
void hash_testbench_sources(const fs::path& src, Digest& d) {
  std::vector<fs::path> files;
  for (const char* sub : {"tb", "gen/core", "gen/numerics", "gen/isa", "gen/dram", "gen/config"}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(src / sub, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file()) files.push_back(fs::relative(it->path(), src));
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    d.bytes(f.generic_string());
    d.bytes(slurp(src / f));
  }
}

// The parts of the key whose change makes the whole build directory stale (a CMake cache of other
// options or tools), as opposed to RTL and source changes, which CMake and Ninja rebuild incrementally.
std::string options_and_tools(const ModelSpec& spec, const std::string& tools) {
  return fmt::format("testbench={}\ntrace={}\ncoverage={}\nopt={}\ngate_level={}\n{}", spec.testbench, spec.trace,
                     spec.coverage, spec.opt, is_gate_level(spec), tools);
}

// Holds an exclusive lock on a file for its lifetime (builders of one model serialize).
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR, 0644)) {
    if (fd_ < 0) throw InputError(path.string(), 0, 0, "model lock", "cannot open the lock file");
    while (::flock(fd_, LOCK_EX) != 0) {
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// Writes the model's own copy of the RTL into `dir`: files whose contents changed are rewritten (so
// Ninja rebuilds only what depends on them), files no longer in the RTL are removed.
void sync_rtl_copy(const std::vector<std::pair<std::string, std::string>>& rtl, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool kept = std::any_of(rtl.begin(), rtl.end(), [&](const auto& f) { return f.first == name; });
    if (!kept) fs::remove_all(e.path(), ec);
  }
  for (const auto& [name, contents] : rtl)
    if (!fs::exists(dir / name) || slurp(dir / name) != contents) write_file_atomic((dir / name).string(), contents);
}

constexpr const char* kKeyFile = "capsgen-model.key";
constexpr const char* kOptionsFile = "capsgen-model.options";
constexpr const char* kRtlCopy = "model-rtl";

}  // namespace

std::string tool_versions() {
  return command_output("verilator --version") + command_output("c++ --version | head -1") +
         command_output("cmake --version | head -1");
}

std::string model_key(const ModelSpec& spec, const std::string& tools) {
  Digest d;
  d.bytes(options_and_tools(spec, tools));
  for (const auto& [name, contents] : spec.rtl) {
    d.bytes(name);
    d.bytes(contents);
  }
  hash_testbench_sources(spec.source_dir, d);
  return d.hex();
}

bool is_gate_level(const ModelSpec& spec) {
  for (const auto& [name, contents] : spec.rtl)
    if (name == "files.f") return contents.find("gate-level netlists") != std::string::npos;
  return false;
}

std::vector<std::pair<std::string, std::string>> read_rtl_dir(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) files.emplace_back(e.path().filename().string(), slurp(e.path()));
  if (ec) throw InputError(dir.string(), 0, 0, "--rtl", "cannot read the RTL directory: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

fs::path cached_model_dir(const fs::path& cache, const ModelSpec& spec, const std::string& key) {
  return cache / (spec.testbench + "-" + key);
}

BuiltModel build_model(const ModelSpec& spec, const fs::path& dir, int jobs, const fs::path& log_dir) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string tools = tool_versions();
  BuiltModel m{fs::absolute(dir), model_key(spec, tools), false, 0};
  std::error_code ec;
  fs::create_directories(m.dir.parent_path(), ec);
  FileLock lock(m.dir.string() + ".lock");

  if (fs::exists(m.dir / spec.testbench) && slurp(m.dir / kKeyFile) == m.key) {
    m.reused = true;
    return m;
  }
  // Other options or tools: the CMake cache and every object are stale, start afresh.
  const std::string options = options_and_tools(spec, tools);
  if (fs::exists(m.dir) && slurp(m.dir / kOptionsFile) != options) fs::remove_all(m.dir, ec);
  fs::create_directories(m.dir, ec);
  if (ec) throw InputError(m.dir.string(), 0, 0, "model build", "cannot create the build directory: " + ec.message());
  fs::remove(m.dir / kKeyFile, ec);  // no key while the directory is between two models
  sync_rtl_copy(spec.rtl, m.dir / kRtlCopy);
  write_file_atomic((m.dir / kOptionsFile).string(), options);

  fs::create_directories(log_dir, ec);
  if (!fs::exists(m.dir / "CMakeCache.txt") || !fs::exists(m.dir / "build.ninja")) {  // (an interrupted configure)
    const std::string only = spec.testbench == "tb_chip" ? "CHIP" : "ACCEL";
    const std::string cmd = fmt::format(
        "cmake -S {} -B {} -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAPSGEN_RTL_DIR={} -DCAPSGEN_TB_{}_ONLY=ON "
        "-DCAPSGEN_TB_TRACE={} -DCAPSGEN_TB_OPT={}{}{}",
        quote((spec.source_dir / "tb").string()), quote(m.dir.string()), quote((m.dir / kRtlCopy).string()), only,
        spec.trace ? "ON" : "OFF", spec.opt, spec.coverage ? " -DCAPSGEN_TB_COVERAGE=ON" : "",
        is_gate_level(spec) ? " -DCAPSGEN_VERILATOR_EXTRA_ARGS=-fno-gate" : "");
    if (run_logged(cmd, log_dir / "configure.log") != 0)
      throw InputError((log_dir / "configure.log").string(), 0, 0, "cmake", "configuring the testbench failed (see the log)");
  }
  if (run_logged(fmt::format("cmake --build {} -j {}", quote(m.dir.string()), jobs), log_dir / "build.log") != 0)
    throw InputError((log_dir / "build.log").string(), 0, 0, "cmake --build", "building the testbench failed (see the log)");
  write_file_atomic((m.dir / kKeyFile).string(), m.key);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

}  // namespace capsgen::sim

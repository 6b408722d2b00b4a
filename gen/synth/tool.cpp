#include "synth/tool.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.hpp"
#include "core/input_error.hpp"

extern char** environ;

namespace capsgen::synth {
namespace fs = std::filesystem;

std::optional<std::string> find_tool(const std::string& name) {
  std::string env = "CAPSGEN_";
  for (char c : name) env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* v = std::getenv(env.c_str()); v && *v) {
    if (::access(v, X_OK) == 0) return std::string(v);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

std::string require_tool(const std::string& name, const std::string& debian_package) {
  if (auto p = find_tool(name)) return *p;
  throw InputError(name, 0, 0, "--target",
                   fmt::format("'{}' not found on PATH (Debian package {}; scripts/bootstrap.sh installs it)", name,
                               debian_package));
}

ToolRun run_tool(const std::vector<std::string>& argv, const fs::path& log, const fs::path& cwd) {
  ToolRun r;
  r.log = log;
  if (!log.parent_path().empty()) fs::create_directories(log.parent_path());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::string old_cwd;
  if (!cwd.empty()) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
    posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
#else
#error "posix_spawn_file_actions_addchdir_np needed"
#endif
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv.at(0).c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(fmt::format("waitpid({}) failed: {}", argv[0], std::strerror(errno)));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exit_code = 128 + WTERMSIG(status);
  return r;
}

std::string tool_version(const std::string& tool_path, const std::string& version_flag) {
  char tmpl[] = "/tmp/capsgen-version-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return "";
  ::close(fd);
  std::string line;
  try {
    run_tool({tool_path, version_flag}, tmpl);
    std::ifstream in(tmpl);
    std::getline(in, line);
  } catch (...) {
  }
  ::unlink(tmpl);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) {
  if (!p.parent_path().empty()) fs::create_directories(p.parent_path());
  write_file_atomic(p.string(), text);
}

std::string tail_lines(const fs::path& p, int n) {
  std::ifstream in(p);
  std::deque<std::string> lines;
  std::string l;
  while (std::getline(in, l)) {
    lines.push_back(l);
    if (static_cast<int>(lines.size()) > n) lines.pop_front();
  }
  std::string out;
  for (const auto& x : lines) out += "    " + x + "\n";
  return out;
}

}  // namespace capsgen::synth

#include "regress/list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "config/yaml_util.hpp"
#include "core/checked.hpp"
#include "core/input_error.hpp"
#include "core/parse_number.hpp"

namespace capsgen::cli::regress {
namespace {

namespace fs = std::filesystem;

// A scalar or a sequence of scalars, as values.
std::vector<yaml::Value> scalars(const yaml::Value& v) {
  if (v.is_scalar()) return {v};
  if (!v.is_seq()) v.fail("expected a value or a list, got " + v.describe());
  std::vector<yaml::Value> out = v.as_seq();
  if (out.empty()) v.fail("empty list");
  for (const yaml::Value& e : out)
    if (!e.is_scalar()) e.fail("expected a value, got " + e.describe());
  return out;
}

std::vector<std::string> paths(const yaml::Value& v, const std::string& base_dir) {
  std::vector<std::string> out;
  for (const yaml::Value& e : scalars(v)) {
    const std::string p = e.as_string();
    std::error_code ec;
    if (!fs::is_regular_file(fs::path(base_dir) / p, ec)) e.fail(fmt::format("no such file '{}'", p));
    out.push_back(p);
  }
  return out;
}

// Integers in [0, 2^31): a list, one value, or a range "A-B" (inclusive).
std::vector<long long> integers(const yaml::Value& v) {
  std::vector<long long> out;
  if (v.is_scalar() && v.as_string().find('-') != std::string::npos) {
    const std::string s = v.as_string();
    const std::size_t dash = s.find('-');
    const auto a = parse_decimal_int(s.substr(0, dash)), b = parse_decimal_int(s.substr(dash + 1));
    if (!a || !b || *a < 0 || *b < *a || *b - *a > 100000 || *b > 2147483647)
      v.fail(fmt::format("expected a non-negative integer, a list of them or a range A-B (at most 100001 values), got '{}'", s));
    for (long long x = *a; x <= *b; ++x) out.push_back(x);
    return out;
  }
  std::set<long long> seen;
  for (const yaml::Value& e : scalars(v)) {
    const long long x = e.as_int(0, 2147483647);
    if (!seen.insert(x).second) e.fail(fmt::format("{} is listed twice", x));
    out.push_back(x);
  }
  return out;
}

std::string one_of(const yaml::Value& v, const std::vector<std::string_view>& names) {
  return std::string(names.at(static_cast<std::size_t>(v.as_enum(names))));
}

}  // namespace

RegressList parse_regress_list(const std::string& text, const std::string& file, const std::string& base_dir) {
  const YAML::Node doc = yaml::parse(text, file);
  const yaml::MapReader root = yaml::MapReader::root(doc, file);
  root.allow_only({"name", "description", "coverage", "timeout", "entries"});
  RegressList list;
  list.file = file;
  list.name = root.get_string("name", fs::path(file).stem().string());
  // The name becomes a directory under build/regress: plain characters only, no "." or "..".
  if (list.name.empty() || list.name == "." || list.name == ".." ||
      list.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") != std::string::npos)
    root.fail("name", fmt::format("'{}' is not usable as a directory name (letters, digits, '.', '_', '+', '-'; not '.' or '..')",
                                  list.name));
  list.coverage = root.get_bool("coverage", false);
  list.timeout_s = root.get_int("timeout", 10, 86400, 1200);
  const yaml::Value entries = root.get("entries");
  if (!entries.is_seq() || entries.as_seq().empty()) entries.fail("expected a non-empty list of entries, got " + entries.describe());
  for (const yaml::Value& ev : entries.as_seq()) {
    if (!ev.is_map()) ev.fail("expected a mapping, got " + ev.describe());
    const yaml::MapReader m = ev.as_map();
    m.allow_only({"name", "configs", "random_configs", "networks", "seeds", "fetch", "memory", "weights", "dataset",
                  "indices", "fault", "expect"});
    Entry e;
    e.line = m.where().line;
    if (auto v = m.find("configs")) e.configs = paths(*v, base_dir);
    if (auto v = m.find("random_configs")) e.random_configs = integers(*v);
    if (e.configs.empty() && e.random_configs.empty()) m.fail("needs 'configs' or 'random_configs'");
    e.networks = paths(m.get("networks"), base_dir);
    if (auto v = m.find("seeds")) e.seeds = integers(*v);
    if (auto v = m.find("fetch")) {
      e.fetch.clear();
      for (const yaml::Value& f : scalars(*v)) e.fetch.push_back(one_of(f, {"latency1", "random"}));
    }
    e.memory_line = e.line;
    e.memory_column = m.where().column;
    e.memory_field = m.path();
    if (auto v = m.find("memory")) {
      e.memory.clear();
      for (const yaml::Value& x : scalars(*v)) e.memory.push_back(one_of(x, {"ideal", "dram"}));
      e.memory_line = v->location().line;
      e.memory_column = v->location().column;
      e.memory_field = v->field();
    }
    if (auto v = m.find("weights")) e.weights = paths(*v, base_dir).at(0);
    if (auto v = m.find("dataset")) e.dataset = one_of(*v, {"mnist", "fashion"});
    if (auto v = m.find("indices")) e.indices = integers(*v);
    if (!e.dataset.empty() && e.weights.empty()) m.fail("dataset", "needs 'weights' (trained weights for the data set)");
    if (!e.dataset.empty() && e.indices.empty()) m.fail("dataset", "needs 'indices' (which test images)");
    if (!e.indices.empty() && e.dataset.empty()) m.fail("indices", "needs 'dataset'");
    if (auto v = m.find("fault")) e.fault = one_of(*v, {"flip-pe-bit", "ignore-wait-dma"});
    if (e.fault == "ignore-wait-dma" && std::find(e.memory.begin(), e.memory.end(), "ideal") != e.memory.end())
      m.fail("fault", "'ignore-wait-dma' breaks capsgen_chip's frame sequencer: it needs 'memory: dram' (without ideal)");
    if (auto v = m.find("expect")) e.expect_fail = one_of(*v, {"pass", "fail"}) == "fail";
    list.entries.push_back(std::move(e));
  }
  return list;
}

RegressList load_regress_list(const std::string& path, const std::string& base_dir) {
  return parse_regress_list(yaml::read_file(path), path, base_dir);
}

std::vector<Job> expand_jobs(const RegressList& list, const Names& names, long long max_jobs) {
  // Count first, with checked arithmetic: seeds 0-100000 x indices 0-100000 must be an error, not an
  // attempt to list 10^10 jobs.
  long long total = 0;
  for (const Entry& e : list.entries) {
    std::optional<long long> n = (long long)(e.configs.size() + e.random_configs.size());
    for (std::size_t f : {e.networks.size(), e.seeds.size(), std::max<std::size_t>(1, e.indices.size()), e.fetch.size(),
                          e.memory.size()})
      if (n) n = checked_mul(*n, (long long)f);
    if (n) n = checked_add(total, *n);
    if (!n || *n > max_jobs)
      throw InputError(list.file, e.line, 0, "entries",
                       fmt::format("the list expands to more than {} jobs (the limit; raise it with --max-jobs)", max_jobs));
    total = *n;
  }
  std::vector<Job> jobs;
  std::map<std::string, int> seen;  // job name -> line of its entry
  for (const Entry& e : list.entries) {
    std::vector<std::pair<std::string, long long>> configs;  // (path, random seed or -1)
    for (const std::string& c : e.configs) configs.emplace_back(c, -1);
    for (long long r : e.random_configs) configs.emplace_back(names.random_config_path(r), r);
    if (std::find(e.memory.begin(), e.memory.end(), "dram") != e.memory.end())
      for (const auto& [cpath, rseed] : configs)
        if (const std::string why = names.dram_unsupported_reason(cpath, rseed); !why.empty())
          throw InputError(list.file, e.memory_line, e.memory_column, e.memory_field,
                           fmt::format("dram: no capsgen_chip for preset {} ({}): {}",
                                       rseed >= 0 ? fmt::format("random-{}", rseed) : names.config_name(cpath), cpath, why));
    for (const auto& [cpath, rseed] : configs)
      for (const std::string& net : e.networks)
        for (long long seed : e.seeds)
          for (std::size_t k = 0; k < std::max<std::size_t>(1, e.indices.size()); ++k)
            for (const std::string& fetch : e.fetch)
              for (const std::string& memory : e.memory) {
                Job j;
                j.config_path = cpath;
                j.random_seed = rseed;
                j.config_name = rseed >= 0 ? fmt::format("random-{}", rseed) : names.config_name(cpath);
                j.network_path = net;
                j.network_name = names.network_name(net);
                j.seed = seed;
                if (!e.indices.empty()) j.index = e.indices[k];
                j.weights = e.weights;
                j.dataset = e.dataset;
                j.fetch = fetch;
                j.memory = memory;
                j.fault = e.fault;
                j.expect_fail = e.expect_fail;
                j.line = e.line;
                j.name = fmt::format("{}.{}.s{}", j.config_name, j.network_name, seed);
                if (j.index) j.name += fmt::format(".{}{}", j.dataset, *j.index);
                if (fetch != "latency1") j.name += ".fetch-" + fetch;
                if (j.dram()) j.name += ".dram";
                if (!j.fault.empty()) j.name += "." + j.fault;
                if (auto [it, fresh] = seen.emplace(j.name, e.line); !fresh)
                  throw InputError(list.file, e.line, 0, "entries",
                                   fmt::format("job {} is already listed by the entry at line {}", j.name, it->second));
                jobs.push_back(std::move(j));
              }
  }
  return jobs;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::kPass: return "pass";
    case Status::kFail: return "fail";
    case Status::kError: return "error";
    case Status::kTimeout: return "timeout";
    case Status::kInterrupted: return "interrupted";
    case Status::kNotRun: return "not run";
  }
  return "?";
}

}  // namespace capsgen::cli::regress

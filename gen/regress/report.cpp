#include "regress/report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace capsgen::cli::regress {

Totals totals(const std::vector<JobResult>& results) {
  Totals t;
  for (const JobResult& r : results) {
    ++t.jobs;
    if (r.status == Status::kInterrupted || r.status == Status::kNotRun) ++t.not_run;
    else if (r.ok()) ++t.passed;
    else if (r.status == Status::kFail || r.status == Status::kPass) ++t.failed;
    else ++t.errors;
  }
  return t;
}

std::string verdict(const JobResult& r) {
  if (r.job.expect_fail) {
    if (r.status == Status::kFail) return "caught (expected fail)";
    if (r.status == Status::kPass) return "FAIL (fault not caught)";
  }
  switch (r.status) {
    case Status::kPass: return "pass";
    case Status::kFail: return "FAIL";
    case Status::kError: return "ERROR";
    case Status::kTimeout: return "TIMEOUT";
    case Status::kInterrupted: return "interrupted";
    case Status::kNotRun: return "not run";
  }
  return "?";
}

namespace {

std::string clock_time(double s) {
  const long long t = static_cast<long long>(s + 0.5);
  return t >= 60 ? fmt::format("{}m{:02}s", t / 60, t % 60) : fmt::format("{}s", t);
}

std::string md_cell(std::string s) {
  for (char& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s;
}

}  // namespace

std::string summary_markdown(const RunInfo& info, const std::vector<JobResult>& results) {
  const Totals t = totals(results);
  std::string md = fmt::format("# capsgen regress: {}{}\n\n", info.list_name, info.interrupted ? " (INTERRUPTED)" : "");
  md += fmt::format("- list: {}; {} jobs on {} model build(s){}, {}, {} wall time\n", info.list_file, t.jobs,
                    info.builds, info.builds_failed ? fmt::format(" ({} failed)", info.builds_failed) : "",
                    info.slurm ? std::string("as Slurm jobs") : fmt::format("{} in parallel", info.slots),
                    clock_time(info.seconds));
  md += fmt::format("- result: **{}**: {} passed, {} failed, {} errors, {} not run\n",
                    t.passed == t.jobs ? "PASS" : info.interrupted ? "INTERRUPTED" : "FAIL", t.passed, t.failed, t.errors,
                    t.not_run);
  if (info.coverage) md += "- coverage: coverage.md (Verilator line/toggle per module, functional coverage)\n";
  md += "\n| job | config | network | seed | input | fetch | memory | result | cycles | time |\n"
        "|---|---|---|---:|---|---|---|---|---:|---:|\n";
  for (const JobResult& r : results) {
    const Job& j = r.job;
    md += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {:.1f} s |\n", j.name, j.config_name,
                      j.fault.empty() ? "" : " (fault " + j.fault + ")", j.network_name, j.seed,
                      j.index ? fmt::format("{} {}", j.dataset, *j.index) : "synthetic", j.fetch, j.memory, verdict(r),
                      r.cycles ? std::to_string(r.cycles) : "-", r.seconds);
  }
  std::string fails;
  for (const JobResult& r : results) {
    if (r.status == Status::kPass || r.status == Status::kNotRun || r.status == Status::kInterrupted) {
      if (!(r.job.expect_fail && r.status == Status::kPass)) continue;
    }
    fails += fmt::format("\n### {} ({})\n\n", r.job.name, verdict(r));
    if (!r.message.empty()) fails += fmt::format("- {}\n", md_cell(r.message));
    fails += fmt::format("- log: {}\n", r.log);
    if (!r.repro.empty()) fails += fmt::format("- reproduce alone:\n\n```\n{}\n```\n", r.repro);
  }
  if (!fails.empty()) md += "\n## Failures, errors and caught faults\n" + fails;
  return md;
}

std::string summary_json(const RunInfo& info, const std::vector<JobResult>& results) {
  const Totals t = totals(results);
  nlohmann::ordered_json j;
  j["list"] = info.list_file;
  j["name"] = info.list_name;
  j["pass"] = t.passed == t.jobs;
  j["interrupted"] = info.interrupted;
  j["jobs"] = t.jobs;
  j["passed"] = t.passed;
  j["failed"] = t.failed;
  j["errors"] = t.errors;
  j["not_run"] = t.not_run;
  j["builds"] = info.builds;
  j["builds_failed"] = info.builds_failed;
  if (info.slurm) j["slurm"] = true;
  j["parallel"] = info.slots;
  j["wall_seconds"] = info.seconds;
  j["results"] = nlohmann::json::array();
  for (const JobResult& r : results) {
    nlohmann::ordered_json e;
    e["name"] = r.job.name;
    e["config"] = r.job.config_name;
    e["config_file"] = r.job.config_path;
    if (r.job.random_seed >= 0) e["random_config"] = r.job.random_seed;
    e["network"] = r.job.network_name;
    e["seed"] = r.job.seed;
    if (r.job.index) e["input"] = fmt::format("{} {}", r.job.dataset, *r.job.index);
    e["fetch"] = r.job.fetch;
    e["memory"] = r.job.memory;
    e["fault"] = r.job.fault;
    e["expect"] = r.job.expect_fail ? "fail" : "pass";
    e["status"] = status_name(r.status);
    e["ok"] = r.ok();
    e["cycles"] = r.cycles;
    e["seconds"] = r.seconds;
    e["message"] = r.message;
    e["problems"] = r.problems;
    e["log"] = r.log;
    e["repro"] = r.repro;
    j["results"].push_back(e);
  }
  return j.dump(2) + "\n";
}

std::string coverage_markdown(const RunInfo& info, const std::map<std::string, ModuleCoverage>& modules,
                              const FunctionalCoverage& fcov, int runs, const std::string& note) {
  std::string md = fmt::format("# capsgen regress: coverage of {}\n\n", info.list_name);
  if (!note.empty()) md += "- " + note + "\n";
  if (!modules.empty()) {
    long long l = 0, lh = 0, tg = 0, th = 0;
    for (const auto& [n, m] : modules) {
      l += m.lines;
      lh += m.lines_hit;
      tg += m.toggles;
      th += m.toggles_hit;
    }
    md += fmt::format("- Verilator coverage merged over {} run(s) (coverage/merged.dat): lines {:.1f}% ({} of {}), "
                      "toggles {:.1f}% ({} of {})\n",
                      runs, percent(lh, l), lh, l, percent(th, tg), th, tg);
    md += "- a line (or a signal bit) counts as covered when any instance of its module hit it at least once, in any "
          "run; annotated sources (uncovered lines marked %000000): coverage/annotated/\n\n";
    md += "| module | instances | line % | lines hit/total | toggle % | bits toggled/total | uncovered lines |\n"
          "|---|---:|---:|---:|---:|---:|---|\n";
    for (const auto& [name, m] : modules) {
      std::string unc;
      int shown = 0;
      for (const auto& [file, ls] : m.uncovered_lines)
        for (int x : ls)
          if (shown++ < 12) unc += (unc.empty() ? "" : ", ") + std::to_string(x);
      if (shown > 12) unc += fmt::format(" ... ({} in all)", shown);
      md += fmt::format("| {} | {} | {:.1f} | {}/{} | {:.1f} | {}/{} | {} |\n", name, m.instances.size(),
                        percent(m.lines_hit, m.lines), m.lines_hit, m.lines, percent(m.toggles_hit, m.toggles),
                        m.toggles_hit, m.toggles, unc.empty() ? "-" : unc);
    }
  }
  md += fmt::format("\n## Functional coverage ({} run(s){}; counts are descriptors, saturation counts are writes, pmu.<memory>.s<k> "
                    "counts are sector sleeps/wake-ups)\n\n",
                    runs, info.dram_runs ? fmt::format(", {} of them --memory dram", info.dram_runs) : "");
  md += "| bin | count | runs that hit it |\n|---|---:|---:|\n";
  for (const std::string& b : fcov.order)
    md += fmt::format("| {} | {} | {} |\n", b, fcov.na.count(b) ? "n/a (not in this RTL)" : std::to_string(fcov.bins.at(b)),
                      fcov.runs.at(b));
  const std::vector<std::string> never = fcov.never_hit();
  md += fmt::format("\n- never hit: {}\n", never.empty() ? "none" : fmt::format("{}", fmt::join(never, ", ")));
  // The scratchpad sectors' sleep/wake bins: measured on capsgen_chip (--memory dram runs) only.
  long long sector_bins = 0, sector_hit = 0;
  for (const std::string& b : fcov.order)
    if (b.rfind("pmu.", 0) == 0 && !fcov.na.count(b)) {
      ++sector_bins;
      sector_hit += fcov.bins.at(b) > 0;
    }
  if (sector_bins > 0)
    md += fmt::format("- scratchpad sectors (capsgen_chip, {} --memory dram run(s)): {} of {} sleep/wake bins hit\n",
                      info.dram_runs, sector_hit, sector_bins);
  if (!fcov.na.empty())
    md += sector_bins > 0
              ? fmt::format("- not in this RTL: {} (capsgen_accel, the ideal-memory top level, has no scratchpad or PMUs; the "
                            "sectors' sleep/wake are the pmu.<memory>.s<k> bins of the --memory dram runs)\n",
                            fmt::join(fcov.na, ", "))
              : fmt::format("- not in this RTL: {} (the scratchpad and its PMUs are not behind the engine in capsgen_accel; a "
                            "`memory: dram` entry measures their sleep/wake per sector on capsgen_chip)\n",
                            fmt::join(fcov.na, ", "));
  return md;
}

std::string coverage_json(const std::map<std::string, ModuleCoverage>& modules, const FunctionalCoverage& fcov,
                          int runs, const std::string& note) {
  nlohmann::ordered_json j;
  j["runs"] = runs;
  j["note"] = note;
  j["modules"] = nlohmann::ordered_json::object();
  for (const auto& [name, m] : modules) {
    nlohmann::ordered_json u = nlohmann::ordered_json::object();
    for (const auto& [file, ls] : m.uncovered_lines) u[file] = ls;
    j["modules"][name] = {{"instances", m.instances.size()}, {"lines", m.lines}, {"lines_hit", m.lines_hit},
                          {"line_percent", percent(m.lines_hit, m.lines)}, {"toggles", m.toggles},
                          {"toggles_hit", m.toggles_hit}, {"toggle_percent", percent(m.toggles_hit, m.toggles)},
                          {"uncovered_lines", u}};
  }
  j["functional"] = nlohmann::ordered_json::object();
  for (const std::string& b : fcov.order)
    j["functional"][b] = {{"count", fcov.bins.at(b)}, {"runs", fcov.runs.at(b)}, {"na", fcov.na.count(b) > 0}};
  j["never_hit"] = fcov.never_hit();
  return j.dump(2) + "\n";
}

}  // namespace capsgen::cli::regress

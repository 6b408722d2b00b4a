#include "regress/junit.hpp"

#include <fmt/format.h>

#include <map>

namespace capsgen::cli::regress {

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || c == 0x7f ? '?' : ch;
    }
  }
  return out;
}

std::string junit_xml(const std::string& list_name, const std::vector<JobResult>& results, bool interrupted) {
  // Suites in the order of their first job.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const JobResult*>> suites;
  for (const JobResult& r : results) {
    const std::string key = r.job.build_key();
    if (!suites.count(key)) order.push_back(key);
    suites[key].push_back(&r);
  }
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
  std::string body;
  for (const std::string& key : order) {
    int f = 0, e = 0, s = 0;
    double t = 0;
    std::string cases;
    for (const JobResult* r : suites[key]) {
      t += r->seconds;
      cases += fmt::format("    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(list_name),
                           xml_escape(key), xml_escape(r->job.name), r->seconds);
      std::string inner;
      std::string text;
      for (const std::string& p : r->problems) text += p + "\n";
      if (!r->repro.empty()) text += "reproduce: " + r->repro + "\n";
      if (r->status == Status::kInterrupted || r->status == Status::kNotRun) {
        ++s;
        inner = fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(status_name(r->status)));
      } else if (!r->ok()) {
        const bool is_failure = r->status == Status::kFail || r->status == Status::kPass;  // mismatch / not caught
        const std::string msg = r->status == Status::kPass ? "expected a failure (deliberately broken RTL), the run passed"
                                                           : r->message;
        (is_failure ? f : e)++;
        inner = fmt::format("      <{} message=\"{}\" type=\"{}\">{}</{}>\n", is_failure ? "failure" : "error",
                            xml_escape(msg), status_name(r->status), xml_escape(text), is_failure ? "failure" : "error");
      } else if (r->job.expect_fail) {
        inner = fmt::format("      <system-out>{}</system-out>\n",
                            xml_escape("expected failure caught: " + r->message + "\n" + text));
      }
      cases += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
    }
    body += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                        xml_escape(list_name + "." + key), suites[key].size(), f, e, s, t);
    body += cases + "  </testsuite>\n";
    tests += static_cast<int>(suites[key].size());
    failures += f;
    errors += e;
    skipped += s;
    time += t;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\"{}>\n{}"
                     "</testsuites>\n",
                     xml_escape("capsgen regress " + list_name), tests, failures, errors, skipped, time,
                     interrupted ? " interrupted=\"true\"" : "", body);
}

}  // namespace capsgen::cli::regress

// capsgen regress: the JUnit XML report (one <testsuite> per build key, one <testcase> per job).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "regress/job.hpp"

namespace capsgen::cli::regress {

// Text for XML attribute values and character data: & < > " ' escaped, characters XML 1.0 does not
// allow (control characters other than tab, newline, carriage return) replaced by '?'.
std::string xml_escape(std::string_view s);

// The whole document. A job that does not count as passed gets <failure> (a mismatch, or an expected
// failure that passed) or <error> (it could not run, timed out); interrupted and never-run jobs are
// <skipped>. The mismatch lines go into the element's text.
std::string junit_xml(const std::string& list_name, const std::vector<JobResult>& results, bool interrupted);

}  // namespace capsgen::cli::regress

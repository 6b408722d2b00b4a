#!/usr/bin/env bash
# The default test suite from a fresh clone, as CI runs it: clones the repository's HEAD into a
# temporary directory and runs `scripts/test.sh` there with CI=true (the README's test command;
# ctest also writes JUnit XML). Prints one JSON line: wall-clock minutes from the clone to the last
# test, the part before ctest starts (clone, bootstrap, configure and build), the tests run, passed
# and failed, the tests' seconds summed, the five longest tests and every test's seconds. The
# machine's load changes every figure but the test counts; nothing is asserted.
# usage: suite_duration.sh [--nightly] [--keep]
#   --nightly  the whole suite (scripts/test.sh --nightly)
#   --keep     keep the clone (its path goes to stderr)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tier=() keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nightly) tier=(--nightly); shift ;;
    --keep) keep=1; shift ;;
    *) echo "suite_duration.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d /tmp/capsgen-suite.XXXXXX)"
[[ $keep -eq 1 ]] && echo "suite_duration.sh: clone in $work/repo" >&2 || trap 'rm -rf "$work"' EXIT
start=$(date +%s)
git clone -q "$root" "$work/repo"
rc=0
(cd "$work/repo" && CI=true bash scripts/test.sh "${tier[@]}" --output-junit "$work/junit.xml") > "$work/suite.log" 2>&1 || rc=$?
end=$(date +%s)
tail -5 "$work/suite.log" >&2
python3 - "$work/junit.xml" "$start" "$end" "$rc" "$(git -C "$work/repo" rev-parse --short HEAD)" "${tier[*]:-default}" <<'PY'
import datetime, json, sys
import xml.etree.ElementTree as ET
junit, start, end, rc, commit, tier = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
cases, ctest_start = [], None
try:
    suite = ET.parse(junit).getroot()
    ctest_start = datetime.datetime.strptime(suite.get('timestamp'), '%Y-%m-%dT%H:%M:%S').timestamp()
    for c in suite.iter('testcase'):
        failed = c.find('failure') is not None or c.find('error') is not None or c.get('status') == 'fail'
        skipped = c.find('skipped') is not None or c.get('status') in ('notrun', 'disabled')
        cases.append((c.get('name'), float(c.get('time') or 0), failed, skipped))
except (OSError, ET.ParseError, TypeError, ValueError) as e:
    print(f"suite_duration.sh: {junit}: {e}", file=sys.stderr)
test_seconds = sum(t for _, t, _, _ in cases)
longest = sorted(cases, key=lambda c: -c[1])[:5]
wall = end - start
print(json.dumps({'bench': 'suite_duration', 'tier': tier, 'commit': commit, 'exit_status': rc,
                  'wall_seconds': wall, 'wall_minutes': round(wall / 60, 1),
                  'wall_min': wall // 60, 'wall_sec': wall % 60,
                  'before_tests_seconds': round(ctest_start - start) if ctest_start else None,
                  'tests': len(cases), 'passed': sum(1 for c in cases if not c[2] and not c[3]),
                  'failed': sum(1 for c in cases if c[2]), 'skipped': sum(1 for c in cases if c[3]),
                  'test_seconds_summed': round(test_seconds),
                  'longest': [{'name': n, 'seconds': round(t)} for n, t, _, _ in longest],
                  'test_seconds': {n: round(t, 1) for n, t, _, _ in cases}}))
PY
exit $rc

#!/usr/bin/env bash
# The figures a GoogleTest binary records with RecordProperty (operator errors against the real
# functions, fixed-vs-float agreement): runs BINARY with --gtest_filter FILTER and prints one JSON
# line per test that recorded properties: suite, test, pass, and each property as a number where it
# is one. Exit 1 when a test fails.
# usage: test_properties.sh BINARY FILTER
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: test_properties.sh BINARY FILTER" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rc=0
"$1" --gtest_filter="$2" --gtest_output="json:$work/out.json" > "$work/log" 2>&1 || rc=$?
[[ $rc -eq 0 ]] || tail -20 "$work/log" >&2
python3 - "$work/out.json" <<'PY'
import json, sys
standard = {'name', 'file', 'line', 'status', 'result', 'timestamp', 'time', 'classname', 'failures', 'value_param', 'type_param'}
def number(v):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v
for suite in json.load(open(sys.argv[1]))['testsuites']:
    for t in suite['testsuite']:
        props = {k: number(v) for k, v in t.items() if k not in standard}
        if props:
            print(json.dumps({'bench': 'test_properties', 'suite': suite['name'], 'test': t['name'],
                              'pass': not t.get('failures'), **props}))
PY
exit $rc

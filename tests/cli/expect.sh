#!/usr/bin/env bash
# expect.sh RC REGEX -- CMD...: runs CMD, requires exit status RC and REGEX (grep -E; several lines:
# consecutive output lines) in its combined output. Used by the CLI tests to check error messages as well as exit codes.
set -u
want_rc="$1"; regex="$2"; shift 2
[ "$1" = "--" ] && shift
out="$("$@" 2>&1)"; rc=$?
if [ "$rc" -ne "$want_rc" ]; then
  printf 'expected exit status %s, got %s\noutput:\n%s\n' "$want_rc" "$rc" "$out"; exit 1
fi
if [[ $regex == *$'\n'* ]]; then
  # A REGEX of several lines matches consecutive lines of the output, one pattern each (grep would
  # take them as alternatives).
  matched="$(printf '%s\n' "$out" | python3 -c '
import re, sys
parts = sys.argv[1].split("\n")
lines = sys.stdin.read().split("\n")
print(any(all(re.search(p, lines[i + k]) for k, p in enumerate(parts)) for i in range(len(lines) - len(parts) + 1)))
' "$regex")"
else
  matched="$(printf '%s\n' "$out" | grep -Eq -- "$regex" && echo True || echo False)"
fi
if [ "$matched" != True ]; then
  printf 'output does not match /%s/:\n%s\n' "$regex" "$out"; exit 1
fi
printf '%s\n' "$out" | tail -n 3

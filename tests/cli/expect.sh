#!/usr/bin/env bash
# expect.sh RC REGEX -- CMD...: runs CMD, requires exit status RC and REGEX (grep -E) in its
# combined output. Used by the CLI tests to check error messages as well as exit codes.
set -u
want_rc="$1"; regex="$2"; shift 2
[ "$1" = "--" ] && shift
out="$("$@" 2>&1)"; rc=$?
if [ "$rc" -ne "$want_rc" ]; then
  printf 'expected exit status %s, got %s\noutput:\n%s\n' "$want_rc" "$rc" "$out"; exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
  printf 'output does not match /%s/:\n%s\n' "$regex" "$out"; exit 1
fi
printf '%s\n' "$out" | tail -n 3

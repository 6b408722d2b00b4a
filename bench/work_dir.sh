# Sourced by the benchmarks that take --work DIR: bench_work_dir makes $work an existing directory,
# a fresh temporary one removed when the script exits if the caller gave none.
bench_work_dir() {
  if [[ -z "${work:-}" ]]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
  fi
  mkdir -p "$work"
}

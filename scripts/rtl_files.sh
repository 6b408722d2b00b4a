# Sourced by scripts/formal.sh and scripts/lec.sh.
# rtl_module_files RTL_DIR MODULE: the files of a `capsgen generate` directory that MODULE needs, its own
# and those of the modules it instantiates, transitively (one file per module, capsgen_<name>.v), one
# name per line relative to RTL_DIR. Reading only these keeps Yosys off the large ROM files.
rtl_module_files() {
  local dir="$1" todo=("$2.v") seen=" " f child
  while [[ ${#todo[@]} -gt 0 ]]; do
    f="${todo[0]}"; todo=("${todo[@]:1}")
    [[ "$seen" == *" $f "* ]] && continue
    seen+="$f "
    echo "$f"
    for child in $(sed -n 's/^  \(capsgen_[a-z0-9_]*\) \(#(\|u_[a-z0-9_]* (\).*/\1/p' "$dir/$f" | sort -u); do
      [[ -f "$dir/$child.v" ]] && todo+=("$child.v")
    done
  done
}

#!/usr/bin/env python3
"""Which block tests of one generated RTL would repeat another RTL's tests exactly.

usage: rtl_same_blocks.py RTL_DIR REF_DIR BLOCK...

A block test (tb/<block>_tb.cpp, run by scripts/run_block_tests.sh) sees the Verilog of its top
modules and of every module they instantiate, the activation unit's summary and the configuration
summary (JSON, schemas/). When all of these are the same in RTL_DIR and REF_DIR (ignoring Verilog
comment lines, which name the preset, and the configuration's name), the test with the same seed
runs the same stimulus on the same hardware: it is the same test. Prints one line per BLOCK,
"same <block>" or "differs <block> <first differing file>", and exits 0.
"""
import json
import os
import re
import sys

# The top modules each block test verilates (tb/CMakeLists.txt and tb/*_blocks.cmake).
BLOCK_TOPS = {
    "pe": ["capsgen_pe"],
    "accumulator": ["capsgen_accumulator"],
    "array": ["capsgen_systolic_array", "capsgen_accumulator_bank"],
    "activation": ["capsgen_activation", "capsgen_activation_bank", "capsgen_act_sqrt_rom",
                   "capsgen_act_squash_rom", "capsgen_act_exp_rom", "capsgen_act_divider"],
    "scratchpad": ["capsgen_spm_data", "capsgen_spm_weight", "capsgen_spm_acc", "capsgen_spm_shared"],
    "pmu": ["capsgen_pmu_data", "capsgen_pmu_weight", "capsgen_pmu_acc", "capsgen_pmu_shared",
            "capsgen_spm_data", "capsgen_spm_weight", "capsgen_spm_acc", "capsgen_spm_shared"],
    "dma": ["capsgen_dma"],
    "memsys": ["capsgen_memsys"],
    "gather": ["capsgen_gather"],
    "staging": ["capsgen_staging"],
    "engine": ["capsgen_engine"],
    "frame_seq": ["capsgen_frame_seq"],
}
# Summaries every block test may read, besides the Verilog, and those of single blocks.
DATA_FILES = ["activation.json", "config.json"]
BLOCK_DATA_FILES = {
    "scratchpad": ["scratchpad.json"],
    "pmu": ["pmu.json", "scratchpad.json"],
    "dma": ["dma.json", "memsys.json"],
    "memsys": ["memsys.json"],
    "frame_seq": ["chip.json"],
}
INSTANCE = re.compile(r"^\s*(capsgen_\w+)\s+(?:#\(|u_)", re.M)


def body(path):
    """A summary (JSON) without the configuration's name, or Verilog without the lines that start with
    "//" or "#"; None when absent."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        if path.endswith(".json"):
            doc = json.load(f)
            doc.pop("name", None)
            return doc
        return [l for l in f.read().splitlines() if not l.lstrip().startswith(("//", "#"))]


def closure(rtl, tops):
    """The module files reachable from `tops` (modules absent from the RTL are skipped)."""
    seen, todo = set(), list(tops)
    while todo:
        m = todo.pop()
        if m in seen or not os.path.exists(os.path.join(rtl, m + ".v")):
            continue
        seen.add(m)
        with open(os.path.join(rtl, m + ".v")) as f:
            todo.extend(INSTANCE.findall(f.read()))
    return seen


def first_difference(rtl, ref, block):
    tops = BLOCK_TOPS[block]
    modules = closure(rtl, tops) | closure(ref, tops)
    for name in sorted(m + ".v" for m in modules) + DATA_FILES + BLOCK_DATA_FILES.get(block, []):
        if body(os.path.join(rtl, name)) != body(os.path.join(ref, name)):
            return name
    return None


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    rtl, ref, blocks = argv[1], argv[2], argv[3:]
    for b in blocks:
        if b not in BLOCK_TOPS:
            print(f"rtl_same_blocks.py: unknown block '{b}'", file=sys.stderr)
            return 2
        diff = first_difference(rtl, ref, b)
        print(f"same {b}" if diff is None else f"differs {b} {diff}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""A `capsgen sim --trace` run on tiny-2x2 must write its FST in real time at the preset's clock and a
.gtkw that opens zoomed on the first descriptor.

Runs capsgen sim with --trace, converts the FST to VCD with fst2vcd (GTKWave's tool) and checks:
  - the VCD's timescale is 1ns or 1ps;
  - clk_i rises every clock period (the preset's clock.target_mhz, rounded to whole ps) and falls
    half a period (rounded down to a whole ps) after each rise, from time 0 on, over the whole run;
  - the .gtkw's [timestart] is the reset release (the testbench's "trace reset_released_ps=" line,
    three cycles after time 0) in the trace's timescale, and its "*" zoom line shows a window no
    shorter than the first descriptor and shorter than the whole run.

usage: sim_trace_units.py CAPSGEN WORK [PERIOD_PS]
PERIOD_PS overrides the expected clock period (a wrong value must make the test fail).
"""
import json
import math
import pathlib
import re
import subprocess
import sys

PRESET = "configs/tiny-2x2.yaml"
NETWORK = "models/capsnet-tiny.yaml"
RESET_CYCLES = 3  # tb::Sim::reset()'s default
WAVE_PANE_PIXELS = 880  # gen/sim/run.cpp: kWavePanePixels
TIMESCALE_PS = {"1ps": 1, "1ns": 1000}


def fail(msg):
    print(f"sim_trace_units: FAIL: {msg}")
    sys.exit(1)


def preset_period_ps(preset):
    m = re.search(r"^\s*target_mhz:\s*([0-9.]+)", preset.read_text(), re.M)
    if not m:
        fail(f"{preset}: no clock.target_mhz")
    return round(1e6 / float(m.group(1)))


def vcd_header_and_clock(vcd_path):
    """The timescale, and the times at which the top-level clk_i changes, with its new values."""
    timescale, clk_id, in_timescale = "", None, False
    changes, now = [], 0
    with open(vcd_path) as vcd:
        for line in vcd:
            line = line.strip()
            if in_timescale or line.startswith("$timescale"):
                words = line.replace("$timescale", "").replace("$end", "").split()
                timescale += "".join(words)
                in_timescale = "$end" not in line
                continue
            if line.startswith("$var") and clk_id is None:
                words = line.split()
                if words[4] == "clk_i":
                    clk_id = words[3]
                continue
            if line.startswith("#"):
                now = int(line[1:])
            elif clk_id is not None and line in ("0" + clk_id, "1" + clk_id):
                changes.append((now, int(line[0])))
    return timescale, changes


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    capsgen, work = sys.argv[1], pathlib.Path(sys.argv[2])
    root = pathlib.Path(__file__).resolve().parents[2]
    period_ps = int(sys.argv[3]) if len(sys.argv) == 4 else preset_period_ps(root / PRESET)
    work.mkdir(parents=True, exist_ok=True)
    fst, gtkw, vcd = work / "run.fst", work / "run.gtkw", work / "run.vcd"
    for f in (fst, gtkw, vcd):
        f.unlink(missing_ok=True)
    run = subprocess.run([capsgen, "sim", "--config", PRESET, "--model", NETWORK, "--seed", "1", "--work", str(work),
                          "--trace", str(fst)], cwd=root, capture_output=True, text=True)
    if run.returncode != 0 or "PASS, every operation bit-exact" not in run.stdout:
        print(run.stdout[-3000:], run.stderr[-3000:])
        fail(f"capsgen sim --trace did not pass (exit status {run.returncode})")
    with open(vcd, "w") as out:
        subprocess.run(["fst2vcd", "-f", str(fst)], stdout=out, stderr=subprocess.DEVNULL, check=True)

    timescale, changes = vcd_header_and_clock(vcd)
    if timescale not in TIMESCALE_PS:
        fail(f"timescale '{timescale}', expected 1ns or 1ps")
    unit = TIMESCALE_PS[timescale]
    print(f"timescale {timescale}; expected clock period {period_ps} ps")
    high_ps = period_ps // 2
    rises = [t for t, v in changes if v == 1]
    falls = [t for t, v in changes if v == 0]
    report = json.loads((work / "report.json").read_text())
    cycles = report["simulated_cycles"] + RESET_CYCLES
    if len(rises) != cycles or len(falls) != cycles:
        fail(f"clk_i rises {len(rises)} and falls {len(falls)} times, expected {cycles} (cycles with reset)")
    for n, (rise, fall) in enumerate(zip(rises, falls)):
        if rise * unit != n * period_ps or fall * unit != n * period_ps + high_ps:
            fail(f"clock edge {n}: clk_i rises at {rise} and falls at {fall} ({timescale}), expected "
                 f"{n * period_ps} ps and {n * period_ps + high_ps} ps")
    print(f"clk_i: {len(rises)} periods of {period_ps} ps, high for {high_ps} ps")

    log = (work / "sim.log").read_text()
    m = re.search(r"^trace reset_released_ps=(\d+)$", log, re.M)
    if not m or int(m.group(1)) != RESET_CYCLES * period_ps:
        fail(f"sim.log: reset release {m.group(1) if m else 'missing'}, expected {RESET_CYCLES * period_ps} ps")
    text = gtkw.read_text()
    start = re.search(r"^\[timestart\] (\d+)$", text, re.M)
    zoom = re.search(r"^\*(-?[0-9.]+) ", text, re.M)
    if not start or int(start.group(1)) * unit != RESET_CYCLES * period_ps:
        fail(f"{gtkw}: [timestart] {start.group(1) if start else 'missing'}, expected the reset release "
             f"({RESET_CYCLES * period_ps // unit})")
    if not re.search(r"^\[size\] \d+ \d+$", text, re.M) or not zoom:
        fail(f"{gtkw}: no [size] or zoom ('*') line")
    shown_ps = 2.0 ** -float(zoom.group(1)) * WAVE_PANE_PIXELS / 200.0 * unit
    first_ps = report["operations"][0]["cycles"] * period_ps
    if not first_ps <= shown_ps < report["simulated_cycles"] * period_ps:
        fail(f"{gtkw}: the zoom shows {shown_ps:.0f} ps, expected at least the first descriptor "
             f"({first_ps} ps) and less than the run")
    print(f"gtkw: [timestart] {start.group(1)}, zoom {zoom.group(1)} ({shown_ps / 1000:.0f} ns of "
          f"{report['simulated_cycles'] * period_ps / 1000:.0f} ns)")
    print("trace in real time: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The calibration rule every command shares (gen/golden/workload.hpp): for the same network, weights,
seed and input, capsgen golden, compile and sim quantize identically and compute identical tensors.

  calibration_agrees.py CAPSGEN WORK [--sim] -- ARGS...

ARGS (e.g. --config P --model M --seed 1, or --weights W --dataset mnist --index 0) go to each
command. golden --dump gives every fixed-point tensor; compile --dump-engine and sim (WORK/sim/program)
write the memory image and every write of the program each command compiled from its own workload,
which give the same tensors by the regions' addresses. Every tensor golden dumps and the program
holds must be equal in all of them. So that agreement cannot be vacuous, golden with half the
calibration images (--calib-count) must give some other tensor. Prints one line and exits 0 when
all hold; else names the command and the first differing tensor and element, and exits 1."""
import ast
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile


def read_npz(path):
    tensors = {}
    with zipfile.ZipFile(path) as z:
        for member in z.namelist():
            b = z.read(member)
            header_len = struct.unpack("<H", b[8:10])[0]
            header = ast.literal_eval(b[10:10 + header_len].decode())
            assert header["descr"] == "<f4", f"{path}: {member}: {header['descr']}"
            count = 1
            for d in header["shape"]:
                count *= d
            values = struct.unpack(f"<{count}f", b[10 + header_len:10 + header_len + 4 * count])
            tensors[member[:-len(".npy")]] = [int(v) for v in values]
    return tensors


def read_program(d):
    """The memory after the whole program (initial.mem, then every iNN.writes in order), cut into
    the tensors regions.txt names."""
    raw = open(os.path.join(d, "initial.mem"), "rb").read()
    mem = list(struct.unpack(f"<{len(raw) // 4}i", raw))
    for f in sorted(f for f in os.listdir(d) if f.endswith(".writes")):
        for line in open(os.path.join(d, f)):
            addr, value = line.split()
            mem[int(addr)] = int(value)
    tensors = {}
    for line in open(os.path.join(d, "regions.txt")):
        if line.startswith("#"):
            continue
        name, base, *shape = line.split()
        count = 1
        for s in shape:
            count *= int(s)
        tensors[name] = mem[int(base):int(base) + count]
    return tensors


def first_difference(a, b, names):
    for name in names:
        for i, (x, y) in enumerate(zip(a[name], b[name])):
            if x != y:
                return f"{name}[{i}] {x} vs {y}"
    return None


def run(cmd, log):
    with open(log, "w") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        sys.exit(f"exit status {rc}: {' '.join(cmd)} (log: {log})")


def main():
    sep = sys.argv.index("--")
    capsgen, work = sys.argv[1], sys.argv[2]
    with_sim = "--sim" in sys.argv[3:sep]
    args = sys.argv[sep + 1:]
    os.makedirs(work, exist_ok=True)
    golden, half = os.path.join(work, "golden.npz"), os.path.join(work, "golden-half-calib.npz")
    if "--calib-count" in args or "--calib" in args:
        sys.exit("ARGS must leave the calibration to each command's rule")
    report = os.path.join(work, "golden.md")
    run([capsgen, "golden", *args, "--quiet", "--dump", golden, "--report", report], os.path.join(work, "golden.log"))
    g = read_npz(golden)
    images = int(re.search(r"^- calibration images: ([0-9]+)$", open(report).read(), re.M).group(1))
    programs = {"compile": os.path.join(work, "compile")}
    shutil.rmtree(programs["compile"], ignore_errors=True)  # no iNN.writes of an earlier program
    run([capsgen, "compile", *args, "--dump-engine", programs["compile"]], os.path.join(work, "compile.log"))
    if with_sim:
        programs["sim"] = os.path.join(work, "sim", "program")
        run([capsgen, "sim", *args, "--work", os.path.join(work, "sim")], os.path.join(work, "sim.log"))
    compared = None
    for cmd, d in programs.items():
        p = read_program(d)
        names = sorted(n for n in p if n in g and len(p[n]) == len(g[n]))
        if len(names) < 5 or "input" not in names:
            sys.exit(f"{cmd}: only {names} of the program's tensors are golden's")
        diff = first_difference(g, p, names)
        if diff:
            sys.exit(f"calibration differs: golden vs {cmd}: {diff}")
        compared = names
    fewer = 1
    run([capsgen, "golden", *args, "--quiet", "--calib-count", str(fewer), "--dump", half],
        os.path.join(work, "golden-half-calib.log"))
    diff = first_difference(g, read_npz(half), compared)
    if not diff:
        sys.exit(f"golden with {fewer} instead of {images} calibration images computes the same tensors: "
                 "these ARGS cannot tell calibrations apart")
    print(f"calibration agrees: golden, {', '.join(programs)} on {images} calibration images: {len(compared)} tensors "
          f"equal; golden on {fewer} differs ({diff})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fits the CACTI-7 SRAM model (docs/dse-memory.md section 2.2) to tests/data/cacti7/cacti7-sram.csv.

  scripts/fit_sram_cacti7.py            writes configs/tech/sram-cacti7-{32,90,180}nm.yaml
  scripts/fit_sram_cacti7.py --residuals  prints the residual table of docs/dse-memory.md (markdown)
  scripts/fit_sram_cacti7.py --check      exits 1 unless the checked-in files are what it would write
  scripts/fit_sram_cacti7.py --descnet    DESCNet's Table III calibration (configs/tech/sram-32nm.yaml)
                                          against the 32 nm, 16-bank, 16 B rows (ratios model / CACTI)

Per node, port count (1, 3), block (1 B, 16 B) and bank count (1, 16) every figure is a log-quadratic
power law in the size: ln y = c0 + c1 L + c2 L^2, L = log2(KiB), fitted by least squares in log space
over that group's rows (8 KiB .. 8 MiB). Groups the table lacks (1 bank at 90 and 180 nm) take the
16-bank fit plus the 32 nm difference between the 1- and 16-bank fits (same ports and block), and
180 nm (no CACTI-P) takes the gating figures as 90 nm's ratios to its ungated ones. Plain Python,
no packages: the normal equations of a 3-parameter fit are solved directly.
"""
import csv
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSV = os.path.join(ROOT, "tests", "data", "cacti7", "cacti7-sram.csv")

# (yaml key, how to read it from a row)
FIGURES = [
    ("area_mm2", lambda r: r["area_mm2"]),
    ("read_nj", lambda r: r["read_energy_nJ"]),
    ("write_nj", lambda r: r["write_energy_nJ"]),
    ("leak_mw", lambda r: r["leak_total_mW"]),
    ("pg_area_mm2", lambda r: r["pg_area_mm2"]),
    ("pg_leak_mw", lambda r: r["pg_leak_gated_total_mW"]),
    ("wake_ns", lambda r: max(r["pg_wakeup_latency_array_ns"], r["pg_wakeup_latency_wl_ns"],
                              r["pg_wakeup_latency_blfloat_ns"]) if r["pg_wakeup_latency_array_ns"] else None),
    ("wake_nj", lambda r: r["pg_wakeup_energy_all_mats_all_banks_nJ"]),
]
PG = {"pg_area_mm2": "area_mm2", "pg_leak_mw": "leak_mw", "wake_nj": "read_nj", "wake_ns": None}


def num(v):
    return float(v) if v not in ("", None) else None


def load():
    rows = []
    with open(CSV, newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "ok":
                continue
            for k in ("pg_wakeup_latency_array_ns", "pg_wakeup_latency_wl_ns", "pg_wakeup_latency_blfloat_ns"):
                r[k] = num(r[k])
            rows.append(r)
    return rows


def value(r, key):
    for k, get in FIGURES:
        if k == key:
            v = get(r)
            return num(v) if not isinstance(v, float) else v
    raise KeyError(key)


def solve3(xs, ys):
    # least squares of y = c0 + c1 x + c2 x^2
    s = [sum(x ** k for x in xs) for k in range(5)]
    t = [sum(y * x ** k for x, y in zip(xs, ys)) for k in range(3)]
    m = [[s[i + j] for j in range(3)] + [t[i]] for i in range(3)]
    for i in range(3):
        p = max(range(i, 3), key=lambda q: abs(m[q][i]))
        m[i], m[p] = m[p], m[i]
        for q in range(3):
            if q != i:
                f = m[q][i] / m[i][i]
                m[q] = [a - f * b for a, b in zip(m[q], m[i])]
    return [m[i][3] / m[i][i] for i in range(3)]


def kib_log(r):
    return math.log2(float(r["capacity_bytes"]) / 1024)


def fit_all(rows):
    """{(node, ports, block, banks): {figure: ([c0,c1,c2], source)}}"""
    groups = {}
    for r in rows:
        groups.setdefault((int(r["tech_nm"]), int(r["rw_ports"]), int(r["block_bytes"]), int(r["banks"])), []).append(r)
    fits = {}
    for g, rs in groups.items():
        fits[g] = {}
        for key, _ in FIGURES:
            pts = [(kib_log(r), value(r, key)) for r in rs if value(r, key) is not None]
            if len(pts) >= 3:
                fits[g][key] = (solve3([p[0] for p in pts], [math.log(p[1]) for p in pts]), "fitted")
    # 180 nm gating figures: 90 nm's ratio to the ungated figure (wake-up latency: 90 nm's).
    for (node, p, b, k), f in fits.items():
        if node != 180:
            continue
        ref = fits.get((90, p, b, k))
        for key, base in PG.items():
            if key in f or ref is None or key not in ref:
                continue
            if base is None:
                f[key] = (list(ref[key][0]), "90 nm's")
            else:
                f[key] = ([a + c - d for a, c, d in zip(f[base][0], ref[key][0], ref[base][0])],
                          "90 nm's ratio to " + base)
    # One bank at 90 / 180 nm: the 16-bank fit plus 32 nm's 1-bank vs 16-bank difference.
    for node in (90, 180):
        for p in (1, 3):
            for b in (1, 16):
                if (node, p, b, 1) in fits or (node, p, b, 16) not in fits:
                    continue
                f16, a1, a16 = fits[(node, p, b, 16)], fits[(32, p, b, 1)], fits[(32, p, b, 16)]
                fits[(node, p, b, 1)] = {
                    key: ([x + y - z for x, y, z in zip(f16[key][0], a1[key][0], a16[key][0])],
                          "16 banks x 32 nm's 1/16-bank ratio") for key in f16}
    return fits


def predict(c, L):
    return math.exp(c[0] + c[1] * L + c[2] * L * L)


def yaml_path(node):
    return os.path.join(ROOT, "configs", "tech", f"sram-cacti7-{node}nm.yaml")


def yaml_text(fits, node):
    trend = node == 180
    lines = [
        f"# SRAM technology parameters for `capsgen dse memory` (gen/memory/sram_model.hpp), {node} nm, fitted to",
        "# CACTI 7 (tests/data/cacti7/cacti7-sram.csv; docs/dse-memory.md section 2.2). GENERATED by",
        "# scripts/fit_sram_cacti7.py: edit the script, not this file.",
        "# Each figure: ln y = c0 + c1 L + c2 L^2, L = log2(size / KiB), per ports / block bytes / banks;",
        "# read_nj / write_nj per access of one block, leak_mw the whole memory (all banks + routing),",
        "# pg_*: CACTI-P with its (state-retentive) power gating; wake_ns / wake_nj waking the whole memory.",
    ]
    if trend:
        lines.append("# 180 nm: TREND ONLY. CACTI refuses nodes above 90 nm; these rows come from a build with that check")
        lines.append("# relaxed, never validated by CACTI's authors, and without CACTI-P (gating figures are 90 nm's ratios).")
    lines += [
        f"name: sram-cacti7-{node}nm",
        f"description: {node} nm SRAM fitted to CACTI 7{' (trend only, not validated)' if trend else ''}",
        "model: cacti7",
        f"node_nm: {node}",
        "fitted_kib: [8, 8192]",
        "sleep:",
        "  style: non_retentive        # DESCNet's deep sleep (state lost); retentive: CACTI-P's (state kept)",
        "  off_leak_fraction: 0.05     # assumption: a non-retentive sector's residual leakage (CACTI does not model it)",
        "groups:",
    ]
    for p in (1, 3):
        for b in (1, 16):
            for k in (1, 16):
                f = fits[(node, p, b, k)]
                srcs = sorted({s for _, s in f.values()})
                lines.append(f"  - ports: {p}")
                lines.append(f"    block_bytes: {b}")
                lines.append(f"    banks: {k}")
                lines.append(f"    source: \"{'; '.join(srcs)}\"")
                for key, _ in FIGURES:
                    c = f[key][0]
                    lines.append(f"    {key}: [{c[0]:.6g}, {c[1]:.6g}, {c[2]:.6g}]")
    return "\n".join(lines) + "\n"


def residuals(rows, fits):
    """Markdown: per node and figure, rows compared, max |error|, rows beyond 20%."""
    out = ["| node | figure | rows | max abs. error | median abs. error | rows beyond 20% |", "|---|---|---:|---:|---:|---|"]
    for node in (32, 90, 180):
        for key, _ in FIGURES:
            errs = []
            for r in rows:
                if int(r["tech_nm"]) != node:
                    continue
                v = value(r, key)
                g = (node, int(r["rw_ports"]), int(r["block_bytes"]), int(r["banks"]))
                if v is None or key not in fits[g]:
                    continue
                e = predict(fits[g][key][0], kib_log(r)) / v - 1
                errs.append((abs(e), f"{r['capacity']} {r['block_bytes']}B {r['rw_ports']}p {r['banks']}b ({e:+.0%})"))
            if not errs:
                continue
            errs.sort()
            miss = [s for e, s in errs if e > 0.2]
            out.append(f"| {node} nm | {key} | {len(errs)} | {errs[-1][0]:.1%} | {errs[len(errs) // 2][0]:.1%} | "
                       f"{', '.join(miss) if miss else '-'} |")
    return "\n".join(out)


def descnet_ratios(rows):
    import re
    text = open(os.path.join(ROOT, "configs", "tech", "sram-32nm.yaml")).read()

    def val(section, key):
        block = text[text.index(section + ":"):]
        return float(re.search(r"\n\s+" + key + r":\s*([0-9.eE+-]+)", block).group(1))
    a, ae, ak = val("area", "coeff_mm2"), val("area", "size_exp"), val("area", "port_k")
    lk, lp = val("leakage", "mw_per_kib"), val("leakage", "port_k")
    rd, ref, de, dp = val("dynamic", "read_pj_per_byte"), val("dynamic", "ref_kib"), val("dynamic", "size_exp"), val("dynamic", "port_k")
    out = ["| size | ports | area | leakage | read energy per access |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        if r["tech_nm"] != "32" or r["banks"] != "16" or r["block_bytes"] != "16":
            continue
        k, p = float(r["capacity_bytes"]) / 1024, int(r["rw_ports"])
        area = a * k ** ae * (1 + ak * (p - 1))
        leak = lk * k * (1 + lp * (p - 1))
        read = rd * (k / ref) ** de * (1 + dp * (p - 1)) * 16 / 1000
        out.append(f"| {r['capacity']} | {p} | {area / float(r['area_mm2']):.2f} | {leak / float(r['leak_total_mW']):.2f} | "
                   f"{read / float(r['read_energy_nJ']):.2f} |")
    return "\n".join(out)


def main():
    rows = load()
    if "--descnet" in sys.argv[1:]:
        print(descnet_ratios(rows))
        return
    fits = fit_all(rows)
    if "--residuals" in sys.argv[1:]:
        print(residuals(rows, fits))
        return
    stale = []
    for node in (32, 90, 180):
        text, path = yaml_text(fits, node), yaml_path(node)
        if "--check" in sys.argv[1:]:
            with open(path) as f:
                if f.read() != text:
                    stale.append(path)
            continue
        with open(path + ".tmp", "w") as out:
            out.write(text)
        os.replace(path + ".tmp", path)
        print(path)
    if stale:
        print("not what scripts/fit_sram_cacti7.py writes: " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The figures tables of docs/figures.md, from the benchmarks' results.

bench/figures.yaml lists every table row: the figure, the command that measures it and how its
value reads from the command's JSON output. The results of each command live in
bench/results/<name>.json (the command, when it ran, the JSON records it printed).

    scripts/figures.py                  render docs/figures.md's tables from bench/results/
    scripts/figures.py --check          exit 1 when docs/figures.md differs from a render
    scripts/figures.py --run NAME ...   run the named results' commands, store, render
    scripts/figures.py --run-all        run every command (hours on 2 cores), store, render
    scripts/figures.py --list           each result's name, whether it is stored, its command

A table sits between `<!-- figures:SECTION:begin -->` and `<!-- figures:SECTION:end -->` in
docs/figures.md; text outside the markers is left as it is. A row whose results are not stored
yet shows the value recorded in the manifest (`recorded:`), marked "(recorded)"; --run replaces it
with the measured one. Exit 2 on a bad manifest or results file, naming the file and the field.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "bench", "figures.yaml")
RESULTS = os.path.join(ROOT, "bench", "results")
FIGURES = os.path.join(ROOT, "docs", "figures.md")


class InputError(Exception):
    """A bad manifest or results file: the message names the file and the field."""


class Record(dict):
    """A JSON record whose fields read as attributes in a value template: {run.total_cycles:,}."""

    def __getattr__(self, name):
        if name not in self:
            raise KeyError(name)
        value = self[name]
        return Record(value) if isinstance(value, dict) else value


def load_manifest():
    try:
        with open(MANIFEST, encoding="utf-8") as f:
            manifest = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"{MANIFEST}: {e}")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("results"), dict) or \
            not isinstance(manifest.get("sections"), dict):
        raise InputError(f"{MANIFEST}: needs the maps 'results' and 'sections'")
    for name, spec in manifest["results"].items():
        if not isinstance(spec, dict) or not isinstance(spec.get("run"), str):
            raise InputError(f"{MANIFEST}: results.{name}.run: a command string is required")
    for section, rows in manifest["sections"].items():
        if not isinstance(rows, list):
            raise InputError(f"{MANIFEST}: sections.{section}: a list of rows is required")
        for i, row in enumerate(rows):
            where = f"{MANIFEST}: sections.{section}[{i}]"
            for key in ("figure", "command"):
                if not isinstance(row.get(key), str):
                    raise InputError(f"{where}.{key}: a string is required")
            if not isinstance(row.get("value" if row.get("records") else "recorded"), str):
                raise InputError(f"{where}: a row needs records and a value, or a recorded value")
            for alias, ref in (row.get("records") or {}).items():
                if not isinstance(ref, dict) or ref.get("results") not in manifest["results"]:
                    raise InputError(f"{where}.records.{alias}.results: names no entry of 'results'")
    return manifest


def results_path(name):
    return os.path.join(RESULTS, name + ".json")


def load_results(name):
    path = results_path(name)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}")
    if doc.get("schema") != "capsgen.bench-results/1" or not isinstance(doc.get("records"), list):
        raise InputError(f"{path}: schema: not a capsgen.bench-results/1 document with 'records'")
    return doc


def select(doc, ref, where):
    """The one record of `doc` whose fields equal every `where` field of the reference `ref`."""
    wanted = ref.get("where") or {}
    found = [r for r in doc["records"] if all(r.get(k) == v for k, v in wanted.items())]
    if len(found) != 1:
        raise InputError(f"{results_path(ref['results'])}: {len(found)} records match {where} {wanted}, "
                         "one is required")
    return Record(found[0])


def render_row(row, where, cache):
    records, missing = {}, []
    for alias, ref in (row.get("records") or {}).items():
        if ref["results"] not in cache:
            cache[ref["results"]] = load_results(ref["results"])
        doc = cache[ref["results"]]
        if doc is None:
            missing.append(ref["results"])
        else:
            records[alias] = select(doc, ref, f"{where}.records.{alias}")
    if missing or not row.get("records"):
        if not isinstance(row.get("recorded"), str):
            raise InputError(f"{MANIFEST}: {where}.recorded: no stored results ({', '.join(missing) or 'none named'}) "
                             "and no recorded value")
        value = row["recorded"] + " (recorded)"
    else:
        try:
            value = row["value"].format(**records)
        except (KeyError, AttributeError, ValueError, IndexError) as e:
            raise InputError(f"{MANIFEST}: {where}.value: {e!r} is not in its records")
    return f"| {row['figure']} | {value} | {row['command']} |"


def render_tables(manifest):
    cache, tables = {}, {}
    for section, rows in manifest["sections"].items():
        lines = ["| figure | value | command |", "|---|---|---|"]
        lines += [render_row(row, f"sections.{section}[{i}]", cache) for i, row in enumerate(rows)]
        tables[section] = "\n".join(lines)
    return tables


def render(manifest, text):
    tables = render_tables(manifest)
    for section, table in tables.items():
        pattern = re.compile(rf"(<!-- figures:{re.escape(section)}:begin -->\n).*?(<!-- figures:{re.escape(section)}:end -->)",
                             re.S)
        if not pattern.search(text):
            raise InputError(f"{FIGURES}: no markers for section '{section}'")
        text = pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(2), text)
    return text


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".figures.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def json_records(text):
    """The JSON objects in a command's output: each starts a line with '{' (on one line or
    indented over several); a JSON array starting a line contributes its objects."""
    decoder, records, pos = json.JSONDecoder(), [], 0
    while True:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            return records
        start = min(starts)
        if start > 0 and text[start - 1] != "\n":
            pos = start + 1
            continue
        try:
            value, pos = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        records += [v for v in value if isinstance(v, dict)] if isinstance(value, list) else \
            [value] if isinstance(value, dict) else []


def run_results(manifest, name):
    """Runs the command of results `name` from the repository root; stores the JSON records it prints."""
    command = manifest["results"][name]["run"]
    print(f"figures: {name}: {command}", flush=True)
    proc = subprocess.run(["bash", "-c", command], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    records = json_records(proc.stdout)
    failed_checks = sum(1 for r in records if r.get("pass") is False)
    if proc.returncode != 0 or not records or failed_checks:
        print(f"figures: {name}: the command failed (exit {proc.returncode}, {len(records)} JSON records, "
              f"{failed_checks} with \"pass\": false); its results are left as they were", file=sys.stderr)
        return False
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    doc = {"schema": "capsgen.bench-results/1", "name": name, "command": command,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "commit": commit, "cores": os.cpu_count(), "records": records}
    os.makedirs(RESULTS, exist_ok=True)
    write_atomic(results_path(name), json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return True


def main():
    global MANIFEST, RESULTS, FIGURES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/figures.md is not a render")
    parser.add_argument("--run", nargs="+", metavar="NAME", default=[], help="run these results' commands")
    parser.add_argument("--run-all", action="store_true", help="run every results command")
    parser.add_argument("--list", action="store_true", help="list the results and their commands")
    parser.add_argument("--manifest", default=MANIFEST, help=f"the manifest (default {MANIFEST})")
    parser.add_argument("--results", default=RESULTS, help=f"the results folder (default {RESULTS})")
    parser.add_argument("--figures", default=FIGURES, help=f"the page (default {FIGURES})")
    args = parser.parse_args()
    MANIFEST, RESULTS, FIGURES = args.manifest, args.results, args.figures
    try:
        manifest = load_manifest()
        if args.list:
            for name, spec in manifest["results"].items():
                stored = "stored " if os.path.exists(results_path(name)) else "missing"
                print(f"{name}\t{stored}\t{spec['run']}")
            return 0
        names = list(manifest["results"]) if args.run_all else args.run
        for name in names:
            if name not in manifest["results"]:
                raise InputError(f"{MANIFEST}: results: no entry '{name}'")
        failed = [name for name in names if not run_results(manifest, name)]
        with open(FIGURES, encoding="utf-8") as f:
            text = f.read()
        rendered = render(manifest, text)
        if args.check:
            if rendered != text:
                print(f"{FIGURES}: differs from `scripts/figures.py`'s render of {MANIFEST} and {RESULTS}/",
                      file=sys.stderr)
                return 1
            print(f"figures: {FIGURES} is up to date")
            return 0
        if rendered != text:
            write_atomic(FIGURES, rendered)
            print(f"figures: wrote {FIGURES}")
        return 1 if failed else 0
    except InputError as e:
        print(f"figures: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks JSON files against a JSON Schema (Draft 2020-12) from schemas/.

    scripts/check_json.py SCHEMA FILE [FILE ...]

Prints one line per file ("ok FILE" or each violation as "FILE: PATH: message") and exits 1 when
any file violates the schema, 2 when a file or the schema cannot be read.
"""
import json
import sys

import jsonschema


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: cannot read JSON: {e}", file=sys.stderr)
        sys.exit(2)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    schema = load(argv[1])
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in argv[2:]:
        errors = sorted(validator.iter_errors(load(path)), key=lambda e: list(e.path))
        for e in errors:
            where = "/".join(str(p) for p in e.path) or "(root)"
            print(f"{path}: {where}: {e.message}")
        if errors:
            bad += 1
        else:
            print(f"ok {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Counts registers that an asynchronous-reset always block assigns without a reset value.

usage: check_reset.py [--expect N] [--quiet] FILE.v|DIR ...

A DIR stands for the .v files its files.f lists (capsgen generate's output), or all its .v files.
The check reads the Verilog text on its own (it does not trust the generator): for every
`always @(posedge CLK or negedge RST)` (or `posedge RST`) block whose statement is
`if (!RST) RESET else BODY` (or `if (RST)` for an active-high reset), every register assigned
anywhere in BODY (through nested begin/end, if/else, case and for statements) must be assigned in
RESET too. A register is named by its base name: bit and part selects and memory indices are
stripped, and each part of a concatenation counts. An async-reset block that is not of that form
counts each register it assigns. The assertion blocks (`ifdef CAPSGEN_ASSERTIONS ... `endif,
docs/rtl-assertions.md) assign no register and are not read.

Prints one line per register without a reset value (`module: name`), one summary line per module
that has any, and the total. Exit status 0 if the total equals --expect (default 0), 1 if not,
2 on bad usage or a file that cannot be parsed.
"""
import os
import re
import sys

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<lcomment>//[^\n]*)
      | (?P<bcomment>/\*.*?\*/)
      | (?P<string>"(?:\\.|[^"\\])*")
      | (?P<number>\d*\s*'[sS]?[bBoOdDhH]\s*[0-9a-fA-FxXzZ_?]+|\d[\d_]*(?:\.\d+)?)
      | (?P<ident>[A-Za-z_$][A-Za-z0-9_$]*)
      | (?P<op><=|>=|==|!=|&&|\|\||<<<|>>>|<<|>>|\+:|-:|[-+*/%&|^~!<>=?:;,.()\[\]{}@\#])
    """,
    re.VERBOSE | re.DOTALL,
)


class ParseError(Exception):
    pass


def tokenize(text):
    toks = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ParseError(f"cannot read character {text[pos]!r} at offset {pos}")
        pos = m.end()
        kind = m.lastgroup
        if kind in ("ws", "lcomment", "bcomment"):
            continue
        toks.append(m.group())
    return toks


class Parser:
    def __init__(self, toks):
        self.t = toks
        self.i = 0

    def peek(self, k=0):
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def next(self):
        tok = self.peek()
        if tok is None:
            raise ParseError("unexpected end of file")
        self.i += 1
        return tok

    def expect(self, tok):
        got = self.next()
        if got != tok:
            raise ParseError(f"expected {tok!r}, got {got!r} (token {self.i})")

    def balanced(self, open_, close):
        """Consumes a balanced group starting at `open_`; returns its inner tokens."""
        self.expect(open_)
        depth, inner = 1, []
        while True:
            tok = self.next()
            if tok == open_:
                depth += 1
            elif tok == close:
                depth -= 1
                if depth == 0:
                    return inner
            inner.append(tok)

    def until_depth0(self, stops):
        """Tokens up to (not including) the first of `stops` outside (), [] and {}."""
        depth, out = 0, []
        while True:
            tok = self.peek()
            if tok is None:
                raise ParseError("unexpected end of file")
            if depth == 0 and tok in stops:
                return out
            if tok in "([{":
                depth += 1
            elif tok in ")]}":
                depth -= 1
            out.append(self.next())

    def statement(self, targets):
        """Parses one statement, adding the base names it assigns to `targets`."""
        tok = self.peek()
        if tok == "begin":
            self.next()
            if self.peek() == ":":
                self.next()
                self.next()
            while self.peek() != "end":
                self.statement(targets)
            self.next()
        elif tok == "if":
            self.next()
            self.balanced("(", ")")
            self.statement(targets)
            if self.peek() == "else":
                self.next()
                self.statement(targets)
        elif tok in ("case", "casez", "casex"):
            self.next()
            self.balanced("(", ")")
            while self.peek() != "endcase":
                if self.peek() == "default":
                    self.next()
                    if self.peek() == ":":
                        self.next()
                else:
                    self.until_depth0({":"})
                    self.expect(":")
                self.statement(targets)
            self.next()
        elif tok == "for":
            self.next()
            self.balanced("(", ")")
            self.statement(targets)
        elif tok == ";":
            self.next()
        elif tok is not None and tok.startswith("$"):  # a system task call
            self.until_depth0({";"})
            self.next()
        else:
            lhs = self.until_depth0({"<=", "="})
            self.next()
            self.until_depth0({";"})
            self.next()
            targets.update(base_names(lhs))


def base_names(lhs):
    """The registers an assignment target names: ident[...] or {a, b[3], c[7:0]}."""
    names, depth = [], 0
    expect_name = True
    for tok in lhs:
        if tok in "[(":
            depth += 1
        elif tok in "])":
            depth -= 1
        elif depth == 0 and tok == ",":
            expect_name = True
        elif depth == 0 and expect_name and re.match(r"[A-Za-z_]", tok):
            names.append(tok)
            expect_name = False
    if not names:
        raise ParseError("assignment without a target: " + " ".join(lhs))
    return names


_SENS = re.compile(r"^(posedge|negedge)$")


def check_module(name, toks, report):
    """Returns the registers of one module assigned in async-reset blocks without a reset value."""
    missing = []
    i = 0
    while i < len(toks):
        if toks[i] != "always":
            i += 1
            continue
        p = Parser(toks)
        p.i = i + 1
        if p.peek() != "@":
            i += 1
            continue
        p.next()
        if p.peek() == "*":
            i = p.i
            continue
        sens = p.balanced("(", ")")
        edges = [sens[k + 1] for k in range(len(sens) - 1) if _SENS.match(sens[k])]
        if len(edges) < 2:  # a plain clocked block (or @*)
            i = p.i
            continue
        start = p.i
        reset_targets, body_targets = set(), set()
        # The usual form: [begin] if (!rst) RESET else BODY [end]
        wrapped = p.peek() == "begin"
        if wrapped:
            p.next()
        ok = False
        if p.peek() == "if":
            p.next()
            cond = p.balanced("(", ")")
            reset_names = set(edges[1:])
            cond_names = [c for c in cond if re.match(r"[A-Za-z_]", c)]
            if len(cond_names) == 1 and cond_names[0] in reset_names:
                p.statement(reset_targets)
                if p.peek() == "else":
                    p.next()
                    p.statement(body_targets)
                ok = not wrapped or p.peek() == "end"
                if wrapped and ok:
                    p.next()
        if not ok:  # anything else: every register it assigns counts as not reset
            p.i = start
            reset_targets, body_targets = set(), set()
            p.statement(body_targets)
        for reg in sorted(body_targets - reset_targets):
            missing.append(reg)
            report(f"{name}: {reg}")
        i = p.i
    return sorted(set(missing))


_ASSERTION_BLOCK = re.compile(r"`ifdef CAPSGEN_ASSERTIONS\b.*?`endif", re.DOTALL)


def check_text(text, report):
    toks = tokenize(_ASSERTION_BLOCK.sub("", text))
    result = {}
    i = 0
    while i < len(toks):
        if toks[i] == "module":
            name = toks[i + 1]
            j = toks.index("endmodule", i)
            result[name] = check_module(name, toks[i:j], report)
            i = j + 1
        else:
            i += 1
    return result


def files_of(path):
    if os.path.isdir(path):
        flist = os.path.join(path, "files.f")
        if os.path.exists(flist):
            with open(flist) as f:
                names = [ln.strip() for ln in f if ln.strip() and not ln.startswith("//")]
            return [os.path.join(path, n) for n in names if n.endswith(".v")]
        return sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".v"))
    return [path]


def main(argv):
    expect, quiet, paths = 0, False, []
    k = 0
    while k < len(argv):
        if argv[k] == "--expect" and k + 1 < len(argv):
            expect = int(argv[k + 1])
            k += 2
        elif argv[k] == "--quiet":
            quiet = True
            k += 1
        elif argv[k].startswith("-"):
            print(__doc__.split("\n\n")[1], file=sys.stderr)
            return 2
        else:
            paths.append(argv[k])
            k += 1
    if not paths:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    total, modules = 0, 0
    report = (lambda s: None) if quiet else print
    for path in paths:
        for f in files_of(path):
            try:
                with open(f) as fh:
                    per_module = check_text(fh.read(), report)
            except (OSError, ParseError, ValueError, IndexError) as e:
                print(f"check_reset.py: {f}: {e}", file=sys.stderr)
                return 2
            for mod, regs in per_module.items():
                modules += 1
                if regs:
                    print(f"{mod}: {len(regs)} register(s) without reset value")
                total += len(regs)
    print(f"registers without reset value in async-reset blocks: {total} ({modules} modules)")
    return 0 if total == expect else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

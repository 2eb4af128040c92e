#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Structure checks of the production tree (the layout tier of make check).

  layout.py includes   module include rules: who may include whom
  layout.py sizes      no file over 1,000 lines, no function over 120 lines
  layout.py exports    every exported function has a caller outside its file
  layout.py members    no member prefix shared by two structs (rc_ of one struct only)
  layout.py arrows     prints the module arrows the includes make
  layout.py doc        docs/architecture.md shows exactly those arrows
  layout.py naming     docs/naming.md's member table names every member prefix

Each prints what breaks a rule and exits 1, or prints one summary line and
exits 0.  Production code is the five module folders plus tools/; tests are
not checked (they may reach into a module's internals on purpose).
"""
import os
import re
import sys

MODULES = ["chunking", "config", "backend-rdma", "frontend-tcp", "gateway"]
PROD = MODULES + ["tools"]
# Which modules a module may include headers of (its own always).  The
# arrows of docs/architecture.md: calls flow down, replies come back
# through ops tables, so no arrow points up.
ALLOWED = {
    "chunking": set(),
    "config": {"chunking"},
    "backend-rdma": {"chunking"},
    "gateway": {"chunking", "config", "backend-rdma"},
    "frontend-tcp": {"chunking", "config", "gateway"},
    "tools": {"chunking", "config", "gateway"},
}
# The composition root builds every module and wires their seams.
ROOTS = {"gateway/main.c", "gateway/worker.c"}
# A module's public header; any other header in the folder is private to it.
PUBLIC = {"chunking": None, "config": None, "backend-rdma": {"backend.h"},
          "frontend-tcp": {"frontend.h"}, "gateway": None}
MAX_FILE, MAX_FUNC = 1000, 120

top = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.chdir(top)


def sources(exts=(".c", ".h")):
    for d in PROD:
        for f in sorted(os.listdir(d)):
            if f.endswith(exts):
                yield os.path.join(d, f)


def header_home():
    home = {}
    for d in MODULES:
        for f in os.listdir(d):
            if f.endswith(".h"):
                home[f] = d
    return home


def include_edges():
    """(module, module it includes, file) for every include across modules."""
    home, edges = header_home(), set()
    for path in sources():
        mod = path.split("/")[0]
        for line in open(path, encoding="utf-8"):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and m.group(1) in home and home[m.group(1)] != mod:
                edges.add((mod, home[m.group(1)], path))
    return edges


def arrows_text():
    out = {}
    for a, b, p in include_edges():
        if p not in ROOTS:
            out.setdefault(a, set()).add(b)
    lines = []
    for mod in ["tools", "frontend-tcp", "gateway", "backend-rdma", "config", "chunking"]:
        dst = ", ".join(sorted(out.get(mod, set()))) or "(no other module)"
        lines.append(f"{mod:<13} --> {dst}")
    lines.append(f"{'gateway/main.c':<13} --> every module (it builds them and wires their seams)")
    lines.append(f"{'gateway/worker.c':<13} --> every module (each worker builds its own pool, gateway, transports, frontend)")
    return "\n".join(lines)


def check_doc():
    text = open("docs/architecture.md", encoding="utf-8").read()
    m = re.search(r"<!-- arrows: tests/layout/layout.py arrows -->\n```\n(.*?)\n```", text, re.S)
    want = arrows_text()
    if not m:
        return ["docs/architecture.md: no arrows block (<!-- arrows: tests/layout/layout.py arrows -->)"], ""
    if m.group(1).strip() != want.strip():
        return ["docs/architecture.md: the arrows block differs from the includes; now:", want], ""
    return [], "doc: docs/architecture.md shows the module arrows the includes make"


def check_includes():
    home, bad, edges = header_home(), [], set()
    for path in sources():
        mod = path.split("/")[0]
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m or m.group(1) not in home:
                continue
            hdr, dst = m.group(1), home[m.group(1)]
            if dst == mod:
                continue
            edges.add((mod, dst, path))
            if path in ROOTS:
                continue
            if dst not in ALLOWED.get(mod, set()):
                bad.append(f"{path}:{n}: {mod} must not include {dst}/{hdr}")
            elif PUBLIC.get(dst) and hdr not in PUBLIC[dst]:
                bad.append(f"{path}:{n}: {dst}/{hdr} is private to {dst}/")
    pairs = {(a, b) for a, b, p in edges if p not in ROOTS}
    for a, b in sorted(pairs):
        if (b, a) in pairs and a < b:
            bad.append(f"{a} and {b} include each other (one way only)")
    return bad, f"includes: {len(pairs)} module arrows, none upward, none both ways"


FUNC_END = re.compile(r"^}")


def functions(path):
    """(name, first line, last line) of each function defined at column 0."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, sig = [], None
    for i, line in enumerate(lines):
        if re.match(r"^[A-Za-z_].*\(", line) and not line.startswith(("#", "typedef")):
            sig = i
        one = re.match(r"^([A-Za-z_][^(;]*?)\b([A-Za-z_]\w*)\s*\(.*\)\s*\{.*\}\s*$", line)
        if one and not line.startswith(("#", "typedef")):
            out.append((one.group(2), i + 1, i + 1, line.startswith("static")))
            sig = None
            continue
        if line == "{" and sig is not None:
            m = re.search(r"([A-Za-z_]\w*)\s*\(", lines[sig])
            start, static = sig, lines[sig].startswith("static")
            for j in range(i + 1, len(lines)):
                if FUNC_END.match(lines[j]):
                    out.append((m.group(1) if m else "?", start + 1, j + 1, static))
                    break
            sig = None
        elif line and not line[0].isspace() and not re.match(r"^[A-Za-z_].*\(", line) \
                and not line.startswith(("{", "}", "/", "*", " ")) and sig is not None \
                and i > sig and line.endswith(";"):
            sig = None
    return out


def check_sizes():
    bad, nfun = [], 0
    for path in sources():
        n = sum(1 for _ in open(path, encoding="utf-8"))
        if n > MAX_FILE:
            bad.append(f"{path}: {n} lines (at most {MAX_FILE})")
        if path.endswith(".c"):
            for name, a, b, _ in functions(path):
                nfun += 1
                if b - a + 1 > MAX_FUNC:
                    bad.append(f"{path}:{a}: {name}() is {b - a + 1} lines (at most {MAX_FUNC})")
    return bad, f"sizes: {nfun} functions, none over {MAX_FUNC} lines, no file over {MAX_FILE}"


def check_exports():
    texts = {}
    # Users: any other file, tests included (a unit test of an internal piece
    # is a user; an export nobody calls is dead).
    for root in PROD + ["tests"]:
        for dp, _, fs in os.walk(root):
            for f in fs:
                if f.endswith((".c", ".h")):
                    p = os.path.join(dp, f)
                    texts[p] = open(p, encoding="utf-8", errors="replace").read()
    bad, n = [], 0
    for path in sources((".c",)):
        if path in ROOTS or path.startswith("tools/"):
            continue
        for name, a, _, static in functions(path):
            if static or name in ("main", "?"):
                continue
            n += 1
            word = re.compile(r"\b%s\b" % re.escape(name))
            # A module header's prototype is no use; its macros are, and so
            # is all of a test header (test harnesses hold code).
            users = [p for p, t in texts.items()
                     if p != path and word.search(macro_text(t) if p.endswith(".h") and
                                                  not p.startswith("tests/") else t)]
            if not users:
                bad.append(f"{path}:{a}: {name}() is exported but used nowhere else")
    return bad, f"exports: {n} exported functions, each used outside its file"


def struct_bodies(text):
    """(name, body without nested braces) of every `struct NAME {` in text."""
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
        i, depth = m.end(), 1
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1]
        while True:
            flat = re.sub(r"\{[^{}]*\}", " ", body)
            if flat == body:
                break
            body = flat
        yield m.group(1), body


def member_names(body):
    names = []
    for decl in body.split(";"):
        decl = re.sub(r"\[[^\]]*\]", "", decl)
        decl = re.sub(r":\s*\d+\s*$", "", decl).strip()
        if not decl or decl.startswith("#"):
            continue
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)
        if fp:
            names.append(fp.group(1))
            continue
        for part in decl.split(","):
            words = re.findall(r"\w+", part)
            if words:
                names.append(words[-1])
    return names


def check_members():
    """A member's prefix (up to its first _) names its struct: one struct
    per prefix, so `x->rc_len` tells which struct x is."""
    owners = {}
    for path in sources():
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", open(path).read(), flags=re.S)
        for name, body in struct_bodies(text):
            for mem in member_names(body):
                if "_" in mem:
                    owners.setdefault(mem.split("_")[0] + "_", {}).setdefault(name, path)
    bad = [f"member prefix {pre} is shared by " + ", ".join(f"struct {s} ({p})" for s, p in sorted(o.items()))
           for pre, o in sorted(owners.items()) if len(o) > 1]
    return bad, f"members: {len(owners)} member prefixes, each of one struct"


# Members named after what they stand for, not by a prefix (a table of
# verbs functions).
UNPREFIXED = {"be_verbs"}


def check_naming():
    """docs/naming.md's member table names every member prefix, so a
    newcomer finds the struct of `x->nh_name` there in one step."""
    owners = {}
    for path in sources():
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", open(path).read(), flags=re.S)
        for name, body in struct_bodies(text):
            if name in UNPREFIXED:
                continue
            for mem in member_names(body):
                if "_" in mem:
                    owners.setdefault(mem.split("_")[0] + "_", (name, path))
    doc = open(os.path.join(top, "docs", "naming.md")).read()
    start = doc.find("## Member prefixes")
    table = doc[start:doc.find("\n## ", start + 1)] if start >= 0 else ""
    listed = set(re.findall(r"`([a-z0-9]+_)`", table))
    bad = [f"member prefix {pre} (struct {s}, {os.path.relpath(p, top)}) is not in docs/naming.md's member table"
           for pre, (s, p) in sorted(owners.items()) if pre not in listed]
    return bad, f"naming: {len(owners)} member prefixes, each in docs/naming.md"


def macro_text(text):
    """The macro bodies and static inline function bodies of a header: a
    prototype there is no use, code there is."""
    out, cont, depth, pending = [], False, 0, False
    for line in text.split("\n"):
        if cont or re.match(r"\s*#\s*define", line):
            out.append(line)
        cont = line.endswith("\\")
        if re.match(r"static inline\b", line) and not line.rstrip().endswith(";"):
            pending = True
        if pending or depth:
            opens, closes = line.count("{"), line.count("}")
            if depth or opens:
                out.append(line)
            depth += opens - closes
            if opens:
                pending = False
    return "\n".join(out)


CHECKS = {"includes": check_includes, "sizes": check_sizes, "exports": check_exports,
          "doc": check_doc, "members": check_members, "naming": check_naming}

if __name__ == "__main__":
    if sys.argv[1:] == ["arrows"]:
        print(arrows_text())
        sys.exit(0)
    if len(sys.argv) != 2 or sys.argv[1] not in CHECKS:
        sys.exit("usage: layout.py " + "|".join(list(CHECKS) + ["arrows"]))
    problems, summary = CHECKS[sys.argv[1]]()
    for p in problems:
        print(p)
    if problems:
        print(f"{sys.argv[1]}: {len(problems)} problems")
        sys.exit(1)
    print(summary)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The table of contents of docs/operations.md, made from its headings.

  docs_toc.py check   the table between the toc markers is the one the
                      headings make now (the layout tier of make check)
  docs_toc.py write   write it there (after editing headings)

Headings of level 2 and 3 outside fenced code blocks, linked with GitHub's
anchors (lowercase; punctuation but '-' and '_' dropped; blanks as '-').
"""
import os
import re
import sys

top = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.chdir(top)
DOC = "docs/operations.md"
BEGIN = "<!-- toc: made by tests/layout/docs_toc.py write -->"
END = "<!-- /toc -->"


def anchor(title, seen):
    a = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
    n = seen.get(a, 0)
    seen[a] = n + 1
    return a if n == 0 else f"{a}-{n}"


def toc(text):
    lines, seen, fence = [], {}, False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"^(#{2,3}) (.*)$", line)
        if m:
            title = m.group(2).strip()
            indent = "  " if len(m.group(1)) == 3 else ""
            lines.append(f"{indent}- [{title}](#{anchor(title.replace('`', ''), seen)})")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("check", "write"):
        sys.exit(__doc__)
    text = open(DOC, encoding="utf-8").read()
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        print(f"{DOC}: no table of contents ('{BEGIN}' ... '{END}')")
        return 1
    want = f"{BEGIN}\n{toc(text)}\n{END}"
    have = text[i:j + len(END)]
    if sys.argv[1] == "write":
        open(DOC, "w", encoding="utf-8").write(text[:i] + want + text[j + len(END):])
        print(f"toc: {DOC} written")
        return 0
    if have != want:
        print(f"{DOC}: the table of contents is not the headings' (tests/layout/docs_toc.py write)")
        return 1
    print(f"toc: {DOC}'s table of contents lists its {want.count('](#')} headings")
    return 0


if __name__ == "__main__":
    sys.exit(main())

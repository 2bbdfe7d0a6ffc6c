#!/usr/bin/env python3
"""Runs scdoc on a page and drops the paragraph macros it emits where roff has no paragraph.

    scdoc_tidy.py SCDOC INPUT.scd OUTPUT

scdoc writes ".P" around every section heading and before every ".RE"; mandoc -T lint warns
about each ("PP empty", "PP after SH"). Renderers skip those next to headings, so they go; the
one before ".RE" makes the blank line after an indented item, so it moves after the ".RE".
The rendered page stays the same and the lint is clean (tests/man_test.py checks both).
"""
import subprocess
import sys

# A ".P" is redundant next to these: right after a heading, or right before anything that
# starts a new block or ends an indented one.
NO_PARAGRAPH_AFTER = (".SH", ".SS", ".TH", ".P", ".PP", ".RS")
NO_PARAGRAPH_BEFORE = (".SH", ".SS", ".P", ".PP")


def macro(line):
    return line.split(" ", 1)[0] if line.startswith(".") else ""


def tidy(lines):
    lines = list(lines)
    for i in range(len(lines) - 1):
        if macro(lines[i]) == ".P" and macro(lines[i + 1]) == ".RE":
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
    out = []
    for i, line in enumerate(lines):
        if macro(line) == ".P":
            before = next((macro(l) for l in reversed(out) if not l.startswith('.\\"')), "")
            after = macro(lines[i + 1]) if i + 1 < len(lines) else ".SH"
            if before in NO_PARAGRAPH_AFTER or after in NO_PARAGRAPH_BEFORE:
                continue
        out.append(line)
    return out


def main():
    scdoc, source, output = sys.argv[1:4]
    with open(source, "rb") as page:
        roff = subprocess.run([scdoc], stdin=page, capture_output=True, check=False)
    if roff.returncode != 0:
        sys.stderr.write(roff.stderr.decode(errors="replace"))
        return roff.returncode
    lines = roff.stdout.decode().split("\n")
    with open(output, "w") as out:
        out.write("\n".join(tidy(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Man pages against the binaries (DESIGN.md §8: every user-facing behaviour is in a man page).

For each binary, every flag its --help (and, for stackie, every `stackie help VERB`) prints
appears in its man page; every flag an item of the page's OPTIONS or COMMANDS section defines
appears in that help text; and every built page is clean under `mandoc -T lint -W warning`.
Prints one "ok"/"FAIL" line per check; exits 1 on a failure.
"""
import os
import re
import shutil
import subprocess
import sys

SOURCE = os.environ.get("STACKIE_SOURCE_ROOT", ".")
BUILD = os.environ.get("STACKIE_BUILD_ROOT", "build")

# A flag: a dash or two and a letter, not inside a word ("first-party") or "--" alone.
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)")

failures = 0


def report(ok, name, detail=""):
    global failures
    print(("ok - " if ok else "FAIL - ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures += 1


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=False).stdout


def help_text(binary):
    """The help of a binary ("stackie help VERB" for one verb); for stackie also every verb's."""
    if binary.startswith("stackie help "):
        return run(os.path.join(BUILD, "src", "stackie"), "help", binary.split()[-1])
    path = os.path.join(BUILD, "src", binary)
    text = run(path, "--help")
    if binary == "stackie":
        verbs = re.findall(r"^  ([a-z][a-z-]*)  ", text, re.M)
        report(len(verbs) > 5, "stackie --help lists its verbs", str(verbs))
        for verb in verbs:
            if verb != "help":
                text += run(path, "help", verb)
    return text


def sections(scd):
    """{SECTION NAME: text} of an scdoc source."""
    out, name = {}, ""
    for line in scd.splitlines():
        heading = re.match(r"^# (.+)$", line)
        if heading:
            name = heading.group(1).strip()
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return out


def defined_flags(scd):
    """Flags on the term lines (not the tab-indented descriptions) of OPTIONS and COMMANDS."""
    flags = set()
    for name, text in sections(scd).items():
        if name not in ("OPTIONS", "COMMANDS"):
            continue
        for line in text.splitlines():
            if line and not line.startswith("\t"):
                flags.update(FLAG.findall(line.replace("*", " ").replace("_", " ")))
    return flags


def page_flags(scd):
    return set(FLAG.findall(scd.replace("*", " ").replace("_", " ")))


PAGES = {  # page -> the binaries whose help it documents
    "stackie.1": ["stackie"],
    "stackied.8": ["stackied"],
    "stackie-lockbox.1": ["stackie-lockbox"],
    "stackie-validate.1": ["stackie help validate"],
}


def main():
    for page, binaries in PAGES.items():
        with open(os.path.join(SOURCE, "man", page + ".scd")) as f:
            scd = f.read()
        helps = "".join(help_text(b) for b in binaries)
        in_help = set(FLAG.findall(helps))
        report(len(in_help) > 0, f"{page}: its binaries print flags", helps[:200])
        missing = sorted(in_help - page_flags(scd))
        report(not missing, f"{page}: every flag of --help is in the page", " ".join(missing))
        defined = defined_flags(scd)
        report(len(defined) > 0, f"{page}: OPTIONS/COMMANDS define flags")
        undocumented = sorted(defined - in_help)
        report(not undocumented, f"{page}: every flag the page defines is in --help",
               " ".join(undocumented))

    mandoc = shutil.which("mandoc")
    pages = sorted(p for p in os.listdir(os.path.join(BUILD, "man")) if re.search(r"\.[1-8]$", p))
    report(len(pages) >= 7, "the man pages are built", " ".join(pages))
    if not mandoc:
        print("ok - # SKIP mandoc -T lint: mandoc is not installed (Debian: mandoc)")
    for page in pages:
        if not mandoc:
            break
        lint = subprocess.run([mandoc, "-T", "lint", "-W", "warning",
                               os.path.join(BUILD, "man", page)],
                              capture_output=True, text=True, check=False)
        messages = (lint.stdout + lint.stderr).strip()
        report(lint.returncode == 0 and not messages, f"mandoc -T lint {page}", messages)
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

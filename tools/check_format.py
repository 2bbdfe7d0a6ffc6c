#!/usr/bin/env python3
"""Checks that every C++ file of src/ and tests/ is as clang-format (.clang-format) writes it.

    check_format.py SOURCE_ROOT [CLANG_FORMAT]

Prints clang-format's own report (FILE:LINE:COLUMN per difference) and exits 1 when a file
differs. Fix with: clang-format -i FILE (the whole tree: tools/check_format.py --fix ROOT).
"""
import os
import subprocess
import sys


def cxx_files(root):
    for top in ("src", "tests"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith((".cc", ".h")):
                    yield os.path.join(folder, name)


def main():
    args = sys.argv[1:]
    fix = bool(args) and args[0] == "--fix"
    if fix:
        args = args[1:]
    root = args[0] if args else "."
    clang_format = args[1] if len(args) > 1 else "clang-format"
    files = list(cxx_files(root))
    mode = ["-i"] if fix else ["--dry-run", "--Werror"]
    failed = False
    for start in range(0, len(files), 100):  # keep each command line short
        run = subprocess.run([clang_format, "--style=file", *mode, *files[start:start + 100]],
                             cwd=root)
        failed = failed or run.returncode != 0
    print(f"check_format: {len(files)} files, {'some differ' if failed else 'all formatted'}",
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

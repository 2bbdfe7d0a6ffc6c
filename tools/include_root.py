#!/usr/bin/env python3
"""Makes a module's include root: a directory in the build tree that holds one link per module
the module may use (docs/architecture.md, "Modules and their rules").

    include_root.py ROOT SRC_DIR MODULE...

ROOT/<module> becomes a symlink to SRC_DIR/<module>; nothing else stays in ROOT. Compiled with
-I ROOT, `#include "ipc/server.h"` from a module that may not use ipc finds no such file: the
dependency rules fail at compile time, not only at link time.
"""
import os
import sys


def main() -> int:
    root, src, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(root, exist_ok=True)
    for name in os.listdir(root):
        if name not in modules:
            os.unlink(os.path.join(root, name))
    for module in modules:
        target = os.path.join(src, module)
        if not os.path.isdir(target):
            print(f"include_root.py: no module directory {target}", file=sys.stderr)
            return 1
        link = os.path.join(root, module)
        if os.path.islink(link) and os.readlink(link) == target:
            continue
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
    return 0


if __name__ == "__main__":
    sys.exit(main())

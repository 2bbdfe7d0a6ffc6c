#!/usr/bin/env python3
"""Checks the module rules that a compiler cannot see (docs/architecture.md).

    check_layout.py SOURCE_ROOT

The include roots of src/meson.build make a forbidden `#include "ipc/server.h"` fail to compile.
This script checks the rest, and the include rules once more without a build:
- every project include in src/ names its module ("stack/loader.h"), never a bare name nor "../";
- each module includes only the modules src/meson.build's module_rules allow it;
- third-party headers stay at their single point of use, and never in a header;
- the lockbox's modules (base, policy, sandbox) do not include libuv.
Prints one line per violation as FILE:LINE: message and exits 1 when there is any.
"""
import os
import re
import sys

# Third-party headers and the only files that may include them (DESIGN.md §2: each is wrapped
# at its single point of use).
THIRD_PARTY = {
    "yaml.h": {"src/stack/yaml_node.cc"},
    "toml++/toml.h": {"src/stack/settings.cc"},
    "seccomp.h": {"src/sandbox/seccomp_gen.cc"},
    "cjson/cJSON.h": {"src/base/json.cc"},  # base/json.h is the one JSON module
    "http_parser.h": {"src/api/http_server.cc"},  # the HTTP API's one parser (issue 21)
}
LEAN_MODULES = {"base", "policy", "sandbox"}  # linked into stackie-lockbox: no libuv
LEAN_EXCEPTIONS = {"src/base/uv_handle.h"}  # header-only, for the modules that run a loop
GENERATED = {"seccomp_filter_bpf.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def module_rules(root):
    text = open(os.path.join(root, "src", "meson.build"), encoding="utf-8").read()
    block = re.search(r"module_rules = \{(.*?)\n\}", text, re.S)
    rules = {}
    for name, allowed in re.findall(r"'([\w-]+)':\s*\[([^\]]*)\]", block.group(1)):
        rules[name] = set(re.findall(r"'([\w-]+)'", allowed))
    return rules


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    rules = module_rules(root)
    modules = {m for m in rules if not m.startswith("main-")}
    mains = {"stackie_main.cc": "main-stackie", "service_units_main.cc": "main-stackie",
             "stackied_main.cc": "main-stackied", "lockbox_main.cc": "main-lockbox",
             "lockbox_main_macos.cc": "main-lockbox",
             "lockbox_main_windows.cc": "main-lockbox",
             "lockbox_asan_options.cc": "main-lockbox"}
    problems = []
    src = os.path.join(root, "src")
    for folder, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".h", ".cc", ".cc.in")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            parts = os.path.relpath(path, src).split(os.sep)
            if len(parts) == 1:
                owner = mains.get(name)
                if owner is None:
                    problems.append(f"{rel}:1: a file directly in src/ must be a main "
                                    "(add it to a module folder or to check_layout.py's mains)")
                    continue
            else:
                owner = parts[0]
                if owner not in modules:
                    problems.append(f"{rel}:1: folder '{owner}' is not a module of "
                                    "src/meson.build's module_rules")
                    continue
            allowed = rules[owner]
            for number, line in enumerate(open(path, encoding="utf-8"), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                kind, header = match.groups()
                where = f"{rel}:{number}"
                if kind == "<":
                    users = THIRD_PARTY.get(header)
                    if users is not None and rel not in users:
                        problems.append(f"{where}: <{header}> may only be included by "
                                        + ", ".join(sorted(users)))
                    if header == "uv.h" and owner in LEAN_MODULES and rel not in LEAN_EXCEPTIONS:
                        problems.append(f"{where}: module '{owner}' is linked into the lockbox "
                                        "and must not use libuv")
                    continue
                if header in GENERATED:
                    continue
                if ".." in header.split("/"):
                    problems.append(f'{where}: "{header}": no "../" includes; name the module')
                    continue
                first = header.split("/")[0]
                if "/" not in header or first not in modules:
                    problems.append(f'{where}: "{header}": project includes name their module '
                                    '("stack/loader.h")')
                elif first not in allowed:
                    problems.append(f"{where}: module '{owner}' may not include '{first}' "
                                    f"(allowed: {', '.join(sorted(allowed))})")
    for problem in problems:
        print(problem)
    print(f"check_layout: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

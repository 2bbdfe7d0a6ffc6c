#!/usr/bin/env bash
# Cross-compiles the Windows backend with mingw-w64 and runs its test program under Wine.
#   run-wine-test.sh SOURCE_ROOT WORK_DIR
# Exit 77 (meson: skipped) only when mingw-w64 or Wine is not installed. Every step is bounded:
# the Wine part (prefix creation + the test) takes well under two minutes.
set -euo pipefail
src=$1
work=$2
cxx=x86_64-w64-mingw32-g++-posix
if ! command -v "$cxx" >/dev/null; then
  echo "SKIP: $cxx not found (Debian: apt install g++-mingw-w64-x86-64-posix)"
  exit 77
fi
if ! command -v wine >/dev/null || ! command -v wineboot >/dev/null; then
  echo "SKIP: wine not found (Debian: apt install wine wine64)"
  exit 77
fi

mkdir -p "$work"
build="$work/build"
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" "$src/tests/windows/cross-project" \
    --cross-file "$src/cross/mingw-w64-x86_64.txt" -Dwerror=true >"$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; exit 1; }
else
  meson setup "$build" "$src/tests/windows/cross-project" \
    --cross-file "$src/cross/mingw-w64-x86_64.txt" -Dwerror=true >"$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; exit 1; }
fi
timeout 300 ninja -C "$build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

# A private prefix in the work dir, owned by whoever runs the test (CI: stackie-test). No
# Mono/Gecko installers, no debug chatter, no display needed.
export WINEPREFIX="$work/wineprefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="
export HOME="${HOME:-$work}"
[ -d "$HOME" ] && [ -w "$HOME" ] || export HOME="$work"
unset DISPLAY WAYLAND_DISPLAY
stop_wineserver() { wineserver -k >/dev/null 2>&1 || true; }
trap stop_wineserver EXIT

start=$(date +%s)
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  if ! timeout 90 wineboot -i >"$work/wineboot.log" 2>&1; then
    echo "wineboot -i failed or took over 90 s; its log:"
    tail -n 40 "$work/wineboot.log"
    exit 1
  fi
fi
echo "wine prefix ready in $(($(date +%s) - start)) s ($(wine --version 2>/dev/null))"
rc=0
timeout 60 wine "$build/stackie-wine-test.exe" || rc=$?
echo "wine step took $(($(date +%s) - start)) s"
exit $rc

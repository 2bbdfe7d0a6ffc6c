#!/usr/bin/env bash
# Runs one Windows test under Wine in a WINEPREFIX of its own.
#   wine-run.sh NAME PROGRAM [ARGS...]
# PROGRAM is a .exe (run with wine) or a script (run as is, with WINEPREFIX and friends set: the
# end-to-end tests drive several .exe files). The prefix is $STACKIE_WINE_WORK/NAME/prefix, made
# once with `wineboot -i` (no Mono/Gecko, no desktop entries, no display) and reused by later
# runs of the same test; its wineserver is stopped on exit, so nothing of the test outlives it.
# Exit 77 (meson: skipped) only when Wine is not installed.
set -euo pipefail
name=$1
shift
if ! command -v wine >/dev/null || ! command -v wineboot >/dev/null; then
  echo "SKIP: wine not found (Debian: apt install wine wine64)"
  exit 77
fi
work=${STACKIE_WINE_WORK:?}/$name
mkdir -p "$work"
export WINEPREFIX="$work/prefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
[ -n "${HOME:-}" ] && [ -d "$HOME" ] && [ -w "$HOME" ] || export HOME="$work"
unset DISPLAY WAYLAND_DISPLAY
stop_wineserver() { wineserver -k >/dev/null 2>&1 || true; }
trap stop_wineserver EXIT

start=$(date +%s)
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  if ! timeout 120 wineboot -i >"$work/wineboot.log" 2>&1; then
    echo "wineboot -i failed or took over 120 s; its log:"
    tail -n 40 "$work/wineboot.log"
    exit 1
  fi
  # wineboot leaves services starting in the background; a test run on a prefix still
  # settling is slow enough to miss its waits. Stop them all and start clean.
  wineserver -k >/dev/null 2>&1 || true
  wineserver -w >/dev/null 2>&1 || true
fi
echo "wine prefix ready in $(($(date +%s) - start)) s ($(wine --version 2>/dev/null))"
# Z: is the host's / in every Wine prefix: an argument naming a host .exe is passed as a
# Windows path, which Windows programs can hand to CreateProcess.
windows_path() { local p; p=$(realpath "$1"); p=${p//\//\\}; printf 'Z:%s' "$p"; }
rc=0
case "$1" in
  *.exe)
    args=("$1")
    shift
    for arg in "$@"; do
      case "$arg" in *.exe) args+=("$(windows_path "$arg")") ;; *) args+=("$arg") ;; esac
    done
    timeout 300 wine "${args[@]}" || rc=$? ;;
  *) "$@" || rc=$? ;;
esac
echo "$name took $(($(date +%s) - start)) s"
exit $rc

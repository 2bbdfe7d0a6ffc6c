#!/usr/bin/env bash
# Plants for the Wine test of the daemon's own files (state file, block logs): a Unix symlink
# where a state file and a log file belong, to a file of the user's, then runs the test.
#   storage_files_plants.sh TEST.exe [GTEST_ARGS...]
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/home" "$dir/logs" "$dir/outside"
printf 'the-users-secret\n' > "$dir/outside/secret.txt"
ln -s ../outside/secret.txt "$dir/home/planted.json"
ln -s ../outside/secret.txt "$dir/logs/stderr.log"
exe=$1
shift
timeout 120 wine "$exe" "Z:$dir" "$@"

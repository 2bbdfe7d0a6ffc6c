#!/usr/bin/env bash
# Plants what a first-party block could leave in its writable project for the backend's grant
# test: a read-only path swapped for a link to a folder of the user's, and a directory on the
# way swapped for one. Unix symlinks made here: Wine 8 makes no junctions, and shows these to
# Windows programs as the folders they point to, which is what a junction does on Windows.
#   grant_plants.sh TEST.exe
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/project/docs" "$dir/outside/secrets"
printf 'the-users-secret\n' > "$dir/outside/secrets/key.txt"
ln -s ../outside/secrets "$dir/project/planted"
ln -s ../outside "$dir/project/via"
timeout 120 wine "$1" --plants "Z:$dir"

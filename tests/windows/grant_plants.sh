#!/usr/bin/env bash
# Plants what a first-party block could leave in its writable project for the backend's grant
# test: a read-only path swapped for a link to a folder of the user's, a directory on the way
# swapped for one, and a file swapped for a hard link to one of the user's files. The links are
# Unix symlinks made here: Wine 8 makes no junctions, and shows these to Windows programs as
# the folders they point to, which is what a junction does on Windows.
#   grant_plants.sh TEST.exe
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/project/docs" "$dir/outside/secrets"
printf 'the-users-secret\n' > "$dir/outside/secrets/key.txt"
ln -s ../outside/secrets "$dir/project/planted"
ln -s ../outside "$dir/project/via"
# A read-only file swapped for a hard link to a file of the user's (a DACL is the file's).
ln "$dir/outside/secrets/key.txt" "$dir/project/stack.yml"
printf 'plain\n' > "$dir/project/notes.txt"
timeout 120 wine "$1" --plants "Z:$dir"

#!/usr/bin/env bash
# Plants what a hostile block could leave in its storage for safe_open's Wine test: Unix symlinks
# made here (Wine 8's CreateSymbolicLinkW makes none; Wine shows these to Windows programs as
# the files they point to), then runs the test on them. The test itself tries the Windows
# plants (a symlink, a junction) and says when Wine cannot make them.
#   safe_open_plants.sh TEST.exe [GTEST_ARGS...]
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/storage/sub" "$dir/outside/dir"
printf 'the-users-secret\n' > "$dir/outside/secret.txt"
printf 'keep me\n' > "$dir/outside/dir/keep.txt"
ln -s ../outside/dir "$dir/storage/linkdir"
ln -s ../../outside/dir "$dir/storage/sub/linkdir"
ln -s ../outside/secret.txt "$dir/storage/linkfile"
ln -s ../outside/created.txt "$dir/storage/dangling"
exe=$1
shift
# Files others may read (WineSafeOpen.PrivateFileRefusedWhenOthersMayReadIt: Wine shows the
# mode as the DACL), whatever the caller's umask.
umask 022
timeout 120 wine "$exe" "Z:$dir" "$@"

#!/usr/bin/env bash
# Plants what a hostile block could leave in a project for the env-file reader's Wine test:
# Unix symlinks made here (Wine's CreateSymbolicLinkW makes none), then runs the test on them.
#   env_file_plants.sh TEST.exe
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/project/conf" "$dir/project/dir.env" "$dir/outside"
printf 'MODE=plain\n' > "$dir/project/conf/app.env"
printf 'TOKEN=the-users-secret\n' > "$dir/outside/secret.env"
ln -s ../outside "$dir/project/linked"
ln -s ../outside/secret.env "$dir/project/file.env"
timeout 120 wine "$1" "Z:$dir"

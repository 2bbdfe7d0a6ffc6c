#!/bin/sh
# One bounded libFuzzer run: run-fuzz.sh TARGET SEED_DIR WORK_DIR SECONDS
# New inputs go to WORK_DIR/corpus (the committed seeds stay untouched); a crash leaves its
# input in WORK_DIR/crash-* and fails the test: fix the bug, then add the input to SEED_DIR.
set -eu
target=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work/corpus"
# -rss_limit_mb: the targets parse bounded inputs; a run growing past this is a bug.
exec "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -max_len=8192 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds"

#!/bin/sh
# bench/ still builds and runs (issue 25: CI checks that, it does not time anything): each
# benchmark once at a tiny size against this build, its exit status and the line that carries
# its figure. A peer that is not installed (bwrap, supervisord, s6-log) skips its benchmark.
. "$(dirname "$0")/lib.sh"
bench=$STACKIE_SOURCE_ROOT/bench
build=$STACKIE_BUILD_ROOT
export TMPDIR=${TMPDIR:-/tmp}

# run_bench NAME PATTERN PEER... -- ARGS...: bench/NAME BUILD ARGS, then PATTERN in its output.
run_bench() {
  name=$1 pattern=$2
  shift 2
  while [ "$1" != "--" ]; do
    command -v "$1" >/dev/null 2>&1 || { skip "bench/$name: $1 is not installed"; return; }
    shift
  done
  shift
  out=$(timeout 300 "$bench/$name" "$build" "$@" 2>&1)
  status=$?
  if [ "$status" -ne 0 ]; then
    bad "bench/$name $*: exit $status: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
    return
  fi
  contains "bench/$name $* prints its figures" "$out" "$pattern"
}

run_bench spawn 'ratio [0-9.]*x (n=5)' bwrap -- 5
run_bench up '^1 *stackie' supervisord -- 1 1
run_bench logs '^stackie *1 *stuck follower *[0-9.]' supervisord s6-log -- 1 1
run_bench memory 'stackie-lockbox processes *Pss' supervisord -- 1 1
run_bench scale 'left: processes *0 *0' supervisord -- 3
done_testing

# Sourced by the bench scripts: installs a missing peer (as root, with apt-get), runs the script
# again as the unprivileged user stackie-test (sandboxes must work without privilege, and the
# peers run as the same user), builds the C helpers and makes a temporary directory.
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# bench_need_peer COMMAND PACKAGE
bench_need_peer() {
  command -v "$1" >/dev/null && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$(basename "$0"): $1 missing (as root: apt-get install $2)" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >&2
}

# bench_as_user SCRIPT ARGS...: as root, exec SCRIPT again as stackie-test with a plain
# environment (no root PATH entries it cannot read, no XDG_RUNTIME_DIR of another user).
bench_as_user() {
  [ "$(id -u)" -eq 0 ] || return 0
  exec runuser -u stackie-test -- env -u XDG_RUNTIME_DIR PATH=/usr/local/bin:/usr/bin:/bin \
    HOME=/tmp "$@"
}

# bench_setup BUILD_DIR: sets $build, $bench_tmp (removed on exit) and builds the helpers
# into $bench_tmp/bin.
bench_setup() {
  build=$(cd "${1:-$bench_dir/../build}" && pwd)
  [ -x "$build/src/stackie" ] && [ -x "$build/src/stackied" ] ||
    { echo "$(basename "$0"): no stackie build in $build (ninja -C build)" >&2; exit 1; }
  bench_tmp=$(mktemp -d "${TMPDIR:-/tmp}/stackie-bench-XXXXXX")
  chmod 755 "$bench_tmp"
  trap 'rm -rf "$bench_tmp"' EXIT
  mkdir -p "$bench_tmp/bin"
  for helper in listener spew logfloor; do
    cc -O2 -o "$bench_tmp/bin/bench-$helper" "$bench_dir/$helper.c"
  done
}

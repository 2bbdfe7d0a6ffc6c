#!/bin/sh
# End-to-end: `meson install --destdir` gives a sane tree, and that tree works where it is.
# The staged binaries' configured prefix does not exist, so this proves they find libexec
# (stackie-lockbox) and share (the block catalog) relative to themselves: `stackie up` of a
# sandboxed block from the installed bin/, with its own STACKIE_HOME, then down and daemon stop.
set -u
B=${STACKIE_BUILD_ROOT:?}
T=$(mktemp -d /tmp/stackie-install-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR STACKIE_LOCKBOX STACKIE_BLOCK_PATH
. "$(dirname "$0")/lib.sh"
S=
cleanup() {
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT

if ! command -v meson >/dev/null 2>&1; then
  skip_all "meson is not on PATH"
fi
meson install -C "$B" --destdir "$T/dest" --no-rebuild --quiet >"$T/install.log" 2>&1
check "meson install --destdir" 0 $?
bin=$(dirname "$(find "$T/dest" -path '*/bin/stackie' -type f | head -1)")
prefix=$(dirname "$bin")
S=$bin/stackie
[ -x "$S" ] && [ -x "$bin/stackied" ]; check "bin/stackie and bin/stackied" 0 $?
lockbox=$(find "$prefix" -path '*/stackie/stackie-lockbox' -type f)
[ -n "$lockbox" ] && [ -x "$lockbox" ] && [ ! -e "$bin/stackie-lockbox" ]
check "stackie-lockbox in libexec/stackie, not in bin" 0 $?
for f in share/stackie/blocks/stackie.postgres.yml share/stackie/blocks/stackie.redis.yml \
  share/man/man1/stackie.1 share/man/man8/stackied.8 share/man/man1/stackie-lockbox.1 \
  share/man/man5/stackie-stack.yml.5 share/man/man5/stackie-block.5 \
  share/man/man5/stackie-config.5 share/man/man7/stackie-ipc.7 \
  share/bash-completion/completions/stackie share/zsh/site-functions/_stackie \
  share/fish/vendor_completions.d/stackie.fish; do
  [ -f "$prefix/$f" ]; check "installed $f" 0 $?
done
if [ "$(uname -s)" = Linux ]; then
  unit=$prefix/lib/systemd/user/stackied.service
  [ -f "$unit" ] && [ -f "$prefix/lib/systemd/user/stackied.socket" ]
  check "installed lib/systemd/user/stackied.{service,socket}" 0 $?
  # The unit names the installed stackied of the configured prefix (DESTDIR stripped).
  grep -qx "ExecStart=${prefix#"$T/dest"}/bin/stackied --foreground" "$unit"
  check "the shipped unit runs PREFIX/bin/stackied" 0 $?
fi
# Nothing of the configured prefix may help: it must not exist for this test to mean anything.
configured=${prefix#"$T/dest"}
[ ! -e "$configured/libexec/stackie/stackie-lockbox" ] ||
  note "$configured/libexec/stackie/stackie-lockbox exists on this host"

mkdir -p "$T/app" && cd "$T/app" || exit 1
cat >stackie.yml <<'YML'
installed:
  blocks:
    web:
      command: "echo installed up; exec sleep 600"
      restart: "no"
YML
sandbox=yes
unshare --user --map-root-user true 2>/dev/null || sandbox=no
if [ $sandbox = yes ]; then
  out=$(timeout 60 "$S" up 2>&1); check "stackie up (sandboxed) from the installed tree" 0 $?
else
  skip "the sandboxed up: unprivileged user namespaces are unavailable here"
  out=$(timeout 60 "$S" up --no-sandbox 2>&1); check "stackie up --no-sandbox from the installed tree" 0 $?
fi
contains "up names the stack" "$out" "stack installed is up"
pid=$(cat "$STACKIE_HOME/stackied.pid" 2>/dev/null)
case $(readlink "/proc/$pid/exe") in
  "$bin/stackied") ok "the daemon started is the installed one" ;;
  *) bad "the daemon started is the installed one: $(readlink "/proc/$pid/exe")" ;;
esac
if [ $sandbox = yes ]; then
  launchers=
  for child in $(ps -o pid= --ppid "$pid"); do launchers="$launchers $(readlink "/proc/$child/exe")"; done
  contains "the block runs under the installed libexec lockbox" "$launchers" "$lockbox"
  out=$(timeout 20 "$S" exec web -- sh -c 'echo inside' 2>&1)
  contains "exec joins through the installed lockbox" "$out" "inside"
fi
out=$(timeout 10 "$S" ps 2>&1); contains "ps" "$out" "web.*running"
printf 'v:\n  blocks:\n    stackie.redis:\n' >"$T/catalog.yml"
if out=$("$S" validate -f "$T/catalog.yml" --json 2>&1); then
  contains "the catalog is found in the installed share/" "$out" \
    "\"definition\":.*\"$prefix/share/stackie/blocks/stackie.redis.yml\""
else
  contains "the catalog is found in the installed share/ (redis itself is absent)" "$out" \
    "redis"
fi
timeout 30 "$S" down >/dev/null 2>&1; check "stackie down" 0 $?
timeout 10 "$S" daemon stop >/dev/null 2>&1; check "stackie daemon stop" 0 $?
for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null; check "the daemon is gone" 1 $?
S=

done_testing

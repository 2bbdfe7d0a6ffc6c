#!/bin/bash
# The shell completions of share/completions: bash is sourced and asked for verbs, flags,
# daemon actions, and the block and stack names of a real daemon; zsh and fish files are
# syntax-checked when those shells are installed (they are optional).
set -u
B=${STACKIE_BUILD_ROOT:?}
SRC=${STACKIE_SOURCE_ROOT:?}
T=$(mktemp -d /tmp/stackie-completion-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
export PATH=$B/src:$PATH  # `stackie` as a user types it
. "$(dirname "$0")/lib.sh"
cleanup() {
  stop_daemon stackie 10
  rm -rf "$T"
}
trap cleanup EXIT

# complete WORDS...: what bash offers for the last word (may be empty) of "WORDS".
complete_line() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _stackie
  printf '%s\n' "${COMPREPLY[@]}"
}
offers() {  # offers NAME WANTED WORDS...
  local name=$1 wanted=$2
  shift 2
  local got
  got=$(complete_line "$@")
  if printf '%s\n' "$got" | grep -qx -- "$wanted"; then ok "$name"; else
    bad "$name: '$wanted' not in: $(echo $got)"; fi
}
lacks() {  # lacks NAME UNWANTED WORDS...
  local name=$1 unwanted=$2
  shift 2
  if complete_line "$@" | grep -qx -- "$unwanted"; then bad "$name: offers '$unwanted'"; else
    ok "$name"; fi
}

# shellcheck source=/dev/null
source "$SRC/share/completions/stackie.bash"
complete -p stackie 2>/dev/null | grep -q -- '-F _stackie'
if [ $? = 0 ]; then ok "sourcing registers _stackie for stackie"; else bad "no complete -F _stackie"; fi

offers "verbs: up" up stackie ""
offers "verbs: daemon" daemon stackie ""
offers "verbs by prefix" logs stackie lo
lacks "verbs by prefix only" up stackie lo
offers "global flags" --version stackie --v
offers "flags of up" --ephemeral stackie up --e
offers "flags of logs" --follow stackie logs --fo
offers "short flags of logs" -n stackie logs -
offers "daemon actions" install stackie daemon ""
offers "daemon install flags" --socket-activation stackie daemon install --s
offers "help takes verbs" exec stackie help e
offers "--color values" never stackie logs --color ""

cd "$T" && cat >stackie.yml <<'YML'
compl:
  blocks:
    database:
      command: "exec sleep 600"
      restart: "no"
YML
timeout 30 stackie up --no-sandbox >/dev/null 2>&1
if [ $? = 0 ]; then ok "a stack is up"; else bad "stackie up failed"; fi
offers "block names from ps --json" database stackie logs da
offers "STACK/BLOCK names" compl/database stackie status compl/
offers "exec takes a block" database stackie exec ""
offers "stack names for down" compl stackie down ""
lacks "no block names for down" database stackie down ""
offers "a command after exec's --" bash stackie exec database -- bas

if command -v zsh >/dev/null 2>&1; then
  if zsh -n "$SRC/share/completions/_stackie"; then ok "zsh -n _stackie"; else bad "zsh -n _stackie"; fi
else
  skip "zsh -n: zsh is not installed"
fi
if command -v fish >/dev/null 2>&1; then
  if fish -n "$SRC/share/completions/stackie.fish"; then ok "fish -n stackie.fish"; else
    bad "fish -n stackie.fish"; fi
  fish_offers() {  # fish_offers NAME WANTED LINE
    if fish -c "source '$SRC/share/completions/stackie.fish'; complete -C '$3'" |
      cut -f1 | grep -qx -- "$2"; then ok "fish: $1"; else bad "fish: $1: no '$2' for '$3'"; fi
  }
  fish_offers "verbs" daemon "stackie d"
  fish_offers "flags" --follow "stackie logs --fo"
  fish_offers "block names" database "stackie logs da"
  fish_offers "STACK/BLOCK names" compl/database "stackie status compl/"
  fish_offers "stack names" compl "stackie down "
else
  skip "fish -n: fish is not installed"
fi

done_testing

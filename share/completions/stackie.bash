# bash completion for stackie(1): verbs, flags, daemon actions, and the blocks and stacks that
# are up. Verbs and flags are read from `stackie --help` and `stackie help VERB`, blocks and
# stacks from `stackie ps --json`, so the completion follows the installed stackie.

# The verbs, one a line: the indented words of the Commands section of `stackie --help`.
_stackie_verbs() {
  "$1" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p'
}

# Every -x and --flag in the usage text of a verb.
_stackie_flags() {
  "$1" help "$2" 2>/dev/null | grep -oE '(^|[][ |,(])--?[A-Za-z][A-Za-z0-9-]*' |
    sed 's/^[][ |,(]//' | sort -u
}

# The actions of a verb that has them (daemon): indented lowercase words of its usage text.
_stackie_actions() {
  "$1" help "$2" 2>/dev/null | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p'
}

# Blocks as NAME and STACK/NAME, from each row's "stack" and "name" (stackie-ipc(7) PS_ROW).
_stackie_blocks() {
  "$1" ps --json 2>/dev/null | grep -oE '"stack":"[^"]*","name":"[^"]*"' |
    sed 's/^"stack":"\([^"]*\)","name":"\([^"]*\)"$/\2 \1\/\2/' | tr ' ' '\n' | sort -u
}

_stackie_stacks() {
  "$1" ps --json 2>/dev/null | grep -oE '"stack":"[^"]*"' | sed 's/^"stack":"\(.*\)"$/\1/' |
    sort -u
}

_stackie() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local stackie=${COMP_WORDS[0]} verb= verb_at=0 i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} != -* ]]; then
      verb=${COMP_WORDS[i]}
      verb_at=$i
      break
    fi
  done
  if [[ -z $verb ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W '--help --version' -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$(_stackie_verbs "$stackie")" -- "$cur"))
    fi
    return
  fi
  # exec BLOCK -- CMD: after "--" it is the block's command line.
  for ((i = verb_at + 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == -- ]]; then
      COMPREPLY=($(compgen -c -- "$cur"))
      return
    fi
  done
  case $prev in
    -f | --file)
      if [[ $verb != logs ]]; then  # logs -f is --follow
        COMPREPLY=($(compgen -f -- "$cur"))
        return
      fi
      ;;
    -p | --project)
      COMPREPLY=($(compgen -W "$(_stackie_stacks "$stackie")" -- "$cur"))
      return
      ;;
    --color)
      COMPREPLY=($(compgen -W 'auto always never' -- "$cur"))
      return
      ;;
    -n | --tail | --since) return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_stackie_flags "$stackie" "$verb")" -- "$cur"))
    return
  fi
  case $verb in
    help) COMPREPLY=($(compgen -W "$(_stackie_verbs "$stackie")" -- "$cur")) ;;
    daemon)
      if ((COMP_CWORD == verb_at + 1)); then
        COMPREPLY=($(compgen -W "$(_stackie_actions "$stackie" daemon)" -- "$cur"))
      fi
      ;;
    status | logs | stats | exec | restart | stop | start)
      COMPREPLY=($(compgen -W "$(_stackie_blocks "$stackie")" -- "$cur"))
      ;;
    ps | down | top | ui) COMPREPLY=($(compgen -W "$(_stackie_stacks "$stackie")" -- "$cur")) ;;
  esac
}

complete -F _stackie stackie

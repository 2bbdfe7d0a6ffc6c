# fish completion for stackie(1): verbs, flags, daemon actions, and the blocks and stacks that
# are up. Verbs and flags come from `stackie --help` and `stackie help VERB`, blocks and stacks
# from `stackie ps --json`, so the completion follows the installed stackie.

function __stackie_verbs
    stackie --help 2>/dev/null | string replace -rf '^  ([a-z][a-z-]*)  +(.*)$' '$1\t$2'
end

function __stackie_verb
    set -l words (commandline -opc)
    for word in $words[2..-1]
        if not string match -q -- '-*' $word
            echo $word
            return
        end
    end
end

function __stackie_flags
    set -l verb (__stackie_verb)
    test -n "$verb"; or return
    stackie help $verb 2>/dev/null | string match -ar -- '(?:^|[][ |,(])(--?[A-Za-z][A-Za-z0-9-]*)' |
        string replace -r '^[][ |,(]' '' | string match -r -- '^-.*' | sort -u
end

function __stackie_blocks
    for row in (stackie ps --json 2>/dev/null | string match -ar '"stack":"[^"]*","name":"[^"]*"')
        set -l parts (string replace -r '^"stack":"([^"]*)","name":"([^"]*)"$' '$1 $2' -- $row | string split ' ')
        echo $parts[2]
        echo $parts[1]/$parts[2]
    end | sort -u
end

function __stackie_stacks
    stackie ps --json 2>/dev/null | string match -ar '"stack":"[^"]*"' |
        string replace -r '^"stack":"(.*)"$' '$1' | sort -u
end

complete -c stackie -f
complete -c stackie -n __fish_use_subcommand -a '(__stackie_verbs)'
complete -c stackie -n '__fish_seen_subcommand_from help' -a '(__stackie_verbs)'
complete -c stackie -n '__fish_seen_subcommand_from daemon' -a 'start stop status install uninstall'
complete -c stackie -n '__fish_seen_subcommand_from status logs stats exec restart stop start' -a '(__stackie_blocks)'
complete -c stackie -n '__fish_seen_subcommand_from ps down top ui' -a '(__stackie_stacks)'
complete -c stackie -n '__fish_seen_subcommand_from up down validate convert' -s f -l file -r -F
complete -c stackie -n 'not __fish_use_subcommand; and string match -q -- "-*" (commandline -ct)' -a '(__stackie_flags)'

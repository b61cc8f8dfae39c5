# bash completion for cckey. Installed as
# $datadir/bash-completion/completions/cckey (loaded on demand), or source it.
# Commands are listed here (the tests check the list against `cckey --help`);
# each command's options come from its own --help, so they never drift.

_cckey_commands="key batch scan warm cache devices selftest help"

_cckey()
{
    local cur prev cmd i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -*) ;;
            *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_cckey_commands" -- "$cur"))
        fi
        return 0
    fi

    case $prev in
        --format) COMPREPLY=($(compgen -W "text json jsonl" -- "$cur")); return 0 ;;
        --backend|-b) COMPREPLY=($(compgen -W "auto cpu opencl cuda" -- "$cur")); return 0 ;;
        --language) COMPREPLY=($(compgen -W "opencl cuda hip metal" -- "$cur")); return 0 ;;
        --cache-dir|--output|-o|--source-file|-f|--options-file)
            COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
        --nvcc) COMPREPLY=($(compgen -W "none" -- "$cur") $(compgen -f -- "$cur")); return 0 ;;
    esac

    case $cmd in
        help) COMPREPLY=($(compgen -W "$_cckey_commands" -- "$cur")); return 0 ;;
        cache)
            if [[ $cur != -* ]] && [[ $COMP_CWORD -eq $((i + 1)) ]]; then
                COMPREPLY=($(compgen -W "stats list get put verify trim clear config export import" -- "$cur"))
                return 0
            fi ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}
complete -o filenames -F _cckey cckey

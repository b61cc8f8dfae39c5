#!/usr/bin/env bash
# What a packager and a user see: `cmake --install`, then three consumers
# (find_package, pkg-config, add_subdirectory) built and run, the man page
# read with man(1), the bash completion sourced and asked to complete, and
# the zsh completion parsed.
# usage: check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
step() { printf '== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

step "cmake --install"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
[ -x "$prefix/bin/cckey" ] || fail "no bin/cckey installed"
"$prefix/bin/cckey" --version | grep -q "key format 1" || fail "installed cckey --version"

step "consumer via find_package"
cmake -S "$src/tests/package/consumer" -B "$work/find_package" -DCMAKE_PREFIX_PATH="$prefix" > "$work/fp.log"
cmake --build "$work/find_package" >> "$work/fp.log"
"$work/find_package/consumer"
"$work/find_package/consumer_static"

step "consumer via pkg-config"
pc=$(find "$prefix" -name cckey.pc)
[ -n "$pc" ] || fail "no cckey.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
# Normalised paths: the prefix itself, no "..", no "//", as pkg-config
# prints them.
grep -q "^prefix=$prefix\$" "$pc" || fail "cckey.pc prefix is not $prefix: $(grep ^prefix= "$pc")"
for var in libdir includedir; do
  value=$(pkg-config --variable=$var cckey)
  case $value in *..*|*//*|*/) fail "$var not normalised: $value" ;; esac
  [ -d "$value" ] || fail "$var $value is not a folder"
done
[ "$(pkg-config --variable=includedir cckey)" = "$prefix/include" ] || fail "includedir"
[ -f "$(pkg-config --variable=libdir cckey)/libcckey.so" ] || fail "libdir holds no libcckey.so"
[ "$(pkg-config --modversion cckey)" = "$("$prefix/bin/cckey" --version | sed -n '1s/^cckey \([^ ]*\).*/\1/p')" ] ||
  fail "pkg-config version differs from cckey --version"
# shellcheck disable=SC2046
cc -Wall -Werror -o "$work/pc_consumer" "$src/tests/package/consumer/main.c" $(pkg-config --cflags --libs cckey) \
  -Wl,-rpath,"$(pkg-config --variable=libdir cckey)"
"$work/pc_consumer"

step "consumer via add_subdirectory (cckey's source tree as a subproject)"
# CUDA off only to keep nvcc out of this test's time; the subproject
# mechanics are the same. With pkg-config hidden from CMake, as on a machine
# that has only a C compiler and CMake: the library must still build (without
# remote caches), and link nothing beyond libc, pthread and libdl.
cmake -S "$src/tests/package/consumer" -B "$work/subdir" -DCCKEY_SOURCE_DIR="$src" -DCCKEY_WITH_CUDA=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON > "$work/sub.log"
grep -q "jansson" "$work/sub.log" && fail "the library alone looked for jansson"
grep -q "building without Redis" "$work/sub.log" || fail "no word that Redis remotes are left out"
cmake --build "$work/subdir" -j2 >> "$work/sub.log"
[ -e "$work/subdir/cckey/cckey" ] && fail "a subproject built the CLI"
needed=$(readelf -d "$work/subdir/cckey/libcckey.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
  case $lib in libc.so*|libpthread.so*|libdl.so*|libm.so*|ld-linux*) ;; *) fail "library-only build needs $lib" ;; esac
done
"$work/subdir/consumer" no-remotes
"$work/subdir/consumer_static" no-remotes

step "man cckey"
page=$(MANPATH="$prefix/share/man" MANWIDTH=80 man -P cat cckey 2> "$work/man.err") || fail "man cckey: $(cat "$work/man.err")"
grep -q "cckey - standardized compile-cache keys" <<< "$page" || fail "man page NAME"
for cmd in key batch scan warm cache devices selftest; do
  grep -qE "^ +$cmd\$" <<< "$page" || fail "man page has no section for $cmd"
done

step "bash completion"
comp=$prefix/share/bash-completion/completions/cckey
[ -f "$comp" ] || fail "no bash completion installed"
got=$(PATH="$prefix/bin:$PATH" bash --norc --noprofile -c '
  source "$1"
  COMP_WORDS=(cckey ba); COMP_CWORD=1; _cckey; echo "${COMPREPLY[*]}"
  COMP_WORDS=(cckey help sel); COMP_CWORD=2; _cckey; echo "${COMPREPLY[*]}"
  COMP_WORDS=(cckey batch --back); COMP_CWORD=2; _cckey; echo "${COMPREPLY[*]}"
  COMP_WORDS=(cckey warm --ch); COMP_CWORD=2; _cckey; echo "${COMPREPLY[*]}"
  echo "$_cckey_commands"' _ "$comp")
[ "$(sed -n 1p <<< "$got")" = "batch" ] || fail "completing 'cckey ba' gave '$(sed -n 1p <<< "$got")'"
[ "$(sed -n 2p <<< "$got")" = "selftest" ] || fail "completing 'cckey help sel' gave '$(sed -n 2p <<< "$got")'"
[ "$(sed -n 3p <<< "$got")" = "--backend" ] || fail "completing 'cckey batch --back' gave '$(sed -n 3p <<< "$got")'"
[ "$(sed -n 4p <<< "$got")" = "--check" ] || fail "completing 'cckey warm --ch' gave '$(sed -n 4p <<< "$got")'"
# The completion's command list is the CLI's.
cli_cmds=$("$prefix/bin/cckey" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }' | sort | tr '\n' ' ')
bash_cmds=$(sed -n 5p <<< "$got" | tr ' ' '\n' | grep -v '^help$' | sort | tr '\n' ' ')
[ "$cli_cmds" = "$bash_cmds" ] || fail "bash completion lists '$bash_cmds', cckey --help '$cli_cmds'"

step "zsh completion"
zcomp=$prefix/share/zsh/site-functions/_cckey
[ -f "$zcomp" ] || fail "no zsh completion installed"
if command -v zsh > /dev/null; then
  zsh -n "$zcomp" || fail "_cckey does not parse"
  zsh_cmds=$(grep -oE "^    '[a-z]+:" "$zcomp" | tr -d "': " | grep -v '^help$' | sort | tr '\n' ' ')
  [ "$cli_cmds" = "$zsh_cmds" ] || fail "zsh completion lists '$zsh_cmds', cckey --help '$cli_cmds'"
else
  echo "zsh not installed: parse check skipped"
fi
echo "install check: all passed"

#!/usr/bin/env bash
# libcurl and libarchive are opened at run time (host/remote/curl_api.c,
# host/store/archive_api.c), so that a process loading libcckey maps neither
# until it uses an HTTP remote or a tar bundle. Fails when libcckey links
# either, when a batch loads either (glibc's loader says what it
# initialises, LD_DEBUG=libs), or when an export or an HTTP remote does not
# load the one it needs and do its work with it.
# usage: check_lazy_libs.sh LIBCCKEY_SO CCKEY WORKDIR
set -euo pipefail
lib=$1 cckey=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
needed=$(readelf -d "$lib" | grep NEEDED) || fail "readelf found no NEEDED entries in $lib"
grep -q 'libc\.so' <<<"$needed" || fail "readelf output without libc: $needed"
! grep -E 'libcurl|libarchive' <<<"$needed" || fail "$lib links libcurl or libarchive"
inits() { grep -oE 'calling init: .*' "$1" | sed 's/.*\///' || true; }

printf '{"device":"d","name":"n","source":"s"}\n' >"$work/m.jsonl"
LD_DEBUG=libs "$cckey" batch -q "$work/m.jsonl" >"$work/key" 2>"$work/batch.log"
[ "$(wc -c <"$work/key")" -eq 132 ] || fail "batch wrote no key"
inits "$work/batch.log" | grep -q libcckey || fail "LD_DEBUG=libs shows no 'calling init' lines: the check proves nothing"
! inits "$work/batch.log" | grep -E 'libcurl|libarchive' || fail "a batch loaded libcurl or libarchive"

printf 'kernel binary\n' >"$work/bin"
"$cckey" cache put "$(cat "$work/key")" "$work/bin" --cache-dir "$work/store"
LD_DEBUG=libs "$cckey" cache export -o "$work/b.tar" --cache-dir "$work/store" 2>"$work/export.log"
inits "$work/export.log" | grep -q '^libarchive\.so' || fail "an export did not load libarchive"
[ "$(tar -tf "$work/b.tar" | wc -l)" -eq 1 ] || fail "the bundle does not hold the one entry"

LD_DEBUG=libs "$cckey" cache config remote add 'http://127.0.0.1:9/cache' --cache-dir "$work/store" 2>"$work/remote.log"
inits "$work/remote.log" | grep -q '^libcurl\.so' || fail "an HTTP remote's URL was checked without libcurl"
"$cckey" cache config remote --cache-dir "$work/store" | grep -q 'http://127.0.0.1:9/cache' ||
  fail "the HTTP remote was not added"
echo "libcckey links neither libcurl nor libarchive; a batch loads neither; an export and an HTTP remote load theirs"

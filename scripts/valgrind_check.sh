#!/usr/bin/env bash
# valgrind memcheck of one test program and every process it forks
# (Criterion runs each test in a child): fails when any of them reports an
# error, which Criterion alone would not notice.
# Usage: scripts/valgrind_check.sh PROGRAM [ARGS...]
set -euo pipefail
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
valgrind -q --trace-children=yes --error-exitcode=9 --log-file="$logs/vg.%p" "$@"
if grep -l "ERROR SUMMARY: [1-9]\|Conditional jump\|uninitialised\|Invalid read\|Invalid write" "$logs"/vg.* >/dev/null 2>&1; then
  cat "$logs"/vg.*
  echo "valgrind: errors in $*" >&2
  exit 1
fi
echo "valgrind: clean: $*"

#!/usr/bin/env bash
# Builds the OCaml binding against BUILD_DIR's libcckey.a (dune's build
# folder: BUILD_DIR/bindings/ocaml) and runs its tests. Exit 77 (a ctest
# skip) with a one-line reason when OCaml or dune is missing, unless
# CCKEY_REQUIRE_BINDINGS=1 (CI), which makes that a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run_tests.sh BUILD_DIR}" && pwd)
skip() {
  echo "SKIP: $*"
  [ "${CCKEY_REQUIRE_BINDINGS:-0}" = 1 ] && exit 1
  exit 77
}
command -v dune >/dev/null || skip "no dune (install ocaml-dune)"
command -v ocamlfind >/dev/null || skip "no ocamlfind (install ocaml-findlib)"
ocamlfind query threads >/dev/null 2>&1 || skip "no OCaml threads library (install ocaml-nox)"
export CCKEY_BUILD_DIR=$build
exec dune build --root "$here" --build-dir "$build/bindings/ocaml" --display quiet --force @runtest

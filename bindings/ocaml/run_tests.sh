#!/usr/bin/env bash
# Builds the OCaml binding against BUILD_DIR's libcckey.a (dune's build
# folder: BUILD_DIR/bindings/ocaml) and runs its tests. Exit 77 (a ctest
# skip) with a one-line reason when OCaml or dune is missing, unless
# CCKEY_REQUIRE_BINDINGS=1 (CI), which makes that a failure.
. "$(dirname "$0")/../test_common.sh"
command -v dune >/dev/null || skip "no dune (install ocaml-dune)"
command -v ocamlfind >/dev/null || skip "no ocamlfind (install ocaml-findlib)"
ocamlfind query threads >/dev/null 2>&1 || skip "no OCaml threads library (install ocaml-nox)"
export CCKEY_BUILD_DIR=$build
warm_spirv "$build/bindings/ocaml-spirv"
exec dune build --root "$here" --build-dir "$build/bindings/ocaml" --display quiet --force @runtest

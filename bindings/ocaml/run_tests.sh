#!/usr/bin/env bash
# Builds the OCaml binding with dune alone (dune's build folder:
# BUILD_DIR/bindings/ocaml; the C library from its own copy of the sources)
# and runs its tests. Exit 77 (a ctest
# skip) with a one-line reason when OCaml or dune is missing, unless
# CCKEY_REQUIRE_BINDINGS=1 (CI), which makes that a failure.
. "$(dirname "$0")/../test_common.sh"
command -v dune >/dev/null || skip "no dune (install ocaml-dune)"
command -v ocamlfind >/dev/null || skip "no ocamlfind (install ocaml-findlib)"
ocamlfind query threads >/dev/null 2>&1 || skip "no OCaml threads library (install ocaml-nox)"
warm_spirv "$build/bindings/ocaml-spirv"
# No CCKEY_* variable: dune builds the C library from the package's own copy
# of the sources (config/discover.ml), as `opam install` would.
no_cckey_vars=()
for v in $(compgen -e | grep '^CCKEY_' | grep -v '^CCKEY_TEST_' || true); do no_cckey_vars+=(-u "$v"); done
exec "$here/../remote_fixture.py" "$build/cckey" "$build/bindings/ocaml-remote" -- \
  env "${no_cckey_vars[@]}" dune build --root "$here" --build-dir "$build/bindings/ocaml" --display quiet --force @runtest

#!/usr/bin/env bash
# Packages the Python binding as a user gets it and tests that: `python -m
# build` makes an sdist and a wheel of bindings/python (scikit-build-core,
# from a tools venv BUILD_DIR/bindings/python-venv); the sdist is installed
# with plain pip into a fresh venv in a temporary folder, away from this
# repository and its CMake build, with no CCKEY_* variable set, so it builds
# the C library from its own copy of the sources; its own tests/ then run
# there (PyOpenCL from PyPI too, for the client test on PoCL), and mypy
# --strict checks them against the installed stubs. Exit
# 77 (a ctest skip) with a one-line reason when this Python cannot build
# extensions, unless CCKEY_REQUIRE_BINDINGS=1 (CI), which makes that a
# failure.
. "$(dirname "$0")/../test_common.sh"
# Any python3 will do (Debian's or a pyenv one): the extension is built with
# the same interpreter as the venv, against that interpreter's own headers.
py=${CCKEY_PYTHON:-python3}
command -v "$py" >/dev/null || skip "no $py on PATH"
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || skip "no Python.h for $("$py" -V 2>&1) in $inc (install python3-dev)"
"$py" -c 'import ensurepip, venv' 2>/dev/null || skip "$py cannot make a venv (install python3-venv)"
pip_q() { "$1/bin/python" -m pip install -q --disable-pip-version-check "${@:2}"; }

tools=$build/bindings/python-venv
if ! "$tools/bin/python" -c 'import build, scikit_build_core, pytest, mypy' 2>/dev/null; then
  rm -rf "$tools"
  "$py" -m venv "$tools"
  pip_q "$tools" build "scikit-build-core>=0.10" pytest mypy
fi
dist=$build/bindings/python-dist
rm -rf "$dist"
"$tools/bin/python" -m build -q --no-isolation --outdir "$dist" "$here" >/dev/null
sdist=$(ls "$dist"/cckey-*.tar.gz)
wheel=$(ls "$dist"/cckey-*.whl)
listing=$("$tools/bin/python" -m zipfile -l "$wheel")
[[ $listing =~ cckey/_cckey\.[^[:space:]]*\.so ]] || { echo "no extension in $wheel"; exit 1; }

away=$(mktemp -d "${TMPDIR:-/tmp}/cckey-py.XXXXXX")
trap 'rm -rf "$away"' EXIT
no_cckey_vars=()
for v in $(compgen -e | grep '^CCKEY_' || true); do no_cckey_vars+=(-u "$v"); done
"$py" -m venv "$away/venv"
(cd "$away" && env "${no_cckey_vars[@]}" "$away/venv/bin/python" -m pip install -q --disable-pip-version-check \
  "$sdist" pytest mypy pyopencl)
tar -xzf "$sdist" -C "$away"
warm_spirv "$build/bindings/python-spirv"
# The shared-cache tests start redis-server and nginx with the CLI tests'
# helpers, and write the remotes through the cckey command.
mkdir "$away/helpers"
cp "$here/../../tests/remote/servers.py" "$away/helpers/"
export CCKEY_TEST_SERVERS=$away/helpers CCKEY_TEST_CLI=$build/cckey
cd "$away"/cckey-*/
rm -rf src   # the tests import the installed package, never the sdist's copy
"$away/venv/bin/python" -m pytest -q -p no:cacheprovider tests
# The stubs as installed, against the tests that use every part of them.
"$away/venv/bin/python" -m mypy --strict --no-incremental tests

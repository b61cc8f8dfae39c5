#!/usr/bin/env bash
# Builds the Python binding against BUILD_DIR's libcckey.a into a venv
# (BUILD_DIR/bindings/python-venv) and runs its pytest suite. Exit 77 (a
# ctest skip) with a one-line reason when this Python cannot build
# extensions, unless CCKEY_REQUIRE_BINDINGS=1 (CI), which makes that a failure.
. "$(dirname "$0")/../test_common.sh"
# Any python3 will do (Debian's or a pyenv one): the extension is built with
# the same interpreter as the venv, against that interpreter's own headers.
py=${CCKEY_PYTHON:-python3}
command -v "$py" >/dev/null || skip "no $py on PATH"
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || skip "no Python.h for $("$py" -V 2>&1) in $inc (install python3-dev)"
"$py" -c 'import ensurepip, venv' 2>/dev/null || skip "$py cannot make a venv (install python3-venv)"

venv=$build/bindings/python-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pytest, setuptools, wheel' 2>/dev/null; then
  rm -rf "$venv"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check pytest "setuptools>=61" wheel
fi
# Build from a copy, so the source tree gets no build/ or .egg-info.
work=$build/bindings/python-src
rm -rf "$work"
mkdir -p "$work"
cp -r "$here/pyproject.toml" "$here/setup.py" "$here/README.md" "$here/src" "$here/ext" "$work/"
CCKEY_BUILD_DIR=$build "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --no-build-isolation --force-reinstall --no-deps "$work"
warm_spirv "$build/bindings/python-spirv"
cd "$here"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests

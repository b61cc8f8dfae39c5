# Sourced by the bindings' run_tests.sh: here (the binding's folder), build
# (the CMake build folder, the script's argument) and skip REASON, which
# exits 77 (a ctest skip) with a one-line reason, or fails when
# CCKEY_REQUIRE_BINDINGS=1 (CI, where every toolchain must be there).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run_tests.sh BUILD_DIR}" && pwd)
skip() {
  echo "SKIP: $*"
  [ "${CCKEY_REQUIRE_BINDINGS:-0}" = 1 ] && exit 1
  exit 77
}

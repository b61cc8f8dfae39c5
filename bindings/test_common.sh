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
# warm_spirv: has BUILD's cckey warm a GLSL shader for lavapipe into a fresh
# folder that CCKEY_TEST_SPIRV_DIR names for the binding's tests (see
# warm_spirv.sh); where no Vulkan device is here the folder says why and the
# test skips; any other failure fails the run.
warm_spirv() {
  export CCKEY_TEST_SPIRV_DIR=$1
  rm -rf "$CCKEY_TEST_SPIRV_DIR"
  local rc=0
  "$(dirname "${BASH_SOURCE[0]}")/warm_spirv.sh" "$build/cckey" "$CCKEY_TEST_SPIRV_DIR" || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 77 ] || { echo "warm_spirv.sh failed ($rc)"; exit 1; }
}

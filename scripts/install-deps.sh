#!/usr/bin/env bash
# Installs what cckey needs to build, test and benchmark on Debian/Ubuntu.
set -euo pipefail
packages=(
  build-essential cmake pkg-config clang libclang-rt-dev   # clang: libFuzzer targets (CI)
  libjansson-dev          # manifest parsing
  libsimdjson-dev         # bench: the manifest parser against simdjson (cckey_bench_parse)
  libcriterion-dev        # tests
  libssl-dev              # libcrypto: entry fingerprints and signatures (SHA-256, HMAC); MD5 test oracle
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo   # OpenCL backend, runs on PoCL
  python3                 # independent vector generator in tests/
  valgrind                # CI: memcheck of the MD5 lane manager
  gnuplot-nox             # benchmark plot
  graphviz                # docs/architecture.svg from docs/architecture.dot (dot)
  g++                     # tests: cckey.h compiled as C++
  help2man man-db         # the man page, built and read (tests: man cckey)
  bash-completion zsh     # tests: the completion scripts
  libhiredis-dev libcurl4-openssl-dev   # remote caches (Redis, HTTP) under the store
  libzstd-dev zstd        # compressed store entries (host/entry/compress.c); tests: zstd decodes them
  libarchive-dev tar      # bundles as tar archives (host/store/bundle_tar.c); tests: tar lists them
  redis-server redis-tools nginx        # real servers the remote-cache tests start (nginx: WebDAV PUT)
  slurm-wlm slurmctld slurmd munge     # tests: a real single-node Slurm (tests/remote/test_slurm.py)
  ocaml-nox ocaml-dune ocaml-findlib        # OCaml binding (bindings/ocaml)
  opam                                      # opam lint of bindings/ocaml/cckey.opam
  python3-dev python3-venv python3-pip      # Python binding (bindings/python; pytest comes from pip)
  mesa-vulkan-drivers libvulkan-dev         # Vulkan: lavapipe (a CPU driver) and the loader's headers (dlopen'ed)
  libshaderc-dev glslang-dev spirv-tools    # Vulkan: GLSL/HLSL -> SPIR-V (linked: cmake/cckey_vulkan.cmake); spirv-val
  vulkan-tools                              # tests: vulkaninfo, the oracle for device identities
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is already installed"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Cross-builds rnnsearch for arm64 (aarch64) Linux on an amd64 Debian 12 machine and runs the
# test suite under qemu-user: the check that nothing x86-only is left outside code guarded for
# x86 (issue 27). Installs what it needs from Debian's packages (as root, or with sudo):
# g++-aarch64-linux-gnu, qemu-user, and the arm64 -dev packages next to the amd64 ones
# (dpkg --add-architecture arm64). Two arm64 packages cannot be installed next to their amd64
# build on Debian 12, so they are unpacked into BUILD_DIR/arm64-deps instead (dpkg -x), where
# the toolchain file (cmake/aarch64-linux-gnu.cmake) looks first:
#   libsentencepiece0, libsentencepiece-dev  not Multi-Arch: same (the amd64 ones would go)
#   libdnnl-dev                              its dnnl_config.h differs between the architectures
#                                            (and libdnnl2, the library its CMake config names)
# Open MPI is left out (RNNSEARCH_MPI=OFF): libopenmpi-dev:arm64 depends on openmpi-bin,
# libevent-dev and libpmix-dev, which are not Multi-Arch: same, so installing it would remove
# the amd64 Open MPI.
#
#   scripts/cross_arm64.sh [BUILD_DIR] [CTEST_ARGS...]   (default build-arm64; ctest -j1)
#   JOBS=N scripts/cross_arm64.sh                        (make -jN; default 2)
#   SKIP_TESTS=1 scripts/cross_arm64.sh                  (build only)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$root/build-arm64}")
shift || true
jobs=${JOBS:-2}

# Installed from the archive next to the amd64 packages (all Multi-Arch: same).
host_packages=(g++-aarch64-linux-gnu qemu-user pkg-config cmake libeigen3-dev nlohmann-json3-dev python3-numpy)
arm64_packages=(libboost-program-options-dev libicu-dev libgtest-dev libzip-dev zlib1g-dev
                libopenblas-openmp-dev libdnnl2 ocl-icd-opencl-dev)
# Unpacked into $build/arm64-deps (see above).
unpacked_packages=(libsentencepiece0 libsentencepiece-dev libdnnl2 libdnnl-dev)

if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else sudo="no"; fi
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
for p in "${arm64_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" || missing+=("$p:arm64")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$sudo" = "no" ]; then
    echo "cross_arm64.sh: missing packages (${missing[*]}) and not root: install them with apt-get" >&2
    exit 1
  fi
  dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
  echo "cross_arm64.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The packages that cannot be installed: downloaded and unpacked, once per build directory.
deps=$build/arm64-deps
if [ "$(cat "$deps/unpacked" 2>/dev/null)" != "${unpacked_packages[*]}" ]; then
  rm -rf "$deps"
  mkdir -p "$deps/debs"
  (cd "$deps/debs" && apt-get download -q "${unpacked_packages[@]/%/:arm64}" 2>&1) |
    { grep -v '^W: Download is performed unsandboxed' || true; }  # (as root: apt's _apt user cannot write there)
  for deb in "$deps"/debs/*.deb; do dpkg -x "$deb" "$deps/root"; done
  echo "${unpacked_packages[*]}" > "$deps/unpacked"
fi

start=$(date +%s)
cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
      -DRNNSEARCH_ARM64_DEPS="$deps/root" -DRNNSEARCH_NATIVE=OFF -DRNNSEARCH_MPI=OFF -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
built=$(date +%s)
echo "cross_arm64.sh: built in $((built - start)) s; $(file -b "$build/rnnsearch" | cut -d, -f1-2)" >&2
[ "${SKIP_TESTS:-0}" = 1 ] && exit 0

# Every test binary runs under qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR), and the tests
# that run rnnsearch run it under qemu-aarch64 too (RNNSEARCH_BINARY).
status=0
(cd "$build" && ctest --output-on-failure "$@") || status=$?
echo "cross_arm64.sh: tests under qemu-user in $(($(date +%s) - built)) s" >&2
exit $status

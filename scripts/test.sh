#!/usr/bin/env bash
# Set-up, build and the whole test suite: what CI runs (.ci/run). The suite runs twice: as the
# CPU is, then with the CPU capped to AVX2 (RNNSEARCH_CPU=avx2, and oneDNN's own
# ONEDNN_MAX_CPU_ISA=AVX2), so that a machine with AVX-512, AVX512_BF16 or VNNI also runs the
# fallbacks a laptop takes (--precision auto in fp32, bf16 and int8 falling back with a
# warning). Then the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer, with
# a short run of every fuzz target (scripts/sanitize.sh; SANITIZE=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
echo "test.sh: the suite on this CPU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
(cd build && ctest --output-on-failure -j "$(nproc)")
echo "test.sh: the suite again with the fallbacks forced (RNNSEARCH_CPU=avx2 ONEDNN_MAX_CPU_ISA=AVX2)"
(cd build && RNNSEARCH_CPU=avx2 ONEDNN_MAX_CPU_ISA=AVX2 ctest --output-on-failure -j "$(nproc)")
[ "${SANITIZE:-1}" = 0 ] || scripts/sanitize.sh

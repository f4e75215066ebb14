#!/usr/bin/env bash
# Set-up, build and the whole test suite: what CI runs (.ci/run). Then the same suite built
# with AddressSanitizer + UndefinedBehaviorSanitizer, with a short run of every fuzz target
# (scripts/sanitize.sh; SANITIZE=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
[ "${SANITIZE:-1}" = 0 ] || scripts/sanitize.sh

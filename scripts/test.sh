#!/usr/bin/env bash
# Set-up, build and the whole test suite: what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build && ctest --output-on-failure -j "$(nproc)"

#!/usr/bin/env bash
# Configures and builds rnnsearch (Release, -march=native) in build/. Extra arguments go to
# cmake, e.g. scripts/build.sh -DRNNSEARCH_NATIVE=OFF for a portable binary.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"

#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (clang), plus
# a bounded run of every libFuzzer target from its seed corpus (tests/fuzz). Builds in
# build-sanitize/ at -O1 (compiling Eigen with instrumentation is the slow part). Any
# sanitizer report fails the test that triggered it.
#   scripts/sanitize.sh          build and run the tests
#   scripts/sanitize.sh build    build only (scripts/fuzz.sh uses this)
#   RUNS=20000                   inputs each fuzz target runs in the tests
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-20000}
CXX=clang++ cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -gline-tables-only" \
  -DRNNSEARCH_FUZZ=ON -DRNNSEARCH_FUZZ_RUNS="$RUNS" >/dev/null
cmake --build build-sanitize -j "$(nproc)"
[ "${1:-}" = build ] && exit 0
cd build-sanitize
# detect_leaks: a leak is a finding too. halt_on_error: the first report fails the test.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --output-on-failure -j "$(nproc)"

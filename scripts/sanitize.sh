#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (clang), plus
# a bounded run of every libFuzzer target from its seed corpus (tests/fuzz). Builds in
# build-sanitize/ at -O1 (compiling Eigen with instrumentation is the slow part), as a unity
# build (docs/building.md § Build time). Any sanitizer report fails the test that triggered
# it. Then the server's test (test_serve, with the server and serve_bench it runs) under
# ThreadSanitizer, built in build-tsan/ (a unity build too) with only what the server needs
# (docs/reliability.md), where cpp-httplib is installed.
#   scripts/sanitize.sh          build and run the tests
#   scripts/sanitize.sh build    build only (scripts/fuzz.sh uses this)
#   RUNS=10000                   inputs each fuzz target runs in the tests
#   TSAN=0                       skip the ThreadSanitizer part
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10000}
CXX=clang++ cmake -S . -B build-sanitize -DCMAKE_UNITY_BUILD=ON -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -gline-tables-only" \
  -DRNNSEARCH_FUZZ=ON -DRNNSEARCH_FUZZ_RUNS="$RUNS" >/dev/null
cmake --build build-sanitize -j "$(nproc)"
[ "${1:-}" = build ] && exit 0
cd build-sanitize
# detect_leaks: a leak is a finding too. halt_on_error: the first report fails the test.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Four tests are left out: each trains or draws for minutes under the sanitizers to show a
# statistical property (guided attention's and the alignment output's agreement with their links,
# sampled frequencies, resuming after kills at random instants), while the code they run is the
# code of shorter tests that stay: the gradient checks of guided alignment and of the alignment
# output, Train.AlignmentOutputModelRunsThroughEveryCommand, the sampling tests, the resume tests.
# They run in every other stage.
statistical='^(Train\.GuidedAttentionIsCloserToItsLinksThanUnguided|Train\.AlignmentOutputFollowsItsLinksWhereTheAttentionDoesNot'
statistical+='|Sampling\.DrawsBeyondTheHeadFollowTheDistribution|Train\.KilledAtRandomInstantsResumesExactly)$'
# (a test renamed would silently run again: the four names must all still be there)
left_out=$(ctest -N -R "$statistical" | grep -c ' Test *#' || true)
[ "$left_out" = 4 ] || { echo "sanitize.sh: $left_out of the 4 statistical tests left out exist: update \$statistical" >&2; exit 1; }
ctest --output-on-failure -j "$(nproc)" -E "$statistical"
cd ..

[ "${TSAN:-1}" = 0 ] && exit 0
CXX=clang++ cmake -S . -B build-tsan -DCMAKE_UNITY_BUILD=ON -DCMAKE_BUILD_TYPE=Tsan -DCMAKE_CXX_FLAGS_TSAN="-O1 -gline-tables-only" \
  -DRNNSEARCH_TSAN=ON -DRNNSEARCH_ONEDNN=OFF -DRNNSEARCH_OPENBLAS=OFF -DRNNSEARCH_SENTENCEPIECE=OFF \
  -DRNNSEARCH_MPI=OFF -DRNNSEARCH_PYTHON=OFF >/dev/null
# (what the configuration found, from the header it generates: the list of targets is worded
# differently by each generator, and Ninja's has no line 'test_serve')
if ! grep -q '#define RNNSEARCH_WITH_HTTP 1' build-tsan/generated/rnnsearch_build_info.h; then
  echo "sanitize.sh: no cpp-httplib (libcpp-httplib-dev): the server's test under ThreadSanitizer is skipped" >&2
  exit 0
fi
cmake --build build-tsan -j "$(nproc)" --target test_serve
# halt_on_error: the first report ends the process (a server's ends its test's requests, and
# the test fails). tests/tsan.supp: two false positives inside cpp-httplib, each explained
# there. OMP_NUM_THREADS=1: the server decodes with one OpenMP thread per search anyway, and
# libomp is not instrumented; OMP_TOOL=disabled keeps libomp from loading Archer, its TSan
# tool, whose warning on stderr would be one line more than a test of the server's stderr expects.
cd build-tsan
OMP_NUM_THREADS=1 OMP_TOOL=disabled TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../tests/tsan.supp" \
  ./test_serve

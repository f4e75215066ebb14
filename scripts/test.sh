#!/usr/bin/env bash
# Set-up, build and the whole test suite: what CI runs (.ci/run). Stages, in this order (name
# some to run only those, e.g. scripts/test.sh native wheel):
#   native     the suite as the CPU is
#   fallback   the suite with the CPU capped to AVX2 (RNNSEARCH_CPU=avx2, and oneDNN's own
#              ONEDNN_MAX_CPU_ISA=AVX2), so that a machine with AVX-512, AVX512_BF16 or VNNI also
#              runs the fallbacks a laptop takes (--precision auto in fp32, bf16 and int8
#              falling back with a warning)
#   wheel      pip builds a wheel offline (setup.py, from the module built in build/), installs it
#              into a fresh venv, and tests/test_python.py runs against it outside the tree
#              (scripts/test_wheel.sh)
#   minimal    the suite built with every optional library off (build-minimal/, a unity build:
#              docs/building.md § Build time): what builds with only Eigen, OpenMP, Boost, ICU,
#              zlib, libzip and nlohmann-json; tests that need what is off are skipped with the reason
#   trixie     setup, build and the suite on Debian 13 in a debootstrap root file system
#              (scripts/test_distro.sh; the other release when this machine runs Debian 13:
#              bookworm), kept in /var/cache/rnnsearch between runs; the root file system
#              and its packages are made in the background from the start
#   sanitize   the suite built with AddressSanitizer + UndefinedBehaviorSanitizer, with a short run
#              of every fuzz target, then the server's test under ThreadSanitizer
#              (scripts/sanitize.sh; SANITIZE=0 skips it, TSAN=0 only the ThreadSanitizer part)
# Each stage's time is printed as it ends, and all of them at the end (docs/building.md gives
# typical times on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
all=(native fallback wheel minimal trixie sanitize)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${all[@]}")
for stage in "${stages[@]}"; do
  [[ " ${all[*]} " == *" $stage "* ]] || { echo "test.sh: unknown stage '$stage' (${all[*]})" >&2; exit 2; }
done
times=()
timed() {  # timed NAME COMMAND...: runs it and records how long it took
  local name=$1 start=$SECONDS
  shift
  echo "test.sh: -- $name" >&2
  "$@"
  times+=("$name $((SECONDS - start)) s")
  echo "test.sh: -- $name: done in $((SECONDS - start)) s" >&2
}
wants() { [[ " ${stages[*]} " == *" $1 "* ]]; }

suite() { (cd "$1" && shift && env "$@" ctest --output-on-failure -j "$(nproc)"); }
other_release() {
  . /etc/os-release
  if [ "${VERSION_ID:-}" = 13 ]; then echo bookworm; else echo trixie; fi
}

timed setup scripts/setup.sh
# Build directories made from nothing here use Ninja (setup.sh installs it), which keeps both
# cores busy where make's jobs leave one idle (docs/building.md § Build time); a directory made
# before keeps the generator it was made with (CMake reads CMAKE_GENERATOR only for a new one).
if command -v ninja >/dev/null; then export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}; fi
# The other release's root file system and packages come from the network (debootstrap, apt):
# made in the background while the stages before it build and test, waited for at its stage.
if wants trixie; then
  prepare_log=$(mktemp)
  (start=$SECONDS && scripts/test_distro.sh "$(other_release)" --prepare &&
    echo "test.sh: -- $(other_release): root file system and packages ready in $((SECONDS - start)) s, in the background") \
    >"$prepare_log" 2>&1 &
  prepare_pid=$!
  trap 'wait "$prepare_pid" 2>/dev/null || true' EXIT  # never leave it behind, half-made and mounted
fi
# build/ made here from nothing, as in CI's fresh clone, is built once: a unity build, as the
# other builds made once are; a build/ made before (by quickstart.sh, or by hand for editing:
# one object per source) keeps its settings.
unity=()
[ -f build/CMakeCache.txt ] || unity=(-DCMAKE_UNITY_BUILD=ON)
timed build scripts/build.sh "${unity[@]}"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
wants native && timed "native ($cpu)" suite build
wants fallback && timed "fallback (RNNSEARCH_CPU=avx2 ONEDNN_MAX_CPU_ISA=AVX2)" \
  suite build RNNSEARCH_CPU=avx2 ONEDNN_MAX_CPU_ISA=AVX2
wants wheel && timed wheel scripts/test_wheel.sh
if wants minimal; then
  minimal() {
    cmake -S . -B build-minimal -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DRNNSEARCH_ONEDNN=OFF -DRNNSEARCH_OPENBLAS=OFF \
      -DRNNSEARCH_SENTENCEPIECE=OFF -DRNNSEARCH_MPI=OFF -DRNNSEARCH_HTTP=OFF -DRNNSEARCH_PYTHON=OFF >/dev/null
    cmake --build build-minimal -j "$(nproc)"
    build-minimal/rnnsearch --version
    suite build-minimal
  }
  timed "minimal (every optional library off)" minimal
fi
if wants trixie; then
  wait "$prepare_pid" || { cat "$prepare_log" >&2; echo "test.sh: preparing $(other_release) failed" >&2; exit 1; }
  tail -1 "$prepare_log" >&2 && rm -f "$prepare_log"
  timed "$(other_release) (scripts/test_distro.sh)" scripts/test_distro.sh "$(other_release)"
fi
wants sanitize && [ "${SANITIZE:-1}" != 0 ] && timed sanitize scripts/sanitize.sh
echo "test.sh: every stage passed:" >&2
printf '  %s\n' "${times[@]}" >&2

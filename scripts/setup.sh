#!/usr/bin/env bash
# Installs what building and testing rnnsearch needs, from Debian's packages: Debian 12
# (bookworm) and 13 (trixie) use the same package names (docs/building.md lists the versions).
# Idempotent: installs only what is missing; runs apt-get update only when it must install.
# Only the first group is required; each package after it enables one optional feature, and
# the build says which it found (CMake's last line, rnnsearch --version).
set -euo pipefail

. /etc/os-release 2>/dev/null || true
case "${ID:-}:${VERSION_ID:-}" in
  debian:12 | debian:13) echo "setup.sh: ${PRETTY_NAME}" >&2 ;;
  *)
    if [[ " ${ID:-} ${ID_LIKE:-} " == *" debian "* ]] && command -v apt-get >/dev/null; then
      echo "setup.sh: ${PRETTY_NAME:-this system} is not Debian 12 or 13, which rnnsearch is tested on; trying" \
           "Debian's package names" >&2
    else
      cat >&2 <<'TXT'
setup.sh: not a Debian-like system; install by hand, then run scripts/build.sh:
  required: a C++17 compiler, CMake >= 3.18, pkg-config, Eigen 3.4, OpenMP, Boost.Program_options,
            ICU, zlib, libzip, nlohmann-json, GoogleTest
  optional: oneDNN 2.6+ (bf16/int8, fast fp32), OpenBLAS (OpenMP build), SentencePiece (subwords),
            Open MPI, cpp-httplib (serve), Python 3.11+ headers with pybind11 and numpy (the module),
            chromium + chromedriver + selenium (the page's browser test)
TXT
      exit 1
    fi
    ;;
esac

packages=(
  build-essential cmake pkg-config       # compiler and build system
  libeigen3-dev                          # matrices, GEMM
  libboost-program-options-dev           # command line
  libicu-dev                             # Unicode tokenizer
  libgtest-dev                           # tests
  libzip-dev zlib1g-dev                  # model.npz (zip of .npy) and .gz corpora
  nlohmann-json3-dev                     # config.json, progress.json, JSON output
  # optional from here on
  ninja-build                            # scripts/test.sh's new build folders (faster than make: docs/building.md)
  libsentencepiece-dev                   # subword units (train --subwords)
  libopenblas-openmp-dev                 # faster matrix products than Eigen's own (build/gemm_bench)
  libdnnl-dev                            # oneDNN: faster float products than OpenBLAS (build/gemm_bench)
  ocl-icd-opencl-dev                     # OpenCL headers: oneDNN's CMake config requires them
  python3-numpy                          # the test that numpy.load reads our model.npz; the Python module
  python3-dev pybind11-dev               # the Python module (python/, docs/python.md)
  python3-pytest                         # runs its tests (tests/test_python.py)
  python3-venv python3-pip               # pip install . (pyproject.toml; scripts/test_wheel.sh)
  python3-setuptools python3-wheel       #   its build backend, offline
  libcpp-httplib-dev                     # rnnsearch serve: HTTP (docs/serve.md)
  chromium chromium-driver               # the serve page's browser test (tests/test_page.py):
  python3-selenium                       #   headless chromium driven by selenium
  libopenmpi-dev openmpi-bin             # mpirun -np N rnnsearch train|translate|score
  clang libclang-rt-dev libomp-dev       # scripts/sanitize.sh, scripts/fuzz.sh: ASan, UBSan, libFuzzer
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
  echo "setup.sh: missing packages (${missing[*]}) and not root: install them with apt-get" >&2
  exit 1
fi
echo "setup.sh: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

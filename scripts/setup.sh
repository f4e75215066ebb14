#!/usr/bin/env bash
# Installs what building and testing rnnsearch needs, from Debian's packages (Debian 12).
# Idempotent: installs only what is missing; runs apt-get update only when it must install.
set -euo pipefail

packages=(
  build-essential cmake pkg-config       # compiler and build system
  libeigen3-dev                          # matrices, GEMM
  libboost-program-options-dev           # command line
  libicu-dev                             # Unicode tokenizer
  libgtest-dev                           # tests
  libzip-dev zlib1g-dev                  # model.npz (zip of .npy) and .gz corpora
  nlohmann-json3-dev                     # config.json, progress.json, JSON output
  libsentencepiece-dev                   # subword units (train --subwords)
  libopenblas-openmp-dev                 # faster matrix products than Eigen's own (build/gemm_bench)
  libdnnl-dev                            # oneDNN: faster float products than OpenBLAS (build/gemm_bench)
  ocl-icd-opencl-dev                     # OpenCL headers: oneDNN's CMake config requires them
  python3-numpy                          # the test that numpy.load reads our model.npz; the Python module
  python3-dev pybind11-dev               # the Python module (python/, docs/python.md)
  python3-pytest                         # runs its tests (tests/test_python.py)
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

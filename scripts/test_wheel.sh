#!/usr/bin/env bash
# `pip install .` as a user without a package index does it: builds a wheel of the Python
# module offline (pip wheel --no-build-isolation, in a virtual environment made with
# --system-site-packages, so that Debian's setuptools, wheel and numpy serve), installs it into
# a fresh virtual environment and runs tests/test_python.py against the installed package from
# outside the source tree. Needs scripts/build.sh's build/rnnsearch (the tests train tiny
# models with it). Online, plain `pip install .` works too (pip fetches setuptools and wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=/usr/bin/python3  # Debian's, for which setup.sh installs numpy, pytest, setuptools and wheel
"$python" -m venv --system-site-packages --without-pip "$work/build-env"
# The module is the one scripts/build.sh built in build/ (setup.py's RNNSEARCH_BUILD_DIR): the
# suite's build compiled it, so it is not compiled a second time; plain `pip install .`
# configures a build folder of its own.
RNNSEARCH_BUILD_DIR="$root/build" \
  "$work/build-env/bin/python" -m pip wheel --quiet --no-build-isolation --no-deps --no-index -w "$work/dist" "$root"
wheel=$(ls "$work"/dist/rnnsearch-*.whl)
echo "test_wheel.sh: built $(basename "$wheel")"
"$python" -m venv --system-site-packages --without-pip "$work/env"
"$work/env/bin/python" -m pip install --quiet --no-index --no-deps "$wheel"
cd "$work"
"$work/env/bin/python" - "$work/env" <<'PY'
import os, sys
import rnnsearch
where = os.path.dirname(rnnsearch.__file__)
assert where.startswith(sys.argv[1]), "imported %s, not the installed wheel" % rnnsearch.__file__
assert os.path.exists(os.path.join(where, "rnnsearch.pyi")), "the type stub is not installed beside the module"
print("test_wheel.sh: rnnsearch %s from %s (%s)" % (rnnsearch.__version__, where, rnnsearch.build_info()))
PY
RNNSEARCH_BINARY="$root/build/rnnsearch" RNNSEARCH_SOURCE_DIR="$root" PYTHONDONTWRITEBYTECODE=1 \
  "$work/env/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$work" "$root/tests/test_python.py"

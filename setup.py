"""Builds the Python module `rnnsearch` for `pip install .` (pyproject.toml).

setuptools drives the project's own CMake build (as CTranslate2's setup.py drives its
pybind11 module): CMake configures a Release build for the Python that runs pip, without the
tests, builds the one target rnnsearch_python (the library and python/rnnsearch_module.cpp)
and the module lands in the wheel beside its type stub python/rnnsearch.pyi. The version is
CMakeLists.txt's project(VERSION), the one source of truth. CMAKE_ARGS (as in other CMake-built
packages) passes further options, e.g. CMAKE_ARGS="-DRNNSEARCH_NATIVE=OFF" for a portable module.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(rnnsearch\s+VERSION\s+([0-9.]+)", f.read())
    if not match:
        raise RuntimeError("CMakeLists.txt has no project(rnnsearch VERSION x.y.z)")
    return match.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not shutil.which("cmake"):
            raise RuntimeError("building rnnsearch needs cmake and the libraries of scripts/setup.sh")
        # RNNSEARCH_BUILD_DIR: a build folder of this tree already configured with the module
        # (scripts/build.sh's build/, for the same Python), whose module is packaged after
        # building what changed, as scripts/test_wheel.sh does after the suite's build; else a
        # folder of its own is configured.
        build_dir = os.environ.get("RNNSEARCH_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
            if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
                raise RuntimeError("RNNSEARCH_BUILD_DIR=%s is not a configured CMake build folder" % build_dir)
        else:
            build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
            # A unity build: compiled once, never edited here, so eight sources to a file
            # (docs/building.md § Build time); CMAKE_ARGS="-DCMAKE_UNITY_BUILD=OFF" overrides it.
            configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_UNITY_BUILD=ON",
                         "-DRNNSEARCH_BUILD_TESTS=OFF", "-DPython3_EXECUTABLE=" + sys.executable]
            configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
            subprocess.run(configure, check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", build_dir, "--target", "rnnsearch_python", "-j", jobs], check=True)
        built = [f for f in os.listdir(os.path.join(build_dir, "python")) if f.startswith("rnnsearch") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError("the CMake build made no Python module (is pybind11-dev installed?)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(build_dir, "python", built[0]), target)
        shutil.copymode(os.path.join(build_dir, "python", built[0]), target)
        # The stub beside the module: editors complete Translator.translate(...) from it.
        shutil.copyfile(os.path.join(ROOT, "python", "rnnsearch.pyi"), os.path.join(os.path.dirname(target), "rnnsearch.pyi"))


# setuptools' own build folder beside CMake's build/ (.gitignore: /build*/), not inside it;
# egg_info wants it to exist.
os.makedirs(os.path.join(ROOT, "build-wheel"), exist_ok=True)
setup(version=cmake_version(), ext_modules=[Extension("rnnsearch", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": "build-wheel"}, "egg_info": {"egg_base": "build-wheel"}}, zip_safe=False)

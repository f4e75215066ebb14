# CMake toolchain file: cross-build rnnsearch for arm64 (aarch64) Linux on an amd64 Debian 12
# machine, with Debian's cross compiler (g++-aarch64-linux-gnu) and the arm64 -dev packages
# installed next to the amd64 ones (dpkg --add-architecture arm64; multiarch, no sysroot).
# The tests run under qemu-user: ctest and gtest_discover_tests run every test binary through
# CMAKE_CROSSCOMPILING_EMULATOR, and the tests that start the rnnsearch binary start it through
# the emulator too (CMakeLists.txt). scripts/cross_arm64.sh installs all of this and runs it:
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DRNNSEARCH_NATIVE=OFF
#
# RNNSEARCH_ARM64_DEPS: a directory holding arm64 packages unpacked with dpkg -x, for those
# that cannot be installed next to their amd64 build on Debian 12 (libsentencepiece-dev and
# libsentencepiece0 are not Multi-Arch: same; libdnnl-dev's dnnl_config.h differs between
# the two architectures). Its usr/ is searched before /usr.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# libc6:arm64 (a dependency of the arm64 -dev packages) puts the arm64 dynamic loader at
# /lib/ld-linux-aarch64.so.1, so qemu-aarch64 finds it and the arm64 libraries without -L.
find_program(RNNSEARCH_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${RNNSEARCH_QEMU_AARCH64})

# Libraries and headers of the target only; programs (pkg-config, python3, mpirun) of the host.
# Without a sysroot, the root is /, and CMAKE_LIBRARY_ARCHITECTURE picks /usr/lib/aarch64-linux-gnu.
set(RNNSEARCH_ARM64_DEPS "" CACHE PATH "arm64 packages unpacked with dpkg -x (scripts/cross_arm64.sh)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES RNNSEARCH_ARM64_DEPS)
if(RNNSEARCH_ARM64_DEPS)
  list(PREPEND CMAKE_PREFIX_PATH ${RNNSEARCH_ARM64_DEPS}/usr)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config (libzip, cpp-httplib): the arm64 .pc files, not the host's. (SentencePiece is
# found by its header and library, under RNNSEARCH_ARM64_DEPS first: CMAKE_PREFIX_PATH.)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
if(RNNSEARCH_ARM64_DEPS)
  set(ENV{PKG_CONFIG_LIBDIR} "${RNNSEARCH_ARM64_DEPS}/usr/lib/aarch64-linux-gnu/pkgconfig:$ENV{PKG_CONFIG_LIBDIR}")
endif()
set(ENV{PKG_CONFIG_PATH} "")

#!/usr/bin/env bash
# Builds and tests rnnsearch on another Debian release, as a user of that release would: in a
# root file system made with debootstrap from Debian's package registry, entered with chroot,
# it runs scripts/setup.sh, scripts/build.sh and the test suite (ctest) on a copy of this
# work tree (tracked files and untracked ones git does not ignore). It builds without the
# precompiled headers (CMakeLists.txt): there a source or header that forgets an #include fails,
# on that release's compiler and standard library, instead of compiling thanks to the
# precompiled header.
#
#   scripts/test_distro.sh trixie                  the suite on Debian 13
#   scripts/test_distro.sh bookworm                the suite on Debian 12
#   scripts/test_distro.sh trixie COMMAND ARGS...  setup, build, then COMMAND instead of the suite,
#                                                  e.g. env MINUTES=1 scripts/quickstart.sh
#   scripts/test_distro.sh trixie --prepare        only the root file system and setup.sh's
#                                                  packages (network-bound: scripts/test.sh
#                                                  runs it in the background while it builds)
#
# Needs root (chroot, mount). The root file system is kept in $RNNSEARCH_ROOTFS/RELEASE
# (default /var/cache/rnnsearch/RELEASE) with the packages setup.sh installed and the build
# directory, so a second run installs nothing and builds only what changed; delete the folder
# to start afresh. A missing debootstrap is installed first (apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?usage: scripts/test_distro.sh RELEASE [--prepare | COMMAND ARGS...]}
shift
prepare=0
[ "${1:-}" != --prepare ] || { prepare=1; shift; }
[ "$(id -u)" -eq 0 ] || { echo "test_distro.sh: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
root=${RNNSEARCH_ROOTFS:-/var/cache/rnnsearch}/$release
say() { echo "test_distro.sh ($release): $*" >&2; }

if [ ! -e "$root/.rnnsearch-rootfs" ]; then
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  say "making the root file system in $root (debootstrap, from the registry apt uses)"
  rm -rf "$root.tmp" && mkdir -p "$(dirname "$root")"
  # debootstrap's default mirror: the one Debian's own sources name.
  debootstrap --variant=minbase "$release" "$root.tmp" >"$root.tmp.log" 2>&1 ||
    { tail -20 "$root.tmp.log" >&2; say "debootstrap failed (log: $root.tmp.log)"; exit 1; }
  # The release's security and point-release updates, from the same mirror.
  mirror=$(awk '$1 == "deb" {print $2; exit}' "$root.tmp/etc/apt/sources.list")
  {
    echo "deb $mirror $release-updates main"
    echo "deb ${mirror%/debian}/debian-security $release-security main"
  } >>"$root.tmp/etc/apt/sources.list"
  rm -rf "$root" && mv "$root.tmp" "$root" && rm -f "$root.tmp.log"
  touch "$root/.rnnsearch-rootfs"
fi

# The kernel's file systems, unmounted whatever happens next.
unmount() {
  for m in dev/pts dev/shm dev proc sys; do
    mountpoint -q "$root/$m" && umount -l "$root/$m"
  done
  return 0
}
trap unmount EXIT
unmount
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount --bind /dev/shm "$root/dev/shm"  # Open MPI's shared memory
cp -L /etc/resolv.conf "$root/etc/resolv.conf"

# The work tree's files, each copied only when its content differs (a new mtime, so that the
# build directory kept from the last run rebuilds exactly what changed, whatever the mtimes
# here); files no longer in the tree are removed (the build directory and models/ stay).
src=$root/src/rnnsearch
mkdir -p "$src"
files=$(mktemp)
git ls-files -z --cached --others --exclude-standard >"$files"
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue  # deleted in the work tree, not yet in the index
  cmp -s "$f" "$src/$f" || { mkdir -p "$src/$(dirname "$f")" && cp "$f" "$src/$f"; }
done <"$files"
(cd "$src" && find . -path ./build -prune -o -path ./models -prune -o -type f -print0) |
  while IFS= read -r -d '' f; do
    f=${f#./}
    grep -qzxF -- "$f" "$files" || rm -f "$src/$f"
  done
rm -f "$files"

if [ "$prepare" = 1 ]; then
  say "$(. "$root/etc/os-release" && echo "$PRETTY_NAME"): setup.sh"
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 TERM=dumb bash -c 'cd /src/rnnsearch && scripts/setup.sh'
  exit
fi
[ $# -gt 0 ] || set -- bash -c 'cd build && ctest --output-on-failure -j "$(nproc)"'
say "$(. "$root/etc/os-release" && echo "$PRETTY_NAME"): setup.sh, build.sh, then $*"
chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 TERM=dumb ${CI:+CI=$CI} ${CMAKE_GENERATOR:+CMAKE_GENERATOR=$CMAKE_GENERATOR} bash -c 'cd /src/rnnsearch && scripts/setup.sh && scripts/build.sh -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON && exec "$@"' \
  bash "$@"

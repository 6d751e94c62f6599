#!/usr/bin/env bash
# Installs or reuses everything `make test` needs on a Debian 12 (x86_64) machine:
#   1. host packages through apt (only those missing);
#   2. a GCC 15 riscv64 cross toolchain, extracted from Debian sid's packages into $TOOLCHAIN_DIR
#      (installing them with apt would pull a newer host libc into the system);
#   3. cmocka built for riscv64 (Debian's riscv64 package), copied into that toolchain's sysroot.
# The system's apt sources are never touched: the sid and riscv64 lists live in a private apt
# configuration under $TOOLCHAIN_DIR. A stamp file makes a second run download nothing.
#
# Usage: tools/setup-deps.sh host            host packages to build and test on a riscv64 board
#        tools/setup-deps.sh qemu            the same + QEMU user mode (your own cross compiler)
#        tools/setup-deps.sh toolchain DIR   the same + GCC 15 and riscv64 cmocka into DIR
#        tools/setup-deps.sh bench DIR       gnuplot, bc, and QEMU's plugin header (from Debian's
#                                            qemu source package) into DIR/qemu-plugin
#        tools/setup-deps.sh engine          python3-torch and python3-numpy, the example engine's
#                                            PyTorch reference (make test-engine; 655 MiB)
# On a machine without dpkg/apt nothing is installed: the packages are named instead.
set -euo pipefail

HOST_PACKAGES=(libyaml-dev libcmocka-dev pkg-config make gcc libjansson-dev)
QEMU_PACKAGES=(qemu-user clang-19)
TOOLCHAIN_PACKAGES=(patchelf binutils)
BENCH_PACKAGES=(gnuplot-nox bc)
ENGINE_PACKAGES=(python3-torch python3-numpy)

GCC_PACKAGES=(gcc-15-riscv64-linux-gnu cpp-15-riscv64-linux-gnu gcc-15-riscv64-linux-gnu-base
  libgcc-15-dev-riscv64-cross binutils-riscv64-linux-gnu binutils-common libbinutils libctf0
  libsframe3 libjansson4 libc6 libisl23 libmpc3 libmpfr6 libgmp10 libzstd1 zlib1g libstdc++6
  libgcc-s1 libc6-dev-riscv64-cross libc6-riscv64-cross linux-libc-dev-riscv64-cross
  libgomp1-riscv64-cross libgcc-s1-riscv64-cross linux-libc-dev)
# linux-libc-dev: sid's linux-libc-dev-riscv64-cross is symbolic links into it (<linux/*.h> and
# <asm/*.h>, which <sched.h> needs under _GNU_SOURCE).

# libyaml: gemm-rvv-bench reads shapes files on the board (linked statically).
# libjansson: the example engine reads config.json and safetensors headers with it.
RISCV_PACKAGES=(libcmocka0 libcmocka-dev libyaml-0-2 libyaml-dev libjansson4 libjansson-dev)

say() { printf 'setup-deps: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@";
  else die "need root (or sudo) to run: $*"; fi
}

install_packages() {
  local missing=() p
  if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    say "no dpkg/apt here: make sure these (or your system's equivalents) are installed: $*"
    return 0
  fi
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing host packages: ${missing[*]}"
  # A new machine may have no package lists yet; try without updating first to save time.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
    as_root apt-get update -q >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
  }
}

# private_apt DIR ARGS...: apt-get with its own sources list, lists and cache under DIR.
private_apt() {
  local dir=$1; shift
  apt-get -q -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" \
    -o Dir::State::status="$dir/status" -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

# fetch_debs DIR SOURCE_LINE EXTRA_APT_OPTS PACKAGE...: download .debs into DIR/debs.
fetch_debs() {
  local dir=$1 line=$2 opts=$3; shift 3
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
  echo "$line" > "$dir/sources.list"
  : > "$dir/status"
  # shellcheck disable=SC2086
  private_apt "$dir" $opts update >/dev/null
  # shellcheck disable=SC2086
  (cd "$dir/debs" && private_apt "$dir" $opts download "$@" >/dev/null)
}

# Point every ELF program of the extracted toolchain at the extracted (newer) glibc. --force-rpath
# writes an RPATH, which libbfd honours when it loads libsframe; a RUNPATH it does not.
patch_programs() {
  local prefix=$1 f
  local interp="$prefix/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
  local libdir="$prefix/usr/lib/x86_64-linux-gnu"
  for f in "$prefix"/usr/bin/riscv64-linux-gnu-* "$prefix"/usr/libexec/gcc-cross/riscv64-linux-gnu/15/*; do
    [ -L "$f" ] && continue
    [ -f "$f" ] || continue
    head -c 4 "$f" | grep -q 'ELF' || continue
    if readelf -l "$f" 2>/dev/null | grep -q 'program interpreter'; then
      patchelf --set-interpreter "$interp" "$f"
    fi
    patchelf --force-rpath --set-rpath "$libdir" "$f"
  done
}

install_toolchain() {
  local top=$1
  local prefix="$top/gcc15" stamp="$top/.complete"
  # The stamp records the absolute prefix the programs were patched for and the package lists:
  # a moved tree, or one made from other packages, is redone.
  local want="$prefix ${GCC_PACKAGES[*]} ${RISCV_PACKAGES[*]}"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  command -v dpkg >/dev/null || die "this script needs Debian's dpkg and apt; set CROSS= to use your own toolchain"
  say "fetching GCC 15 for riscv64, and cmocka and libyaml for riscv64, into $top (one time)"
  rm -rf "$top.tmp"; mkdir -p "$top.tmp"
  local work="$top.tmp"

  fetch_debs "$work/apt-sid" "deb http://deb.debian.org/debian sid main" "" "${GCC_PACKAGES[@]}"
  fetch_debs "$work/apt-riscv64" "deb [arch=riscv64] http://deb.debian.org/debian stable main" \
    "-o APT::Architectures::=riscv64 -o APT::Architecture=riscv64" "${RISCV_PACKAGES[@]}"

  # Extract straight into the final place: the patched interpreter path is absolute. Until the
  # stamp is written, a half-made tree is simply made again on the next run.
  local deb
  rm -rf "$prefix"; mkdir -p "$prefix"
  for deb in "$work"/apt-sid/debs/*.deb; do dpkg -x "$deb" "$prefix"; done
  patch_programs "$prefix"
  # libc.so is a linker script naming /usr/riscv64-linux-gnu/lib/...: point it at this tree.
  local script
  for script in $(grep -IlE '^(GROUP|INPUT)' "$prefix"/usr/riscv64-linux-gnu/lib/*.so 2>/dev/null); do
    sed -i "s| /usr/riscv64-linux-gnu/| $prefix/usr/riscv64-linux-gnu/|g" "$script"
  done

  # cmocka for riscv64 goes into the cross compiler's own sysroot, so -lcmocka and
  # `qemu-riscv64 -L SYSROOT` find it without further flags.
  local sysroot="$prefix/usr/riscv64-linux-gnu" rv="$work/riscv64-root"
  mkdir -p "$rv"
  for deb in "$work"/apt-riscv64/debs/*.deb; do dpkg -x "$deb" "$rv"; done
  cp -a "$rv"/usr/include/cmocka*.h "$sysroot/include/"
  cp -a "$rv"/usr/lib/riscv64-linux-gnu/libcmocka.so* "$sysroot/lib/"
  cp -a "$rv"/usr/include/yaml.h "$sysroot/include/"
  cp -a "$rv"/usr/lib/riscv64-linux-gnu/libyaml.a "$sysroot/lib/"
  cp -a "$rv"/usr/include/jansson*.h "$sysroot/include/"
  cp -a "$rv"/usr/lib/riscv64-linux-gnu/libjansson.so* "$sysroot/lib/"
  rm -rf "$work"
  echo "$want" > "$stamp"
  say "toolchain ready: $prefix/usr/bin/riscv64-linux-gnu-gcc-15"
}

# QEMU's TCG plugin API header (version 1, as Debian 12's QEMU 7.2 speaks it) is in no binary
# package: take it from the source package of the QEMU that runs the plugin.
install_plugin_header() {
  local top=$1 dest="$1/qemu-plugin/include"
  [ -f "$dest/qemu-plugin.h" ] && return 0
  local work="$top/apt-src.tmp"
  rm -rf "$work"; mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
  echo "deb-src http://deb.debian.org/debian bookworm main" > "$work/sources.list"
  say "fetching QEMU's plugin header from Debian's qemu source package (one time)"
  private_apt "$work" update >/dev/null
  (cd "$work/src" && private_apt "$work" source --download-only qemu >/dev/null)
  mkdir -p "$dest"
  tar -xJf "$work"/src/qemu_*.orig.tar.xz -C "$work/src" --wildcards '*/include/qemu/qemu-plugin.h'
  cp "$work"/src/qemu-*/include/qemu/qemu-plugin.h "$dest/"
  rm -rf "$work"
}

case "${1:-}" in
  host) install_packages "${HOST_PACKAGES[@]}" ;;
  qemu) install_packages "${HOST_PACKAGES[@]}" "${QEMU_PACKAGES[@]}" ;;
  toolchain)
    [ $# -eq 2 ] || die "usage: $0 toolchain DIR"
    install_packages "${HOST_PACKAGES[@]}" "${QEMU_PACKAGES[@]}" "${TOOLCHAIN_PACKAGES[@]}"
    install_toolchain "$2"
    ;;
  bench)
    [ $# -eq 2 ] || die "usage: $0 bench DIR"
    install_packages "${BENCH_PACKAGES[@]}" "${QEMU_PACKAGES[@]}"
    install_plugin_header "$2"
    ;;
  engine) install_packages "${ENGINE_PACKAGES[@]}" ;;
  *) die "usage: $0 host | qemu | toolchain DIR | bench DIR | engine" ;;
esac

#!/usr/bin/env bash
# Installs or reuses everything `make test` needs on a Debian 12 (x86_64) machine:
#   1. host packages through apt (only those missing);
#   2. a GCC 15 riscv64 cross toolchain, extracted from Debian sid's packages into $TOOLCHAIN_DIR
#      (installing them with apt would pull a newer host libc into the system);
#   3. cmocka built for riscv64 (Debian's riscv64 package), copied into that toolchain's sysroot.
# The system's apt sources are never touched: the sid and riscv64 lists live in a private apt
# configuration under $TOOLCHAIN_DIR. A stamp file makes a second run download nothing.
# The Debian archive (mirror or proxy) is the one the system's own apt sources name.
#
# Usage: tools/setup-deps.sh host            host packages to build and test on a riscv64 board
#        tools/setup-deps.sh qemu            the same + QEMU user mode (your own cross compiler)
#        tools/setup-deps.sh toolchain DIR   the same + GCC 15 and riscv64 cmocka into DIR
#        tools/setup-deps.sh fuzz            host packages + clang-19 and its libFuzzer runtime
#        tools/setup-deps.sh bench DIR       gnuplot, bc, jq, and QEMU's plugin header (from Debian's
#                                            qemu source package) into DIR/qemu-plugin
#        tools/setup-deps.sh cycles          llvm-22 (llvm-mca-22, the X60 scheduling model; Debian 12's
#                                            bookworm-security suite)
#        tools/setup-deps.sh sid-qemu DIR    sid's qemu-user (static, runs Zvfbfwma code) into
#                                            DIR/sid-qemu; prints the qemu-riscv64 path
#        tools/setup-deps.sh archive [LIST PARTS]  prints "URI SUITE" of the Debian archive the
#                                            apt sources name (the system's, or the given files)
#        tools/setup-deps.sh engine          python3-torch and python3-numpy, the example engine's
#                                            PyTorch reference (make test-engine; 655 MiB)
#        tools/setup-deps.sh torch DIR       sid's riscv64 python3-torch, transformers and what they
#                                            need into DIR/torch/root (the Python package's tests)
#        tools/setup-deps.sh ggml DIR        sid's riscv64 ggml and llama.cpp (headers, libraries,
#                                            tools, their dependencies, libc) into DIR/ggml/root,
#                                            python3-gguf into DIR/ggml/python (the ggml plugin)
# On a machine without dpkg/apt nothing is installed: the packages are named instead.
set -euo pipefail

HOST_PACKAGES=(libyaml-dev libcmocka-dev pkg-config make gcc libjansson-dev)
QEMU_PACKAGES=(qemu-user clang-19)
TOOLCHAIN_PACKAGES=(patchelf binutils)
BENCH_PACKAGES=(gnuplot-nox bc jq)
# llvm-mca-22 and its scheduling model of the SpacemiT X60 (Debian 12: bookworm-security).
CYCLES_PACKAGES=(llvm-22)
FUZZ_PACKAGES=(clang-19 libclang-rt-19-dev)
ENGINE_PACKAGES=(python3-torch python3-numpy)
# python3-gguf runs on the host's python3; these are the host packages its modules import.
GGML_HOST_PACKAGES=(python3-numpy python3-yaml python3-tqdm)

GCC_PACKAGES=(gcc-15-riscv64-linux-gnu cpp-15-riscv64-linux-gnu gcc-15-riscv64-linux-gnu-base
  libgcc-15-dev-riscv64-cross binutils-riscv64-linux-gnu binutils-common libbinutils libctf0
  libsframe3 libjansson4 libc6 libisl23 libmpc3 libmpfr6 libgmp10 libzstd1 zlib1g libstdc++6
  libgcc-s1 libc6-dev-riscv64-cross libc6-riscv64-cross linux-libc-dev-riscv64-cross
  libgomp1-riscv64-cross libgcc-s1-riscv64-cross)

# libyaml: gemm-rvv-bench reads shapes files on the board (linked statically).
# libjansson: the example engine reads config.json and safetensors headers with it.
RISCV_PACKAGES=(libcmocka0 libcmocka-dev libyaml-0-2 libyaml-dev libjansson4 libjansson-dev)

# sid's linux-libc-dev-riscv64-cross holds only symbolic links into /usr/include and
# /usr/lib/linux/uapi/riscv, which this package (Architecture: all) fills; extracted into the
# same prefix, the links resolve inside the toolchain.
TARGET_HEADER_PACKAGES=(linux-libc-dev)

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
  # Runs of this script at once (make fetches the toolchain, ggml and sid's QEMU side by side)
  # install one at a time instead of failing on apt's locks.
  local lock="${TMPDIR:-/tmp}/gemm-rvv-apt.lock"
  if command -v flock >/dev/null && { exec 8>> "$lock"; } 2>/dev/null; then flock 8; fi
  say "installing host packages: ${missing[*]}"
  # A new machine may have no package lists yet; try without updating first to save time.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
    as_root apt-get update -q >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
  }
  exec 8>&- # the lock, released
}

# Folders to remove when the script stops before it is done (an error, Ctrl-C): no half-made
# download or tree is left behind. A step that finishes takes its folder off the list.
CLEANUP=()
cleanup() { local d; for d in "${CLEANUP[@]}"; do rm -rf "$d"; done; }
cleanup_add() { CLEANUP+=("$1"); }
cleanup_done() {
  local keep=() d
  for d in "${CLEANUP[@]}"; do [ "$d" = "$1" ] || keep+=("$d"); done
  CLEANUP=("${keep[@]}")
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# What to do when the download cannot be had: the way around it that needs no download.
OWN_TOOLCHAIN_HINT="or use a riscv64 cross compiler of your own (GCC >= 14 or clang >= 17, cmocka for
  riscv64 in its sysroot), which needs no download: make test CROSS=riscv64-linux-gnu-
  (docs/toolchain.md, 'Your own toolchain')"

# Debian's suite names and their aliases: a sources entry with one of these names a Debian
# archive. The security, updates and backports suites (bookworm-security, ...) are not the archive.
DEBIAN_SUITES='sid|unstable|experimental|testing|stable|oldstable|oldoldstable|duke|forky|trixie|bookworm|bullseye|buster|stretch|jessie'

# debian_archive [SOURCES_LIST SOURCES_PARTS]: prints "URI SUITE" of the first Debian archive the
# apt sources name (the system's own, or the given file and folder). apt itself reads them, so
# one-line and deb822 (.sources) entries, options in brackets and "Enabled: no" all count as apt
# counts them. A "deb" entry wins over a "deb-src" one. Prints nothing when there is none.
debian_archive() {
  local from=()
  # apt takes relative names as relative to /etc/apt.
  [ $# -eq 2 ] && from=(-o "Dir::Etc::sourcelist=$(realpath -m "$1")"
                        -o "Dir::Etc::sourceparts=$(realpath -m "$2")")
  # shellcheck disable=SC2016
  apt-get "${from[@]}" indextargets --no-release-info \
      --format '$(TARGET_OF) $(REPO_URI) $(RELEASE)' 2>/dev/null |
    awk -v suites="^($DEBIAN_SUITES)\$" '
      $3 ~ suites && $2 !~ /^cdrom:/ {
        uri = $2; sub(/\/+$/, "", uri)
        if ($1 == "deb" && !deb) deb = uri " " $3
        if ($1 == "deb-src" && !src) src = uri " " $3
      }
      END { if (deb) print deb; else if (src) print src }'
}

# The system's Debian archive, "URI SUITE", or a clear error.
system_archive() {
  local archive
  archive=$(debian_archive)
  [ -n "$archive" ] || die "the system's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/)
  name no Debian archive (an entry for a suite such as bookworm, stable or sid), so there is
  nowhere to fetch the toolchain from. Add your Debian mirror there,
  $OWN_TOOLCHAIN_HINT."
  echo "$archive"
}

# private_apt DIR ARGS...: apt-get with its own sources list, lists and cache under DIR. A sid
# mirror's Release file may have expired (a snapshot or a mirror that lags): accept it here only.
private_apt() {
  local dir=$1; shift
  apt-get -q -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" \
    -o Dir::State::status="$dir/status" -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
    -o Acquire::Check-Valid-Until=false "$@"
}

# apt_failed WHAT SUITE URI LOG HINT: the error for a failed apt step, naming each package apt
# could not find, or else quoting apt's own errors.
apt_failed() {
  local what=$1 suite=$2 uri=$3 log=$4 hint=$5 missing
  missing=$(sed -nE -e "s/^E: Unable to locate package (.*)/\1/p" \
    -e "s/^E: Package '([^']*)' has no installation candidate/\1/p" \
    -e "s/^E: Can't select candidate version from package ([^ ]*).*/\1/p" \
    -e "s/^E: Can not find version .* of package (.*)/\1/p" \
    -e "s/^E: Unable to find a source package for (.*)/\1/p" "$log" | sort -u | tr '\n' ' ')
  if [ -n "$missing" ]; then
    die "cannot get $what: no package ${missing% } in suite '$suite' of $uri
  (Debian may have renamed or removed it, or this mirror does not carry it).
  Name another mirror in the system's apt sources,
  $hint."
  fi
  die "cannot get $what from suite '$suite' of $uri. apt said:
$(grep -E '^(E|W|Err):' "$log" | head -8 | sed 's/^/  /')
  Check the mirror and the network (a proxy goes into apt's own configuration),
  $hint."
}

# fetch_debs DIR ENTRY EXTRA_APT_OPTS WHAT HINT PACKAGE...: downloads PACKAGEs into DIR/debs
# through a private apt configuration in DIR whose list reads "ENTRY main" (ENTRY: "deb URI
# SUITE", "deb [arch=riscv64] URI SUITE" or "deb-src URI SUITE": then source packages). WHAT
# names the download in errors, HINT says what to do instead.
fetch_debs() {
  local dir=$1 entry=$2 opts=$3 what=$4 hint=$5; shift 5
  local words uri suite
  read -r -a words <<< "$entry"
  uri=${words[-2]} suite=${words[-1]}
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
  echo "$entry main" > "$dir/sources.list"
  : > "$dir/status"
  # apt-get update may exit with 0 when an index failed to download: read its errors too.
  # shellcheck disable=SC2086
  if ! private_apt "$dir" $opts update > "$dir/update.log" 2>&1 ||
     grep -qE '^(E|W): (Failed to fetch|The repository|Some index files)' "$dir/update.log"; then
    apt_failed "$what" "$suite" "$uri" "$dir/update.log" "$hint"
  fi
  local get=(download)
  [ "${words[0]}" = deb-src ] && get=(source --download-only)
  # shellcheck disable=SC2086
  (cd "$dir/debs" && private_apt "$dir" $opts "${get[@]}" "$@") > "$dir/download.log" 2>&1 ||
    apt_failed "$what" "$suite" "$uri" "$dir/download.log" "$hint"
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

# include_dirs GCC: the folders GCC searches for <...> headers, one a line.
include_dirs() {
  "$1" -E -v -x c /dev/null -o /dev/null 2>&1 |
    sed -n '/^#include <\.\.\.> search starts here:/,/^End of search list/{/^ /s/^ //p}'
}

# Debian builds its cross compilers for a system root of "/": after the toolchain's own include
# folders GCC searches the host's /usr/include/riscv64-linux-gnu and /usr/include, so a header
# the toolchain lacks would silently come from the host. A file named `specs` in GCC's own folder
# is read in place of the built-in specs: the built-in ones plus -isysroot PREFIX for every
# preprocessing turn those two places into PREFIX/usr/include/..., inside the toolchain.
# (-isysroot moves header search only; linking is not affected.)
write_specs() {
  local prefix=$1 gcc="$1/usr/bin/riscv64-linux-gnu-gcc-15" dir outside=()
  local specs="$prefix/usr/lib/gcc-cross/riscv64-linux-gnu/15/specs"
  rm -f "$specs"
  { "$gcc" -dumpspecs; printf '*cpp:\n+ -isysroot %s\n\n' "$prefix"; } > "$specs.tmp"
  mv "$specs.tmp" "$specs"
  while read -r dir; do
    case "$(realpath -m "$dir")/" in "$prefix"/*) ;; *) outside+=("$dir") ;; esac
  done < <(include_dirs "$gcc")
  [ ${#outside[@]} -eq 0 ] || die "GCC still searches for headers outside $prefix: ${outside[*]}"
}

# The sysroot's kernel headers (include/linux, include/asm, ...) are links into
# PREFIX/usr/include and PREFIX/usr/lib/linux/uapi, which TARGET_HEADER_PACKAGES fill. A
# toolchain made before those were fetched has links that point nowhere: the next run repairs it
# in place (fetching only these headers), so existing machines need no fresh download.
install_target_headers() {
  local top=$1 prefix=$2 stamp="$1/.headers"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$prefix" ]; then return 0; fi
  local include="$prefix/usr/riscv64-linux-gnu/include" deb dangling
  if [ -n "$(find "$include" -xtype l -print -quit)" ]; then
    local archive uri work="$top.tmp"
    archive=$(system_archive) || exit 1
    uri=${archive% *}
    say "fetching the kernel headers for riscv64 (${TARGET_HEADER_PACKAGES[*]}) from $uri (one time)"
    rm -rf "$work"; cleanup_add "$work"
    fetch_debs "$work/apt-sid" "deb $uri sid" "" "the kernel headers for riscv64" \
      "$OWN_TOOLCHAIN_HINT" "${TARGET_HEADER_PACKAGES[@]}"
    for deb in "$work"/apt-sid/debs/*.deb; do dpkg -x "$deb" "$prefix"; done
    rm -rf "$work"; cleanup_done "$work"
  fi
  dangling=$(find "$include" -xtype l | head -3)
  [ -z "$dangling" ] || die "links in $include still point nowhere, e.g.
  ${dangling//$'\n'/$'\n'  }
  remove $top to fetch the toolchain anew (make distclean),
  $OWN_TOOLCHAIN_HINT."
  write_specs "$prefix"
  echo "$prefix" > "$stamp"
}

install_toolchain() {
  local top=$1
  case "$top" in *[[:space:]]*)
    die "the toolchain folder '$top' has white space in its path, which GCC's specs and make
  cannot take: set TOOLCHAIN_DIR to another folder" ;;
  esac
  # Two builds sharing DIR (several checkouts, make -j) fetch one at a time; the second finds
  # the stamps written. The lock is released when this script ends. DIR is taken by its real
  # path: checkouts that reach one folder through symbolic links share its stamp, not redo it.
  mkdir -p "$top"
  top=$(cd "$top" && pwd -P)
  local prefix="$top/gcc15" stamp="$top/.complete"
  if command -v flock >/dev/null; then exec 9> "$top/.lock"; flock 9; fi
  # The stamp records the absolute prefix the programs were patched for and the package lists:
  # a moved tree, or one made from other packages, is redone.
  local want="$prefix ${GCC_PACKAGES[*]} ${RISCV_PACKAGES[*]}"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    install_target_headers "$top" "$prefix"
    return 0
  fi
  command -v dpkg >/dev/null || die "fetching the toolchain needs Debian's dpkg and apt,
  $OWN_TOOLCHAIN_HINT"
  local archive uri work="$top.tmp"
  archive=$(system_archive) || exit 1
  uri=${archive% *}
  say "fetching GCC 15 for riscv64, and cmocka and libyaml for riscv64, from $uri into $top (one time)"
  rm -rf "$work"; cleanup_add "$work"; mkdir -p "$work"

  fetch_debs "$work/apt-sid" "deb $uri sid" "" "GCC 15 for riscv64" "$OWN_TOOLCHAIN_HINT" \
    "${GCC_PACKAGES[@]}" "${TARGET_HEADER_PACKAGES[@]}"
  fetch_debs "$work/apt-riscv64" "deb [arch=riscv64] $uri stable" \
    "-o APT::Architectures::=riscv64 -o APT::Architecture=riscv64" "cmocka for riscv64" \
    "$OWN_TOOLCHAIN_HINT" "${RISCV_PACKAGES[@]}"

  # Extract straight into the final place: the patched interpreter path is absolute. Until the
  # stamp is written the tree counts as half-made: removed if this run stops, made again by the next.
  local deb
  rm -f "$stamp" "$top/.headers"
  rm -rf "$prefix"; cleanup_add "$prefix"; mkdir -p "$prefix"
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
  rm -rf "$work"; cleanup_done "$work"
  install_target_headers "$top" "$prefix"
  echo "$want" > "$stamp"
  cleanup_done "$prefix"
  say "toolchain ready: $prefix/usr/bin/riscv64-linux-gnu-gcc-15"
}

# QEMU's TCG plugin API header (version 1, as Debian 12's QEMU 7.2 speaks it) is in no binary
# package: take it from the source package of the QEMU that runs the plugin, in the suite the
# system's sources name.
install_plugin_header() {
  local top=$1 dest="$1/qemu-plugin/include"
  [ -f "$dest/qemu-plugin.h" ] && return 0
  local work="$top/apt-src.tmp" archive
  archive=$(system_archive) || exit 1
  rm -rf "$work"; cleanup_add "$work"
  say "fetching QEMU's plugin header from Debian's qemu source package (one time)"
  fetch_debs "$work" "deb-src $archive" "" "QEMU's plugin header (source package qemu)" \
    "or put qemu-plugin.h of QEMU $(qemu-riscv64 --version 2>/dev/null | sed -n '1s/.*version \([0-9.]*\).*/\1/p')
  (include/qemu/qemu-plugin.h in QEMU's source) into $dest yourself" qemu
  mkdir -p "$dest"
  tar -xJf "$work"/debs/qemu_*.orig.tar.xz -C "$work/debs" --wildcards '*/include/qemu/qemu-plugin.h'
  cp "$work"/debs/qemu-*/include/qemu/qemu-plugin.h "$dest/"
  rm -rf "$work"; cleanup_done "$work"
}

# Debian 12's QEMU 7.2 has no BF16 vector instructions; sid's qemu-user (11.x) has them
# (-cpu rv64,v=true,zvfbfmin=true,zvfbfwma=true). Its programs are static, so `dpkg -x` of the one
# package is all it takes on Debian 12; nothing is installed into the system.
install_sid_qemu() {
  local top=$1 prefix="$1/sid-qemu" stamp="$1/sid-qemu.complete"
  mkdir -p "$top"
  if command -v flock >/dev/null; then exec 9> "$top/sid-qemu.lock"; flock 9; fi
  if [ ! -f "$stamp" ] || [ ! -x "$prefix/usr/bin/qemu-riscv64" ]; then
    command -v dpkg >/dev/null || die "fetching sid's QEMU needs Debian's dpkg and apt"
    say "fetching sid's qemu-user (static QEMU with Zvfbfwma) into $prefix (one time)"
    local work="$top/sid-qemu.tmp" deb archive
    archive=$(system_archive) || exit 1
    rm -rf "$work" "$prefix"; cleanup_add "$work"; mkdir -p "$work" "$prefix"
    fetch_debs "$work" "deb ${archive% *} sid" "" "sid's qemu-user" \
      "or pass SID_QEMU=/path/to/qemu-riscv64 (one that runs Zvfbfwma)" qemu-user
    for deb in "$work"/debs/qemu-user_*.deb; do dpkg -x "$deb" "$work/root"; done
    # The package holds every target (about 460 MB); only the riscv64 one is kept.
    mkdir -p "$prefix/usr/bin"
    mv "$work/root/usr/bin/qemu-riscv64" "$prefix/usr/bin/"
    rm -rf "$work"; cleanup_done "$work"
    "$prefix/usr/bin/qemu-riscv64" --version >/dev/null || die "sid's qemu-riscv64 does not run here"
    "$prefix/usr/bin/qemu-riscv64" --version | head -n 1 > "$stamp"
  fi
  echo "$prefix/usr/bin/qemu-riscv64"
}

# sid's riscv64 ggml 0.27 and llama.cpp, for the ggml plugin: its headers and libraries to build
# against, test-backend-ops and the llama tools to run under `qemu-riscv64 -L DIR/ggml/root`,
# and ggml's RPC backend (libggml0-backend-rpc: ggml/backends0/libggml-rpc.so; the server,
# usr/libexec/riscv64-linux-gnu/llama/bin/ggml-rpc-server, is in llama.cpp-tools-extra).
GGML_PACKAGES=(libggml0 libggml-dev libggml0-backend-rpc libllama0 llama.cpp-tools llama.cpp-tools-extra)
GGUF_PACKAGES=(python3-gguf)

# private_apt_cache DIR ARGS...: apt-cache on the private configuration private_apt uses.
private_apt_cache() {
  local dir=$1; shift
  apt-cache -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" \
    -o Dir::State::status="$dir/status" "$@"
}

# The packages PACKAGEs need to run, themselves included, one a line: `apt-cache depends
# --recurse` over hard dependencies only; virtual names (<...>) are left out, as their
# providers are listed too.
runtime_closure() {
  local dir=$1 opts=$2; shift 2
  # shellcheck disable=SC2086
  private_apt_cache "$dir" $opts depends --recurse --no-recommends --no-suggests \
      --no-conflicts --no-breaks --no-replaces --no-enhances "$@" |
    sed -n 's/:riscv64$//; /^[a-z0-9]/p' | sort -u
}

# apt's options for riscv64 packages on this machine.
RISCV64_APT="-o APT::Architectures::=riscv64 -o APT::Architecture=riscv64"

# start_root_fetch TOP NAME STAMP WANT WHAT: takes NAME's own lock in TOP (two builds sharing
# TOP fetch once, beside the toolchain's fetch); fails when STAMP says WANT was fetched
# already. Else sets ROOT_URI to the archive and makes the empty work folder TOP/NAME.tmp.
start_root_fetch() {
  local top=$1 name=$2 stamp=$3 want=$4 what=$5 archive
  mkdir -p "$top"
  if command -v flock >/dev/null; then exec 9> "$top/$name.lock"; flock 9; fi
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 1; fi
  command -v dpkg >/dev/null || die "fetching $name needs Debian's dpkg and apt"
  archive=$(system_archive) || exit 1
  ROOT_URI=${archive% *}
  say "fetching sid's riscv64 $what from $ROOT_URI into $top/$name (one time)"
  rm -rf "$top/$name.tmp"; cleanup_add "$top/$name.tmp"; mkdir -p "$top/$name.tmp"
}

# Everything is extracted into DIR/ggml (a riscv64 root and a python tree), made in DIR/ggml.tmp
# and moved into place once whole; the stamp names the packages it was made from.
install_ggml() {
  local top=$1 dest="$1/ggml" stamp="$1/ggml/.complete"
  local want="${GGML_PACKAGES[*]} ${GGUF_PACKAGES[*]}"
  install_packages "${GGML_HOST_PACKAGES[@]}"
  start_root_fetch "$top" ggml "$stamp" "$want" "ggml, llama.cpp and python3-gguf" || return 0
  local uri=$ROOT_URI work="$top/ggml.tmp" deb opts=$RISCV64_APT
  local hint="or install ggml 0.27 and llama.cpp on a riscv64 Debian sid system"
  # The named packages first (apt names any it cannot find), then what they need to run.
  fetch_debs "$work/apt" "deb [arch=riscv64] $uri sid" "$opts" "ggml and llama.cpp for riscv64" \
    "$hint" "${GGUF_PACKAGES[@]}" "${GGML_PACKAGES[@]}"
  local p
  mkdir -p "$work/python"
  for p in "${GGUF_PACKAGES[@]}"; do
    for deb in "$work/apt/debs/${p}"_*.deb; do dpkg -x "$deb" "$work/python"; rm "$deb"; done
  done
  local closure needed
  closure=$(runtime_closure "$work/apt" "$opts" "${GGML_PACKAGES[@]}" 2> "$work/apt/depends.log") ||
    apt_failed "the dependencies of ggml" sid "$uri" "$work/apt/depends.log" "$hint"
  needed=$(grep -vxF -f <(printf '%s\n' "${GGML_PACKAGES[@]}") <<< "$closure" || true)
  # shellcheck disable=SC2086
  [ -z "$needed" ] || (cd "$work/apt/debs" && private_apt "$work/apt" $opts download $needed) \
    > "$work/apt/download.log" 2>&1 ||
    apt_failed "the dependencies of ggml" sid "$uri" "$work/apt/download.log" "$hint"
  mkdir -p "$work/root"
  for deb in "$work"/apt/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
  # The programs ask for /lib/ld-linux-riscv64-lp64d.so.1; a merged-/usr system links /lib.
  [ -e "$work/root/lib" ] || ln -s usr/lib "$work/root/lib"
  [ -e "$work/root/lib64" ] || ln -s usr/lib64 "$work/root/lib64"
  [ -f "$work/root/usr/include/ggml-backend.h" ] || die "libggml-dev gave no ggml-backend.h"
  echo "$closure" > "$work/root/packages.txt"
  rm -rf "$dest"; mkdir -p "$dest"
  mv "$work/root" "$work/python" "$dest/"
  rm -rf "$work"; cleanup_done "$work"
  echo "$want" > "$stamp"
  say "ggml ready: $dest/root (riscv64), $dest/python (python3-gguf)"
}

# sid's riscv64 Python and PyTorch, for the gemm_rvv Python package's tests: python3-torch,
# transformers (a Llama to patch), numpy and what they need to run, extracted into DIR/torch/root
# (run with `qemu-riscv64 -L DIR/torch/root DIR/torch/root/usr/bin/python3`). About 200
# packages, 208 MB to download.
TORCH_PACKAGES=(python3-torch python3-transformers python3-safetensors python3-numpy)

# The links Debian's install scripts would make in a root unpacked with `dpkg -x`: the
# merged-/usr ones, and the BLAS and LAPACK alternatives torch's libraries ask for.
link_root() {
  local root=$1 d lib="$1/usr/lib/riscv64-linux-gnu"
  for d in lib bin sbin; do [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"; done
  [ -e "$lib/libblas.so.3" ] || ln -s blas/libblas.so.3 "$lib/libblas.so.3"
  [ -e "$lib/liblapack.so.3" ] || ln -s lapack/liblapack.so.3 "$lib/liblapack.so.3"
}

install_torch() {
  local top=$1 dest="$1/torch" stamp="$1/torch/.complete" want="${TORCH_PACKAGES[*]}"
  start_root_fetch "$top" torch "$stamp" "$want" "python3-torch and transformers" || return 0
  local uri=$ROOT_URI work="$top/torch.tmp" deb closure opts=$RISCV64_APT
  local hint="or run the tests on a riscv64 Debian sid system with python3-torch installed"
  fetch_debs "$work/apt" "deb [arch=riscv64] $uri sid" "$opts" "PyTorch for riscv64" \
    "$hint" "${TORCH_PACKAGES[@]}"
  closure=$(runtime_closure "$work/apt" "$opts" "${TORCH_PACKAGES[@]}" 2> "$work/apt/depends.log") ||
    apt_failed "the dependencies of PyTorch" sid "$uri" "$work/apt/depends.log" "$hint"
  # shellcheck disable=SC2086
  (cd "$work/apt/debs" && rm -f ./*.deb && private_apt "$work/apt" $opts download $closure) \
    > "$work/apt/download.log" 2>&1 ||
    apt_failed "the dependencies of PyTorch" sid "$uri" "$work/apt/download.log" "$hint"
  mkdir -p "$work/root"
  for deb in "$work"/apt/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
  link_root "$work/root"
  [ -x "$work/root/usr/bin/python3" ] || die "the packages gave no usr/bin/python3"
  echo "$closure" > "$work/root/packages.txt"
  rm -rf "$dest"; mkdir -p "$dest"
  mv "$work/root" "$dest/"
  rm -rf "$work"; cleanup_done "$work"
  echo "$want" > "$stamp"
  say "PyTorch ready: $dest/root (riscv64)"
}

# Tests source this file to call its functions one by one; run as a program, it does its job.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "${1:-}" in
  host) install_packages "${HOST_PACKAGES[@]}" ;;
  qemu) install_packages "${HOST_PACKAGES[@]}" "${QEMU_PACKAGES[@]}" ;;
  toolchain)
    [ $# -eq 2 ] || die "usage: $0 toolchain DIR"
    install_packages "${HOST_PACKAGES[@]}" "${QEMU_PACKAGES[@]}" "${TOOLCHAIN_PACKAGES[@]}"
    install_toolchain "$2"
    ;;
  fuzz) install_packages "${HOST_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}" ;;
  bench)
    [ $# -eq 2 ] || die "usage: $0 bench DIR"
    install_packages "${BENCH_PACKAGES[@]}" "${QEMU_PACKAGES[@]}"
    install_plugin_header "$2"
    ;;
  cycles) install_packages "${CYCLES_PACKAGES[@]}" ;;
  sid-qemu)
    [ $# -eq 2 ] || die "usage: $0 sid-qemu DIR"
    install_sid_qemu "$2"
    ;;
  archive)
    [ $# -eq 1 ] || [ $# -eq 3 ] || die "usage: $0 archive [SOURCES_LIST SOURCES_PARTS_DIR]"
    shift
    debian_archive "$@"
    ;;
  engine) install_packages "${ENGINE_PACKAGES[@]}" ;;
  ggml)
    [ $# -eq 2 ] || die "usage: $0 ggml DIR"
    # apt runs in a folder of its own below DIR: its paths must not be relative.
    install_ggml "$(realpath -m "$2")"
    ;;
  torch)
    [ $# -eq 2 ] || die "usage: $0 torch DIR"
    install_torch "$(realpath -m "$2")"
    ;;
  *) die "usage: $0 host | qemu | fuzz | toolchain DIR | bench DIR | cycles | engine | sid-qemu DIR | ggml DIR | torch DIR | archive [LIST PARTS]" ;;
esac

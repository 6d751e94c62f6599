#!/usr/bin/env bash
# When the toolchain fetch fails it says what failed and what to do, and leaves no half-made
# folder behind (neither DIR.tmp nor DIR/gcc15). Each case runs tools/setup-deps.sh's
# install_toolchain in a bash of its own, on a private folder, with one part replaced:
#   missing-package  a package name that does not exist, against the system's Debian archive
#                    (the only case that uses the network: sid's package lists, a few seconds);
#   no-suite         a file: mirror without a sid suite;
#   broken-deb       a download that is not a .deb: extraction fails half-way;
#   interrupted      SIGTERM while the download runs.
# Usage: tests/setup-deps/test_fetch_errors.sh
# shellcheck disable=SC2016  # the code in single quotes runs in a bash of its own
set -u
cd "$(dirname "$0")/../.." || exit 1
command -v apt-get >/dev/null || { tools/report-skip test-setup-deps "fetch error test: no apt-get here"; exit 0; }
scratch=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$scratch"' EXIT
passed=0 failed=0

# fail CASE MESSAGE
fail() { failed=$((failed + 1)); echo "FAILED: $1: $2"; }

# run_case CASE BASH_CODE: runs install_toolchain on $scratch/CASE/tc after BASH_CODE (which may
# redefine functions and lists); its stderr goes to $scratch/CASE.log, its status to $rc.
run_case() {
  local name=$1 code=$2
  mkdir -p "$scratch/$name"
  bash -c "source tools/setup-deps.sh; $code
           install_toolchain \"\$1\"" _ "$scratch/$name/tc" 2> "$scratch/$name.log"
  rc=$?
}

# check CASE WANT_RC PATTERN...: the status, each extended regex in the message, no leftovers.
check() {
  local name=$1 want=$2 pattern bad=0; shift 2
  [ "$rc" = "$want" ] || { fail "$name" "exit status $rc, expected $want"; bad=1; }
  for pattern in "$@"; do
    grep -qE -- "$pattern" "$scratch/$name.log" || { fail "$name" "no /$pattern/ in the message"; bad=1; }
  done
  local left
  for left in "$scratch/$name/tc.tmp" "$scratch/$name/tc/gcc15" "$scratch/$name/tc/.complete"; do
    [ ! -e "$left" ] || { fail "$name" "left behind: $left"; bad=1; }
  done
  if [ "$bad" -eq 0 ]; then passed=$((passed + 1)); else sed 's/^/    | /' "$scratch/$name.log"; fi
}

archive=$(tools/setup-deps.sh archive)
if [ -z "$archive" ]; then
  tools/report-skip test-setup-deps "missing-package case: the system's apt sources name no Debian archive"
else
  run_case missing-package 'GCC_PACKAGES=(gcc-15-riscv64-linux-gnu no-such-package-gemm-rvv)'
  # Offline (a second `make test` needs no network otherwise) the archive cannot be reached.
  if grep -qE "Could not resolve|Temporary failure resolving|Could not connect|Network is unreachable" \
       "$scratch/missing-package.log"; then
    tools/report-skip test-setup-deps "missing-package case: ${archive% *} cannot be reached from here"
  else
    check missing-package 1 "no package no-such-package-gemm-rvv in suite 'sid' of ${archive% *}" \
      'CROSS=riscv64-linux-gnu-'
  fi
fi

mkdir -p "$scratch/empty-mirror"
run_case no-suite "system_archive() { echo 'file:$scratch/empty-mirror bookworm'; }"
check no-suite 1 "cannot get GCC 15 for riscv64 from suite 'sid' of file:$scratch/empty-mirror" \
  'apt said:' '  (E|Err|W):' 'CROSS=riscv64-linux-gnu-'

run_case broken-deb 'fetch_debs() { mkdir -p "$1/debs"; echo "not a deb" > "$1/debs/junk.deb"; }'
check broken-deb 2 'dpkg-deb'

# The "download" marks that it started, then waits; the whole process group gets SIGTERM, as
# from a terminal's Ctrl-C or a CI job being cancelled.
mkdir -p "$scratch/interrupted"
setsid bash -c 'source tools/setup-deps.sh
  fetch_debs() { mkdir -p "$1/debs"; touch "$1/../started"; sleep 60; }
  install_toolchain "$1"' _ "$scratch/interrupted/tc" 2> "$scratch/interrupted.log" &
pid=$!
for _ in $(seq 100); do [ -e "$scratch/interrupted/tc.tmp/started" ] && break; sleep 0.1; done
if [ -e "$scratch/interrupted/tc.tmp/started" ]; then
  kill -TERM -- -"$pid"
  wait "$pid"; rc=$?
  check interrupted 143
else
  kill -TERM -- -"$pid"; wait "$pid"
  fail interrupted "the fake download never started"
fi

echo "toolchain fetch errors: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

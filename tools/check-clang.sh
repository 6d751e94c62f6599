#!/usr/bin/env bash
# Compiles generated kernel sources with clang as well as GCC, warnings as errors, so the
# generated C stays portable C11 and not GCC's dialect. Kernels need only the compiler's own
# headers (riscv_vector.h, stddef.h, stdint.h), hence -ffreestanding and no sysroot.
# Without CLANG the check is skipped, not passed: it says so (tools/report-skip), and the test
# tiers count it as skipped.
# No SOURCE, or one that is missing, fails.
# Usage: tools/check-clang.sh CLANG SOURCE...
set -u
[ $# -ge 1 ] || { echo "usage: $0 CLANG SOURCE..." >&2; exit 2; }
clang=$1; shift
if ! command -v "$clang" >/dev/null; then
  "$(dirname "$0")/report-skip" test-clang "$clang not found"
  exit 0
fi
[ $# -ge 1 ] || { echo "clang: no sources given: nothing checked" >&2; exit 1; }
ok=0 bad=0
for src in "$@"; do
  march=rv64gcv
  case $src in *zvfbfwma*) march=rv64gcv_zvfbfwma ;; esac # as mk/lib.mk builds it
  if "$clang" --target=riscv64-linux-gnu -march=$march -std=c11 -O2 -Wall -Wextra -Werror \
       -ffreestanding -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE -Iruntime -Iinclude ${CLANG_INCLUDE:-} \
       -fsyntax-only "$src"; then ok=$((ok + 1)); else
    bad=$((bad + 1)); echo "CLANG FAILED: $src"; fi
done
echo "generated sources compiled by $clang:"
echo "clang: $ok passed, $bad failed"
[ "$bad" -eq 0 ]

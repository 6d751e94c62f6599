#!/usr/bin/env bash
# Runs target test programs in every configuration and says which failed.
#   under QEMU (default): VLEN 128, 256, 512, 1024, and VLEN 256 with tail and masked-off
#   elements set to all ones (rvv_ta_all_1s, rvv_ma_all_1s), which catches code that relies on
#   them being left alone;
#   and, for the programs named in NO_V_PROGRAMS (basenames), on a core without V
#   (-cpu rv64,v=false) with GEMM_RVV_TEST_NO_V=1: the runtime must serve every call with the
#   fallback there, and every "digest:" line a program prints must be the same in all runs;
#   with SID_QEMU=PATH (sid's qemu-riscv64, 11.x: tools/setup-deps.sh sid-qemu DIR) also VLEN 128,
#   256 and 1024 on a core with Zvfbfmin and Zvfbfwma, which Debian 12's QEMU 7.2 lacks. Each run
#   gets GEMM_RVV_TEST_EXPECT_ISA, the kernel variant its core must get (zvfbfwma there, base
#   under 7.2), for the tests that check the choice;
#   NATIVE=1: once, on this riscv64 machine.
# Under QEMU each run goes through tools/riscv64-run, the command users run programs with.
# Environment: QEMU_SYSROOT (the target's sysroot, for the dynamic loader and libcmocka),
# JOBS (parallel runs, default: the number of CPUs), LOG_DIR (default build/test/logs).
# Usage: tools/run-target-tests.sh PROGRAM...
set -u

[ $# -gt 0 ] || { echo "usage: $0 PROGRAM..." >&2; exit 2; }
LOG_DIR=${LOG_DIR:-build/test/logs}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$LOG_DIR"
rm -f "$LOG_DIR"/*.log "$LOG_DIR"/*.rc

if [ "${NATIVE:-0}" = 1 ]; then
  CONFIGS=("native")
else
  CONFIGS=("vlen=128" "vlen=256" "vlen=512" "vlen=1024"
           "vlen=256,rvv_ta_all_1s=true,rvv_ma_all_1s=true" "v=false")
  if [ -n "${SID_QEMU:-}" ]; then
    [ -x "$SID_QEMU" ] && [ "$(basename "$SID_QEMU")" = qemu-riscv64 ] ||
      { echo "error: SID_QEMU=$SID_QEMU is not a program named qemu-riscv64" >&2; exit 1; }
    CONFIGS+=("sid,vlen=128" "sid,vlen=256" "sid,vlen=1024")
  fi
  command -v qemu-riscv64 >/dev/null || { echo "error: qemu-riscv64 not found (Debian: qemu-user)" >&2; exit 1; }
fi
RUN=$(cd "$(dirname "$0")" && pwd)/riscv64-run

# One job: run PROGRAM in CONFIG, keeping its output and exit status.
run_one() {
  local cfg=$1 prog=$2 tag
  tag="$(basename "$prog")@${cfg//[=,]/_}"
  if [ "$cfg" = native ]; then
    "$prog" > "$LOG_DIR/$tag.log" 2>&1
  elif [ "$cfg" = v=false ]; then
    GEMM_RVV_TEST_NO_V=1 "$RUN" --cpu v=false "$prog" > "$LOG_DIR/$tag.log" 2>&1
  elif [ "${cfg#sid,}" != "$cfg" ]; then
    # sid's binary is called qemu-riscv64 too: first in PATH, the wrapper runs it.
    PATH="$(dirname "$SID_QEMU"):$PATH" GEMM_RVV_TEST_EXPECT_ISA=zvfbfwma "$RUN" \
      --cpu "zvfbfmin=true,zvfbfwma=true,${cfg#sid,}" "$prog" > "$LOG_DIR/$tag.log" 2>&1
  else
    GEMM_RVV_TEST_EXPECT_ISA=base "$RUN" --cpu "$cfg" "$prog" > "$LOG_DIR/$tag.log" 2>&1
  fi
  echo $? > "$LOG_DIR/$tag.rc"
}
export -f run_one
export LOG_DIR QEMU_SYSROOT RUN SID_QEMU

# Whether PROGRAM runs in CONFIG: the no-V configuration only takes NO_V_PROGRAMS.
runs_in() {
  [ "$1" != v=false ] || [[ " ${NO_V_PROGRAMS:-} " == *" $(basename "$2") "* ]]
}

for cfg in "${CONFIGS[@]}"; do
  for prog in "$@"; do runs_in "$cfg" "$prog" && printf '%s\0%s\0' "$cfg" "$prog"; done
done | xargs -0 -n 2 -P "$JOBS" bash -c 'run_one "$0" "$1"'

passed=0 failed=0 failures=()
for cfg in "${CONFIGS[@]}"; do
  for prog in "$@"; do
    runs_in "$cfg" "$prog" || continue
    tag="$(basename "$prog")@${cfg//[=,]/_}"
    rc=$(cat "$LOG_DIR/$tag.rc" 2>/dev/null || echo 127)
    echo "=== $(basename "$prog") on ${cfg} ==="
    cat "$LOG_DIR/$tag.log"
    if [ "$rc" = 0 ]; then passed=$((passed + 1)); else
      failed=$((failed + 1)); failures+=("$(basename "$prog") on $cfg (exit $rc)"); fi
  done
done
# The same output bits everywhere: a program's digest lines agree across configurations.
for prog in "$@"; do
  digests=$(cat "$LOG_DIR/$(basename "$prog")"@*.log 2>/dev/null | grep '^digest:' | sort -u)
  if [ "$(printf '%s\n' "$digests" | grep -c .)" -gt 1 ]; then
    failed=$((failed + 1)); failures+=("$(basename "$prog"): outputs differ between configurations")
    printf 'digests of %s:\n%s\n' "$(basename "$prog")" "$digests"
  fi
done
echo
echo "target test runs (program x configuration):"
echo "runs: $passed passed, $failed failed"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Runs target test programs in every configuration and says which failed.
#   under QEMU (default): VLEN 128, 256, 512, 1024, and VLEN 256 with tail and masked-off
#   elements set to all ones (rvv_ta_all_1s, rvv_ma_all_1s), which catches code that relies on
#   them being left alone;
#   NATIVE=1: once, on this riscv64 machine.
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
           "vlen=256,rvv_ta_all_1s=true,rvv_ma_all_1s=true")
  command -v qemu-riscv64 >/dev/null || { echo "error: qemu-riscv64 not found (Debian: qemu-user)" >&2; exit 1; }
fi

# One job: run PROGRAM in CONFIG, keeping its output and exit status.
run_one() {
  local cfg=$1 prog=$2 tag
  tag="$(basename "$prog")@${cfg//[=,]/_}"
  if [ "$cfg" = native ]; then
    "$prog" > "$LOG_DIR/$tag.log" 2>&1
  else
    QEMU_LD_PREFIX="${QEMU_SYSROOT:-}" qemu-riscv64 \
      -cpu "rv64,v=true,vext_spec=v1.0,$cfg" "$prog" > "$LOG_DIR/$tag.log" 2>&1
  fi
  echo $? > "$LOG_DIR/$tag.rc"
}
export -f run_one
export LOG_DIR QEMU_SYSROOT

for cfg in "${CONFIGS[@]}"; do
  for prog in "$@"; do printf '%s\0%s\0' "$cfg" "$prog"; done
done | xargs -0 -n 2 -P "$JOBS" bash -c 'run_one "$0" "$1"'

passed=0 failed=0 failures=()
for cfg in "${CONFIGS[@]}"; do
  for prog in "$@"; do
    tag="$(basename "$prog")@${cfg//[=,]/_}"
    rc=$(cat "$LOG_DIR/$tag.rc" 2>/dev/null || echo 127)
    echo "=== $(basename "$prog") on ${cfg} ==="
    cat "$LOG_DIR/$tag.log"
    if [ "$rc" = 0 ]; then passed=$((passed + 1)); else
      failed=$((failed + 1)); failures+=("$(basename "$prog") on $cfg (exit $rc)"); fi
  done
done
echo
echo "target test runs (program x configuration):"
echo "runs: $passed passed, $failed failed"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
[ "$failed" -eq 0 ]

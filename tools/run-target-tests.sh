#!/usr/bin/env bash
# Runs target test programs in every configuration and says which failed.
#   under QEMU (default): VLEN 128, 256, 512, 1024, and VLEN 256 with tail and masked-off
#   elements set to all ones (rvv_ta_all_1s, rvv_ma_all_1s), which catches code that relies on
#   them being left alone;
#   and, for the programs named in NO_V_PROGRAMS (basenames), on a core without V
#   (-cpu rv64,v=false) with GEMM_RVV_TEST_NO_V=1: the runtime must serve every call with the
#   fallback there, and every "digest:" line a program prints must be the same in all runs;
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
           "vlen=256,rvv_ta_all_1s=true,rvv_ma_all_1s=true" "v=false")
  command -v qemu-riscv64 >/dev/null || { echo "error: qemu-riscv64 not found (Debian: qemu-user)" >&2; exit 1; }
fi

# One job: run PROGRAM in CONFIG, keeping its output and exit status.
run_one() {
  local cfg=$1 prog=$2 tag
  tag="$(basename "$prog")@${cfg//[=,]/_}"
  if [ "$cfg" = native ]; then
    "$prog" > "$LOG_DIR/$tag.log" 2>&1
  elif [ "$cfg" = v=false ]; then
    QEMU_LD_PREFIX="${QEMU_SYSROOT:-}" GEMM_RVV_TEST_NO_V=1 qemu-riscv64 -cpu rv64,v=false \
      "$prog" > "$LOG_DIR/$tag.log" 2>&1
  else
    QEMU_LD_PREFIX="${QEMU_SYSROOT:-}" qemu-riscv64 \
      -cpu "rv64,v=true,vext_spec=v1.0,$cfg" "$prog" > "$LOG_DIR/$tag.log" 2>&1
  fi
  echo $? > "$LOG_DIR/$tag.rc"
}
export -f run_one
export LOG_DIR QEMU_SYSROOT

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

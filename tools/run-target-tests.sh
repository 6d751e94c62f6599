#!/usr/bin/env bash
# Runs target test programs in the configurations tests/matrix.txt gives them for one tier,
# and says which runs failed.
#   tools/run-target-tests.sh --tier quick|full MATRIX PROGRAM...
# Every PROGRAM (by basename) must have a line in MATRIX, and every line of MATRIX a PROGRAM.
# The configurations are named in MATRIX's header; each run gets GEMM_RVV_TEST_EXPECT_ISA, the
# kernel variant its core must get (base under QEMU 7.2, zvfbfwma under sid's QEMU),
# GEMM_RVV_TEST_TIER, and under sid GEMM_RVV_TEST_VARIANTS=zvfbfwma. The no-V runs set
# GEMM_RVV_TEST_NO_V=1: the runtime must serve every call with the fallback there. Each run
# of a program must print the same "digest:" lines (the bits of its outputs) as its others.
# NATIVE=1: each program once, on this riscv64 machine.
# Under QEMU each run goes through tools/riscv64-run, the command users run programs with.
# Environment: QEMU_SYSROOT (the target's sysroot, for the dynamic loader and libcmocka),
# SID_QEMU (sid's qemu-riscv64, 11.x; needed when a sid configuration is asked for), JOBS
# (parallel runs, default: the number of CPUs), LOG_DIR (default build/test/logs).
set -u

usage() { echo "usage: $0 --tier quick|full MATRIX PROGRAM..." >&2; exit 2; }
[ "${1:-}" = --tier ] && [ $# -ge 4 ] || usage
tier=$2 matrix=$3
shift 3
case $tier in quick) column=2 ;; full) column=3 ;; *) usage ;; esac
[ -r "$matrix" ] || { echo "error: cannot read the test matrix $matrix" >&2; exit 2; }

LOG_DIR=${LOG_DIR:-build/test/logs}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$LOG_DIR"
rm -f "$LOG_DIR"/*.log "$LOG_DIR"/*.rc "$LOG_DIR"/*.time "$LOG_DIR"/*.cpu
RUN=$(cd "$(dirname "$0")" && pwd)/riscv64-run

# The configurations of program $1 in this tier, one per line.
configs_of() {
  if [ "${NATIVE:-0}" = 1 ]; then echo native; return; fi
  awk -v p="$1" -v c="$column" '!/^#/ && $1 == p { gsub(",", "\n", $c); print $c }' "$matrix"
}

# Each program given has a line, and each line a program: a test is never dropped silently.
declared=$(awk '!/^#/ && NF { print $1 }' "$matrix" | sort)
given=$(for p in "$@"; do basename "$p"; done | sort)
if [ "$declared" != "$given" ]; then
  echo "error: the programs given and those of $matrix differ:" >&2
  diff <(echo "$declared") <(echo "$given") | sed -n 's/^< /  only in the matrix: /p; s/^> /  not in the matrix: /p' >&2
  exit 2
fi

needs_sid=0
for p in "$@"; do configs_of "$(basename "$p")" | grep -q '^sid' && needs_sid=1; done
if [ "${NATIVE:-0}" != 1 ]; then
  command -v qemu-riscv64 >/dev/null || { echo "error: qemu-riscv64 not found (Debian: qemu-user)" >&2; exit 1; }
  if [ "$needs_sid" = 1 ]; then
    [ -n "${SID_QEMU:-}" ] && [ -x "$SID_QEMU" ] && [ "$(basename "$SID_QEMU")" = qemu-riscv64 ] ||
      { echo "error: the matrix asks for sid's QEMU: SID_QEMU='${SID_QEMU:-}' is not a program named qemu-riscv64" >&2; exit 1; }
  fi
fi

# One job: run PROGRAM in CONFIG, keeping its output and exit status.
run_one() {
  local cfg=$1 prog=$2 tag vlen start
  tag="$(basename "$prog")@$cfg"
  start=$(date +%s%N)
  case $cfg in
    native) "$prog" ;;
    nov) GEMM_RVV_TEST_NO_V=1 "$RUN" --cpu v=false "$prog" ;;
    sid*) vlen=${cfg#sid}
          # sid's binary is called qemu-riscv64 too: first in PATH, the wrapper runs it.
          PATH="$(dirname "$SID_QEMU"):$PATH" GEMM_RVV_TEST_EXPECT_ISA=zvfbfwma \
            GEMM_RVV_TEST_VARIANTS=zvfbfwma "$RUN" --cpu "zvfh=true,zvfbfmin=true,zvfbfwma=true,vlen=$vlen" "$prog" ;;
    v*ones) vlen=${cfg#v}; vlen=${vlen%ones}
          GEMM_RVV_TEST_EXPECT_ISA=base "$RUN" \
            --cpu "vlen=$vlen,rvv_ta_all_1s=true,rvv_ma_all_1s=true" "$prog" ;;
    v[0-9]*) GEMM_RVV_TEST_EXPECT_ISA=base "$RUN" --cpu "vlen=${cfg#v}" "$prog" ;;
    *) echo "error: unknown configuration '$cfg' (tests/matrix.txt names them)"; false ;;
  esac > "$LOG_DIR/$tag.log" 2>&1
  echo $? > "$LOG_DIR/$tag.rc"
  # Wall and CPU time (the run's user + system, from times' children line), in seconds.
  times > "$LOG_DIR/$tag.cpu"
  awk -v wall=$((($(date +%s%N) - start) / 1000000)) 'NR == 2 {
      split($1, u, /[ms]/); split($2, s, /[ms]/)
      printf "%.1f %.1f\n", wall / 1000, u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
    "$LOG_DIR/$tag.cpu" > "$LOG_DIR/$tag.time"
  rm -f "$LOG_DIR/$tag.cpu"
}
export -f run_one
export LOG_DIR QEMU_SYSROOT RUN SID_QEMU
export GEMM_RVV_TEST_TIER=$tier

for prog in "$@"; do
  for cfg in $(configs_of "$(basename "$prog")"); do printf '%s\0%s\0' "$cfg" "$prog"; done
done | xargs -0 -n 2 -P "$JOBS" bash -c 'run_one "$0" "$1"'

passed=0 failed=0 failures=()
for prog in "$@"; do
  name=$(basename "$prog")
  for cfg in $(configs_of "$name"); do
    tag="$name@$cfg"
    rc=$(cat "$LOG_DIR/$tag.rc" 2>/dev/null || echo 127)
    read -r wall cpu < "$LOG_DIR/$tag.time" 2>/dev/null || wall=0 cpu=0
    echo "=== $name on $cfg ($wall s, $cpu s of CPU) ==="
    cat "$LOG_DIR/$tag.log"
    if [ "$rc" = 0 ]; then passed=$((passed + 1)); else
      failed=$((failed + 1)); failures+=("$name on $cfg (exit $rc)"); fi
  done
  # The same output bits everywhere: each run of the program prints the same digest lines as
  # its first run (a run that prints fewer, or none, differs too).
  first="" differ=0
  for cfg in $(configs_of "$name"); do
    mine=$(grep '^digest:' "$LOG_DIR/$name@$cfg.log" 2>/dev/null | sort)
    if [ -z "$first" ]; then first=${mine:-none}; elif [ "${mine:-none}" != "$first" ]; then differ=1; fi
  done
  if [ "$differ" = 1 ]; then
    failed=$((failed + 1)); failures+=("$name: outputs differ between configurations")
    echo "digests of $name:"
    for cfg in $(configs_of "$name"); do
      grep '^digest:' "$LOG_DIR/$name@$cfg.log" 2>/dev/null | sed "s/^/  $cfg: /" | grep . ||
        echo "  $cfg: no digest"
    done
  fi
done
echo
echo "target test runs ($tier tier, program x configuration):"
echo "runs: $passed passed, $failed failed"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
[ "$failed" -eq 0 ]

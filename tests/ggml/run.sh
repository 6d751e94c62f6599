#!/usr/bin/env bash
# The ggml plugin under sid's QEMU (whose riscv_hwprobe makes ggml load its RVV CPU variant),
# with sid's ggml 0.27 and its own test program, test-backend-ops:
#   1. the plugin built for the (N, K) of test-backend-ops' BF16 and Q8_0 MUL_MAT cases: every
#      BF16 or Q8_0 x FP32 MUL_MAT case must match ggml's CPU backend and its plans must serve
#      them (the full tier: every MUL_MAT case, those it hands to ggml's CPU backend too);
#   2. a plugin built for other shapes: it declines every weight (names them) and serves none,
#      and the cases still pass (ggml's CPU backend computes them for it);
#   3. the plugin in a ggml that reports another release: it refuses with a message naming both;
#   4. tests/ggml/plugin_api/: the plugin driven through ggml's public API against ggml's CPU
#      backend (products, empty and unselected nodes, read-back, views, memset, clear and
#      reset, a llama layer alone and through the scheduler, threads, supports_op);
#   5. every op, not only MUL_MAT: test-backend-ops' support mode on GEMM_RVV and on the CPU
#      backend must take the same cases (all of test-backend-ops' cases, every op), except the
#      FLASH_ATTN_EXT GEMM_RVV declines by design (DECLINED_CASES: sinks, caches other than
#      F16 and BF16, V's head dim other than K's); then test-backend-ops' test mode on
#      GEMM_RVV, every case it takes matching the CPU backend: the ops of llama.cpp's models
#      (OPS_QUICK) and FLASH_ATTN_EXT of llama-style shapes (FA_QUICK_PARAMS) in the quick
#      tier, every op in the full one; each op run must have a passing case (the log lists
#      them), and the FLASH_ATTN_EXT run the plugin's log line of the attention it computed.
# Usage: tests/ggml/run.sh PLUGIN OTHER_SHAPES_PLUGIN OTHER_RELEASE_STUB PLUGIN_API_TEST quick|full
#   quick: VLEN 256 (the K1's); full: also VLEN 128 and 1024, and VLEN 256 with Zvfbfwma;
#   plugin_api at VLEN 256 (quick), and at 128, 256 and 1024 with every product (full); the
#   other ops at VLEN 256: those of OPS_QUICK (quick), every op (full).
# Environment: GGML_ROOT (tools/setup-deps.sh ggml), SID_QEMU, LOG_DIR.
set -euo pipefail

[ $# -eq 5 ] || { echo "usage: $0 PLUGIN OTHER_PLUGIN OTHER_RELEASE_STUB PLUGIN_API_TEST quick|full" >&2; exit 2; }
plugin=$(realpath "$1") other=$(realpath "$2") stub=$(realpath "$3") api_test=$(realpath "$4") tier=$5
: "${GGML_ROOT:?GGML_ROOT: the riscv64 root of tools/setup-deps.sh ggml}"
: "${SID_QEMU:?SID_QEMU: the qemu-riscv64 of tools/setup-deps.sh sid-qemu}"
LOG_DIR=${LOG_DIR:-build/ggml-test/logs}
mkdir -p "$LOG_DIR"
tbo=$GGML_ROOT/usr/libexec/riscv64-linux-gnu/ggml/test-backend-ops
[ -x "$tbo" ] || { echo "error: $tbo missing: run make ggml-deps" >&2; exit 1; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The MUL_MAT cases run: BF16 and Q8_0 weights by FP32 activations (what the plans serve), or
# all (full tier). The quick tier leaves out those of N >= 1000 at M >= 3 (test-backend-ops'
# m and n; it keeps M = 2 there, odd M runs at the smaller N), the batches of 4 and 8 weights (bs=[4,.],
# [8,.]; it keeps those of 1 and 2) and the broadcasts of one weight over 4 activations of the
# unbatched weights (bs=[1,1],nr=[4,1]): the emulated products of both backends were most of
# the run's time.
cases=(-o MUL_MAT -p 'type_a=(bf16|q8_0),type_b=f32,(?!m=[0-9]{4},n=([3-9]|[0-9]{2}),)(?!.*bs=\[([48],|1,1\],nr=\[4,))')
# The declined weights' cases: the plugin built for other shapes serves none of them, and
# ggml's CPU backend computes each one twice; the quick tier takes those of N = 16 and 64.
declined_cases=(-o MUL_MAT -p 'type_a=(bf16|q8_0),type_b=f32,m=(16|64),n=[0-9]*,k=256,')
if [ "$tier" = full ]; then
  cases=(-o MUL_MAT)
  declined_cases=("${cases[@]}")
fi

# run LOG CPU PLUGIN CASES [QEMU OPTION...]: test-backend-ops' MUL_MAT tests of the array named
# CASES on GEMM_RVV, the library's threads 3 to begin with.
run() {
  local log=$1 cpu=$2 lib=$3; local -n run_cases=$4; shift 4
  GGML_BACKEND_PATH=$lib "$SID_QEMU" -L "$GGML_ROOT" -cpu "rv64,v=true,$cpu" \
    -E GEMM_RVV_THREADS=3 "$@" \
    "$tbo" test -b GEMM_RVV "${run_cases[@]}" > "$log" 2>&1
}

# count LOG: "PASSED TOTAL" of the GEMM_RVV backend's summary line.
count() { sed -n 's/^  \([0-9]*\)\/\([0-9]*\) tests passed$/\1 \2/p' "$1" | tail -n 1; }

served() {
  local cpu=$1 name=$2 log="$LOG_DIR/backend-ops-$2.log" rc=0 passed total
  run "$log" "$cpu" "$plugin" cases || rc=$?
  read -r passed total <<< "$(count "$log")"
  if [ "$rc" -ne 0 ] || [ -z "${total:-}" ] || [ "$passed" != "$total" ]; then
    fail "$name: test-backend-ops exit $rc, ${passed:-none}/${total:-none} passed ($log)"
    grep -E 'FAIL|error' "$log" | head -5 || true
    return
  fi
  [ "$total" -gt 0 ] || fail "$name: GEMM_RVV took no MUL_MAT case ($log)"
  grep -q ': plan M <= [0-9]* serves' "$log" || fail "$name: the log names no BF16 plan serving"
  grep -q ': Q8_0 plan M <= [0-9]* serves' "$log" || fail "$name: the log names no Q8_0 plan serving"
  # The library starts with GEMM_RVV_THREADS=3; test-backend-ops sets its own count through
  # the set-threads entry it finds by name.
  grep -q '^GEMM_RVV: loaded into ggml .*, 3 threads$' "$log" && grep -qE '^GEMM_RVV: [0-9]+ threads$' "$log" ||
    fail "$name: the thread count test-backend-ops set did not reach the library"
  local bf16 q8
  bf16=$(grep -c 'MUL_MAT(type_a=bf16' "$log" || true)
  q8=$(grep -c 'MUL_MAT(type_a=q8_0' "$log" || true)
  [ "$q8" -gt 0 ] || fail "$name: no Q8_0 MUL_MAT case ran ($log)"
  echo "$name: $passed/$total MUL_MAT cases ran on GEMM_RVV and matched the CPU backend" \
       "($bf16 BF16-weight and $q8 Q8_0-weight cases listed, the rest declined)"
}

declined() {
  local log="$LOG_DIR/backend-ops-other-shapes.log" rc=0 passed total
  run "$log" vlen=256 "$other" declined_cases || rc=$?
  read -r passed total <<< "$(count "$log")"
  [ "$rc" -eq 0 ] && [ -n "${total:-}" ] && [ "$passed" = "$total" ] ||
    fail "other shapes: test-backend-ops exit $rc, ${passed:-none}/${total:-none} passed ($log)"
  grep -q 'GEMM_RVV: declines .*no plan' "$log" || fail "other shapes: no declined weight named ($log)"
  ! grep -q 'plan M <= [0-9]* serves' "$log" || fail "other shapes: a plan served a weight it has no plan for ($log)"
  echo "other shapes: $(grep -c 'GEMM_RVV: declines' "$log") weights declined, none served; $passed/$total cases passed on ggml's CPU backend through GEMM_RVV"
}

refused() {
  local log="$LOG_DIR/backend-ops-other-release.log" rc=0
  run "$log" vlen=256 "$plugin" declined_cases -E "LD_PRELOAD=$stub" || rc=$?
  [ "$rc" -eq 0 ] || fail "other release: test-backend-ops exit $rc ($log)"
  grep -q 'GEMM_RVV: refusing to load: built for ggml 0.27 (backend API version 3), but this process runs ggml 0.21.0' "$log" ||
    fail "other release: no refusal naming both versions ($log)"
  ! grep -q 'loaded GEMM_RVV backend' "$log" || fail "other release: the plugin was loaded ($log)"
  echo "other release: refused ($(grep -o 'refusing to load.*0\.21\.0' "$log"))"
}

# api CPU NAME: plugin_api under sid's QEMU; its last line is "N passed, N failed", each failing
# case a line "FAIL NAME: ...".
api() {
  local cpu=$1 name=$2 log="$LOG_DIR/plugin-api-$2.log" rc=0 summary
  GGML_BACKEND_PATH=$plugin "$SID_QEMU" -L "$GGML_ROOT" -cpu "rv64,v=true,$cpu" \
    -E "GEMM_RVV_TEST_TIER=$tier" "$api_test" > "$log" 2> "$log.stderr" || rc=$?
  summary=$(tail -n 1 "$log")
  if [ "$rc" -ne 0 ]; then
    fail "plugin API $name: exit $rc, ${summary:-no summary} ($log, $log.stderr)"
    grep '^FAIL' "$log" | head -20
    return
  fi
  echo "plugin API $name: $summary"
}

# The ops a llama.cpp model's graph has besides MUL_MAT (the norms, rope, the attention without
# flash attention, the KV cache's writes, the FFN's gate, the embedding lookup, the residuals),
# the quick tier's op run, on the cases OPS_QUICK_PARAMS matches (a regular expression on a
# case's parameters, test-backend-ops' -p, ECMAScript): none with a dimension, count or size of
# 100 or more but 128 and 512 (a head, rope's context), none of a quantized type, none of an
# F16 `type=` (ADD, MUL, ROPE, the GLUs: llama.cpp runs them in F32; F16 stays in CPY and
# SET_ROWS, the KV cache's), rope in modes 0 and 2 (Llama's, NeoX's) without frequency
# factors: about 670 cases. GEMM_RVV hands these ops to ggml's CPU backend, so what they test is
# the hand-over (every op, views, in-place), not ggml's arithmetic; every case: the full tier.
OPS_QUICK=${OPS_QUICK:-ADD,MUL,SCALE,RMS_NORM,NORM,ROPE,SOFT_MAX,CPY,CONT,DUP,GET_ROWS,SET_ROWS,SWIGLU,GEGLU,SILU,GELU,ADD_ID,ARGMAX,SUM_ROWS}
OPS_QUICK_PARAMS=${OPS_QUICK_PARAMS:-'^(?!.*([[,=](?!(128|512)(\]|,))[0-9]{3}|=(q[0-9]|iq|tq|mxfp|nvfp)|(^|,)type=f16,|mode=(?!(0|2),)|ff=1))'}
# What GEMM_RVV's supports_op declines by design, though ggml's CPU backend takes it (a
# Perl-compatible expression on a case's name): FLASH_ATTN_EXT with attention sinks, a K or V
# cache other than F16 and BF16, or V's head dim other than K's (gemm_rvv_attention's rule).
DECLINED_CASES='^FLASH_ATTN_EXT\((hsk=([0-9]+),hsv=(?!\2,)|.*sinks=1|.*type_K=(?!(f16|bf16),)|.*type_V=(?!(f16|bf16),))'
# FLASH_ATTN_EXT in the quick tier: a GQA group of 4 at head dim 128 over 512 positions, 3
# rows, with ALiBi and soft-capping or neither (F16 cache), and a BF16 cache at head dim 64:
# 5 cases (the fallback under QEMU; the full tier runs every case).
FA_QUICK_PARAMS=${FA_QUICK_PARAMS:-'^(hsk=128,hsv=128,nh=4,nr23=\[4,1\],kv=512,nb=3,mask=1,.*prec=f32,.*permute=\[0,1,2,3\]|hsk=64,hsv=64,nh=4,nr23=\[1,1\],kv=113,nb=3,mask=1,.*type_K=bf16,.*permute=\[0,1,2,3\])'}

one_core=""
taskset -c 0 true 2>/dev/null && one_core="taskset -c 0"

strip_colors() { sed 's/\x1b\[[0-9;]*m//g' "$1"; }

# support_mode: test-backend-ops' support mode (no computation: each case's supports_op) on
# GEMM_RVV and on the CPU backend; the two must take the same cases but DECLINED_CASES.
support_mode() {
  local name log_g="$LOG_DIR/support-GEMM_RVV.log" log_c="$LOG_DIR/support-CPU.log" rc_g=0 rc_c=0
  GGML_BACKEND_PATH=$plugin "$SID_QEMU" -L "$GGML_ROOT" -cpu rv64,v=true,vlen=256 \
    "$tbo" support -b GEMM_RVV > "$log_g" 2>&1 || rc_g=$?
  "$SID_QEMU" -L "$GGML_ROOT" -cpu rv64,v=true,vlen=256 "$tbo" support -b CPU > "$log_c" 2>&1 || rc_c=$?
  if [ "$rc_g" -ne 0 ] || [ "$rc_c" -ne 0 ]; then
    fail "support mode: test-backend-ops exit $rc_g on GEMM_RVV ($log_g), $rc_c on CPU ($log_c)"
    return
  fi
  local cases_g cases_c
  cases_g=$(strip_colors "$log_g" | sed -n 's/^  \([A-Z_0-9]*(.*)\): SUPPORTED$/\1/p' | sort -u)
  cases_c=$(strip_colors "$log_c" | sed -n 's/^  \([A-Z_0-9]*(.*)\): SUPPORTED$/\1/p' | sort -u)
  local n_g n_c extra missing
  n_g=$(grep -c . <<< "$cases_g" || true) n_c=$(grep -c . <<< "$cases_c" || true)
  if [ "$n_c" -lt 1000 ]; then
    fail "support mode: the CPU backend took $n_c cases, not the thousands test-backend-ops has ($log_c)"
    return
  fi
  # Cases GEMM_RVV takes that the CPU backend does not (it could not compute them), and cases
  # the CPU backend takes that GEMM_RVV declines, but those of DECLINED_CASES.
  extra=$(comm -23 <(echo "$cases_g") <(echo "$cases_c"))
  missing=$(comm -13 <(echo "$cases_g") <(echo "$cases_c") | grep -vP "$DECLINED_CASES" || true)
  # Support mode places no tensor: a BF16 or Q8_0 tensor of a planned N x K is taken as packed
  # (in GEMM_RVV's buffer it would be), so GEMM_RVV declines the cases that read one with
  # anything but its own product (MUL_MAT by BF16 activations, OUT_PROD of a Q8_0 tensor); only
  # cases with a BF16 or Q8_0 tensor may be so.
  local bf16_declined
  bf16_declined=$(grep -cE '=(bf16|q8_0)' <<< "$missing" || true)
  missing=$(grep -vE '=(bf16|q8_0)' <<< "$missing" || true)
  [ -z "$extra" ] || { fail "support mode: GEMM_RVV takes $(grep -c . <<< "$extra") cases the CPU backend does not ($log_g):"; head -5 <<< "$extra"; }
  [ -z "$missing" ] || { fail "support mode: GEMM_RVV declines $(grep -c . <<< "$missing") cases the CPU backend takes ($log_g):"; head -5 <<< "$missing"; }
  local ops declined_n fa_n
  ops=$(sed 's/(.*//' <<< "$cases_g" | sort -u | grep -c . || true)
  declined_n=$(strip_colors "$log_g" | sed -n 's/^  \(.*\): NOT SUPPORTED$/\1/p' | grep -cP "$DECLINED_CASES" || true)
  fa_n=$(grep -c '^FLASH_ATTN_EXT(' <<< "$cases_g" || true)
  [ "$declined_n" -gt 0 ] || fail "support mode: no case of DECLINED_CASES listed as declined ($log_g)"
  [ "$fa_n" -gt 0 ] || fail "support mode: GEMM_RVV takes no FLASH_ATTN_EXT case ($log_g)"
  if [ -z "$extra$missing" ]; then
    echo "support mode: GEMM_RVV takes the CPU backend's $n_g cases of $ops ops ($fa_n of FLASH_ATTN_EXT), all but $declined_n FLASH_ATTN_EXT (declined by design) and $bf16_declined with a BF16 or Q8_0 tensor it would pack"
  fi
}

# ops NAME [-o OPS [-p PARAMS]]: test-backend-ops' test mode on GEMM_RVV (every op, or OPS): every case it
# takes must match the CPU backend, and each op run (OPS, or every op the support mode saw
# GEMM_RVV take) must have at least one case that ran and passed.
ops() {
  local name=$1 log="$LOG_DIR/backend-ops-$1.log" rc=0 passed total; shift
  # On one core (taskset, where it runs): ggml's CPU backend then computes these small ops on
  # one thread, instead of two that spin at every op's barrier under QEMU.
  GGML_BACKEND_PATH=$plugin $one_core "$SID_QEMU" -L "$GGML_ROOT" -cpu rv64,v=true,vlen=256 \
    -E GEMM_RVV_THREADS=3 "$tbo" test -b GEMM_RVV "$@" > "$log" 2>&1 || rc=$?
  read -r passed total <<< "$(count "$log")"
  if [ "$rc" -ne 0 ] || [ -z "${total:-}" ] || [ "$passed" != "$total" ] || [ "$total" -eq 0 ]; then
    fail "$name: test-backend-ops exit $rc, ${passed:-none}/${total:-none} passed ($log)"
    strip_colors "$log" | grep -E 'FAIL|error' | head -5 || true
    return
  fi
  local want ran missing
  if [ "${1:-}" = -o ]; then
    want=$(tr , '\n' <<< "$2" | sort -u)
  else
    want=$(strip_colors "$LOG_DIR/support-GEMM_RVV.log" | sed -n 's/^  \([A-Z_0-9]*\)(.*): SUPPORTED$/\1/p' | sort -u)
  fi
  ran=$(strip_colors "$log" | sed -n 's/^  \([A-Z_0-9]*\)(.*): OK$/\1/p' | sort | uniq -c)
  missing=$(comm -23 <(echo "$want") <(awk '{ print $2 }' <<< "$ran" | sort -u))
  if [ -n "$missing" ] || [ -z "$want" ]; then
    fail "$name: no case passed on GEMM_RVV for $(echo $missing) ($log)"
    return
  fi
  echo "$name: $passed/$total cases of $(grep -c . <<< "$want") ops ran on GEMM_RVV and matched the CPU backend" \
       "($(strip_colors "$log" | grep -c ': not supported' || true) declined)"
}

served vlen=256 vlen256
support_mode
if [ "$tier" = full ]; then
  ops ops-all
  fa_log=ops-all
else
  ops ops-llama -o "$OPS_QUICK" -p "$OPS_QUICK_PARAMS"
  ops flash-attn -o FLASH_ATTN_EXT -p "$FA_QUICK_PARAMS"
  fa_log=flash-attn
fi
grep -q 'GEMM_RVV: .* (FLASH_ATTN_EXT): attention D = ' "$LOG_DIR/backend-ops-$fa_log.log" ||
  fail "$fa_log: the plugin's log names no FLASH_ATTN_EXT it computed ($LOG_DIR/backend-ops-$fa_log.log)"
declined
refused
api vlen=256 vlen256
if [ "$tier" = full ]; then
  api vlen=128 vlen128
  api vlen=1024 vlen1024
  served vlen=128 vlen128
  served vlen=1024 vlen1024
  served vlen=256,zvfbfmin=true,zvfbfwma=true vlen256-zvfbfwma
  grep -q 'Linear kernels (zvfbfwma)' "$LOG_DIR/backend-ops-vlen256-zvfbfwma.log" ||
    fail "zvfbfwma: the plugin did not pick the Zvfbfwma kernels"
fi
[ "$failures" -eq 0 ] || { echo "test-ggml: $failures failed"; exit 1; }
echo "test-ggml ($tier): passed"

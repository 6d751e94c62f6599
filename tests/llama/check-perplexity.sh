#!/usr/bin/env bash
# Debian's llama-perplexity on the tiny GGUF test models (tests/llama/make_gguf_models.py) under
# QEMU, without and with the ggml plugin. For each model CASE (MODELS/CASE.gguf):
#   - without the plugin: the perplexity of MODELS/text.txt, which for a random model must be
#     near the vocabulary size (within a factor 4 of it: a broken run is far off);
#   - with PLUGIN (GGML_BACKEND_PATH): the plugin says it loaded, the perplexity is the same
#     (relative difference at most MAX_REL_DIFF, Q8_0 models too: their products are ggml's
#     bits, test-ggml checks them, but the plugin computes attention in FP32 where ggml rounds
#     Q to F16 for an F16 cache), and its log names,
#     for every weight of a Linear: a plan serving it when it is BF16 or Q8_0 and the plugin's
#     library has a plan for its (N, K) in its format (LIB_MANIFEST); a decline when it is BF16
#     or Q8_0 without a plan; nothing served in other formats (F16: ggml's CPU backend runs the
#     whole model).
#
# Usage: tests/llama/check-perplexity.sh MODELS CASE...
# Environment:
#   QEMU, QEMU_CPU    the qemu-riscv64 (one with riscv_hwprobe, so ggml loads its RVV variant)
#                     and its -cpu value; GGML_ROOT: the riscv64 root of sid's llama.cpp (-L)
#   GGUF_SHAPES       the command that runs tools/gguf-shapes (it lists the models' weights)
#   PLUGIN            the plugin's .so; empty: only the perplexities without it are checked
#   LIB_MANIFEST      manifest.json of the library the plugin was built with (its plans)
#   SERVED, DECLINED  extended regular expressions of the plugin's log lines for a weight served
#                     by a plan and for one declined; @NAME@, @N@ and @K@ stand for its tensor
#                     name, N and K. LOADED: the line that says it loaded.
#   CTX, CHUNKS, THREADS   llama-perplexity's -c (also its -b: M = CTX), --chunks and -t
#   LOG_DIR           where each run's log goes
set -u
models=$1; shift
cases=("$@")
: "${QEMU:?}" "${GGML_ROOT:?}" "${GGUF_SHAPES:?}"
QEMU_CPU=${QEMU_CPU:-max,vlen=256}
PLUGIN=${PLUGIN:-}
SERVED=${SERVED:-'GEMM_RVV: @NAME@ \(N = @N@, K = @K@\) M = [0-9]+: (Q8_0 )?plan M <= [0-9]+ serves$'}
DECLINED=${DECLINED:-'GEMM_RVV: declines @NAME@ \['}
LOADED=${LOADED:-'GEMM_RVV: loaded into ggml'}
CTX=${CTX:-64} CHUNKS=${CHUNKS:-1} THREADS=${THREADS:-1}
MAX_REL_DIFF=${MAX_REL_DIFF:-1e-3}
LOG_DIR=${LOG_DIR:-build/llama/logs}
mkdir -p "$LOG_DIR"
failed=0 passed=0
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }

if [ -n "$PLUGIN" ] && { [ ! -f "$PLUGIN" ] || [ ! -f "${LIB_MANIFEST:-}" ]; }; then
  echo "error: PLUGIN=$PLUGIN and LIB_MANIFEST=${LIB_MANIFEST:-} must both be files" >&2
  exit 2
fi

# perplexity LOG [VAR=VALUE...]: llama-perplexity on the case's model; prints the final PPL.
perplexity() {
  local log=$1; shift
  env "$@" "$QEMU" -cpu "$QEMU_CPU" -L "$GGML_ROOT" "$GGML_ROOT/usr/bin/llama-perplexity" \
    -m "$model" -f "$models/text.txt" -c "$CTX" -b "$CTX" --chunks "$CHUNKS" -t "$THREADS" -v \
    > "$log" 2>&1
  echo "llama-perplexity's exit status: $?" >> "$log" # a run that stops without a word says how
  sed -n 's/.*Final estimate: PPL = \([0-9.e+-]*\) .*/\1/p' "$log"
}

# pattern TEMPLATE NAME N K: TEMPLATE with the placeholders filled (NAME's dots escaped).
pattern() { local t=${1//@NAME@/${2//./\\.}}; t=${t//@N@/$3}; echo "${t//@K@/$4}"; }

# The (format, N, K) the plugin's library has plans for, one "BF16 N K" or "Q8_0 N K" a line.
planned=""
[ -n "$PLUGIN" ] && planned=$(sed -n 's/.*"name": "\(bf16\|q8_0\)_[^"]*", "N": \([0-9]*\), "K": \([0-9]*\),.*/\1 \2 \3/p' "$LIB_MANIFEST" |
  sed 's/^bf16/BF16/; s/^q8_0/Q8_0/' | sort -u)
[ -z "$PLUGIN" ] || [ -n "$planned" ] || { echo "error: $LIB_MANIFEST lists no plan" >&2; exit 2; }

# check_log CASE LOG: the plugin's log lines for each Linear's weight of the case's model.
check_log() {
  local case=$1 log=$2 name type n k bad=0 served=0 expected=0 other=0 ours
  grep -qE "$LOADED" "$log" || { fail "$case: the plugin did not say it loaded ($log)"; return; }
  while IFS=$'\t' read -r name type n k; do
    ours=false
    [ "$type" = BF16 ] || [ "$type" = Q8_0 ] && ours=true
    $ours || other=$((other + 1))
    if $ours && grep -qx "$type $n $k" <<<"$planned"; then
      expected=$((expected + 1))
      if grep -qE "$(pattern "$SERVED" "$name" "$n" "$k")" "$log"; then
        served=$((served + 1))
      else
        echo "  $case: $name ($n x $k) has a plan but no log line says one served it"; bad=1
      fi
    elif grep -qE "$(pattern "$SERVED" "$name" "$n" "$k")" "$log"; then
      echo "  $case: $name ($type, $n x $k) was served, but the library has no plan for it in its format"; bad=1
    elif $ours && ! grep -qE "$(pattern "$DECLINED" "$name" "$n" "$k")" "$log"; then
      echo "  $case: $name ($n x $k, no plan) is not said to be declined"; bad=1
    fi
  done < <($GGUF_SHAPES --weights "$model")
  if [ "$bad" = 0 ]; then
    ok; echo "  $case: the plugin served $served of $expected weights with plans, none of $other in other formats"
  else
    fail "$case: the plugin's log does not match its plans ($log)"
  fi
}

for case in "${cases[@]}"; do
  model=$models/$case.gguf
  [ -f "$model" ] || { fail "$case: no model $model"; continue; }
  # The vocabulary: N of the lm_head, output.weight, or token_embd.weight when tied (gguf-shapes
  # --weights lists token_embd.weight only then).
  vocab=$($GGUF_SHAPES --weights "$model" |
    awk -F'\t' '$1 == "output.weight" || $1 == "token_embd.weight" { print $3; exit }')
  [ -n "$vocab" ] || { fail "$case: gguf-shapes --weights lists no lm_head"; continue; }
  cpu=$(perplexity "$LOG_DIR/$case.cpu.log")
  if [ -z "$cpu" ]; then
    fail "$case: llama-perplexity gave no perplexity ($LOG_DIR/$case.cpu.log):"
    tail -5 "$LOG_DIR/$case.cpu.log"; continue
  fi
  if awk -v p="$cpu" -v v="$vocab" 'BEGIN { exit !(p > v / 4 && p < v * 4) }'; then ok; else
    fail "$case: perplexity $cpu is not near the vocabulary size $vocab of a random model"
  fi
  if [ -z "$PLUGIN" ]; then
    echo "$case: perplexity $cpu without the plugin (PLUGIN not given: not compared)"
    continue
  fi
  with=$(perplexity "$LOG_DIR/$case.plugin.log" GGML_BACKEND_PATH="$PLUGIN")
  if [ -z "$with" ]; then
    fail "$case: no perplexity with the plugin ($LOG_DIR/$case.plugin.log):"
    tail -5 "$LOG_DIR/$case.plugin.log"; continue
  fi
  rel=$(awk -v a="$with" -v b="$cpu" 'BEGIN { d = (a - b) / b; printf "%.2e", d < 0 ? -d : d }')
  echo "$case: perplexity $cpu without the plugin, $with with it (relative difference $rel)"
  if awk -v r="$rel" -v m="$MAX_REL_DIFF" 'BEGIN { exit !(r <= m) }'; then ok; else
    fail "$case: the perplexities differ by $rel, more than $MAX_REL_DIFF"
  fi
  check_log "$case" "$LOG_DIR/$case.plugin.log"
done

echo "llama-perplexity: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

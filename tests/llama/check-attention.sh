#!/usr/bin/env bash
# shellcheck disable=SC2015  # "A && ok || fail": ok never fails
# Attention on the plugin in Debian's llama.cpp (issue 40, item 3): llama-perplexity at a
# context of CTX tokens (one batch of CTX rows, then the chunk's second half scored) on one
# model, with flash attention auto (llama.cpp's default), on and off, without and with the
# plugin. For each mode:
#   - the perplexity with the plugin within MAX_REL_DIFF of that without it, same mode;
#   - the plugin computed the attention: its log names the call serving FLASH_ATTN_EXT (-fa on,
#     and -fa auto, which keeps it on: the layers and the op are on GEMM_RVV) or llama.cpp's
#     unfused chain (-fa off);
#   - graph splits of the batch graph and of a token's graph as without the plugin.
# Then -fa auto with -ngl 0 (the layers on the CPU, GEMM_RVV_ACCEL serving their products):
# the perplexity as without the plugin, products and attention on the plugin (llama.cpp turns
# flash attention off, the op being on another device than the layer's: the unfused chain),
# a token's graph at most 1 + 4 splits a layer (llama.cpp pins each layer's two norms to the
# layer's device, the CPU).
# Usage: tests/llama/check-attention.sh MODELS CASE
# Environment: QEMU, QEMU_CPU (rv64,v=false: ggml's rv64gc variant and the library's fallback,
# the kernels' bits), GGML_ROOT, PLUGIN, CTX (256), THREADS (2), MODES ("auto on off"),
# MAX_REL_DIFF (1e-3), LOG_DIR.
set -u
models=$1 case=$2
: "${QEMU:?}" "${GGML_ROOT:?}" "${PLUGIN:?}"
QEMU_CPU=${QEMU_CPU:-rv64,v=false} CTX=${CTX:-256} THREADS=${THREADS:-2}
MODES=${MODES:-auto on off} MAX_REL_DIFF=${MAX_REL_DIFF:-1e-3}
LOG_DIR=${LOG_DIR:-build/llama/logs}
mkdir -p "$LOG_DIR"
model=$models/$case.gguf
[ -f "$model" ] || { echo "error: no model $model" >&2; exit 2; }
[ -f "$PLUGIN" ] || { echo "error: no plugin $PLUGIN" >&2; exit 2; }
plugin=$(realpath "$PLUGIN")
failed=0 passed=0
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }

log() { echo "$LOG_DIR/$case.attn-$1.$2.log"; }
ppl() { sed -n 's/.*Final estimate: PPL = \([0-9.e+-]*\) .*/\1/p' "$(log "$1" "$2")" | head -1; }
# splits MODE WITH: "PP TG", the batch graph's and the one-token graph's splits at load.
splits() {
  sed -n -e 's/.*sched_reserve: graph (pp bs=[0-9]*, tg bs=1): .*splits = \([0-9]*\) \/ \([0-9]*\),.*/\1 \2/p' \
         -e 's/.*sched_reserve: graph: .*splits = \([0-9]*\),.*/\1 \1/p' "$(log "$1" "$2")" | head -1
}
layers=""

# perplexity MODE WITH [ARGS...]: llama-perplexity with -fa MODE's flash attention into log.
perplexity() {
  local mode=$1 with=$2 env=()
  shift 2
  [ "$with" = cpu ] || env=(GGML_BACKEND_PATH="$plugin")
  env "${env[@]}" "$QEMU" -cpu "$QEMU_CPU" -L "$GGML_ROOT" "$GGML_ROOT/usr/bin/llama-perplexity" \
    -m "$model" -f "$models/text.txt" -c "$CTX" -b "$CTX" --chunks 1 -t "$THREADS" -fa "$mode" -v "$@" \
    > "$(log "$mode" "$with")" 2>&1
}
# same_ppl MODE WITH: WITH's perplexity within MAX_REL_DIFF of the CPU's, same mode.
same_ppl() {
  local cpu with rel
  cpu=$(ppl "$1" cpu) with=$(ppl "$1" "$2")
  if [ -z "$cpu" ] || [ -z "$with" ]; then
    fail "$case -fa $1: no perplexity without ($cpu) or with ($with) the plugin ($(log "$1" "$2"))"
    tail -n 3 "$(log "$1" "$2")"
    return 1
  fi
  rel=$(awk -v a="$with" -v b="$cpu" 'BEGIN { d = (a - b) / b; printf "%.2e", d < 0 ? -d : d }')
  echo "$case -fa $1${3:-}: llama-perplexity -c $CTX: $cpu without the plugin, $with with it (relative difference $rel)"
  awk -v r="$rel" -v m="$MAX_REL_DIFF" 'BEGIN { exit !(r <= m) }' && ok ||
    fail "$case -fa $1${3:-}: the perplexities differ by $rel, more than $MAX_REL_DIFF"
}
# computed MODE WITH WHAT: the plugin's log names the attention of kind WHAT it computed.
computed() {
  if grep -q "GEMM_RVV: .* ($3): attention D = " "$(log "$1" "$2")"; then
    ok; echo "$case -fa $1${4:-}: $(grep -o "GEMM_RVV: .* ($3): attention D = [0-9]*, .*heads" "$(log "$1" "$2")" | head -1)"
  else
    fail "$case -fa $1${4:-}: the plugin's log names no attention it computed ($3; $(log "$1" "$2"))"
  fi
}

for mode in $MODES; do
  perplexity "$mode" cpu
  perplexity "$mode" plugin
  layers=${layers:-$(sed -n 's/.*print_info: n_layer *= *\([0-9]*\).*/\1/p' "$(log "$mode" cpu)" | head -1)}
  same_ppl "$mode" plugin || continue
  # -fa on and auto keep FLASH_ATTN_EXT; off ends on the unfused chain.
  what=FLASH_ATTN_EXT
  [ "$mode" = off ] && what='attention without FLASH_ATTN_EXT'
  computed "$mode" plugin "$what"
  read -r ppc tgc < <(splits "$mode" cpu)
  read -r ppp tgp < <(splits "$mode" plugin)
  echo "$case -fa $mode: graph splits (batch of $CTX / one token): ${ppc:-?} / ${tgc:-?} without the plugin, ${ppp:-?} / ${tgp:-?} with it (${layers:-?} layers)"
  [ -n "$ppp" ] && [ "$ppp" = "$ppc" ] && [ -n "$tgp" ] && [ "$tgp" = "$tgc" ] && ok ||
    fail "$case -fa $mode: ${ppp:-?} / ${tgp:-?} splits of the batch / a token's graph with the plugin, ${ppc:-?} / ${tgc:-?} without"
done

# The layers on the CPU (-ngl 0): GEMM_RVV_ACCEL serves their products and the unfused chain.
case " $MODES " in *" auto "*)
  perplexity auto ngl0 -ngl 0
  if same_ppl auto ngl0 " -ngl 0"; then
    computed auto ngl0 'attention without FLASH_ATTN_EXT' " -ngl 0"
    grep -q "GEMM_RVV: blk\.0\..* M = [0-9]*: plan .* serves" "$(log auto ngl0)" && ok ||
      fail "$case -fa auto -ngl 0: the plugin's log names no product it served ($(log auto ngl0))"
    read -r _ tgc < <(splits auto cpu)
    read -r _ tgp < <(splits auto ngl0)
    echo "$case -fa auto -ngl 0: graph splits of a token: ${tgc:-?} without the plugin, ${tgp:-?} with it (${layers:-?} layers)"
    [ -n "$tgp" ] && [ -n "$layers" ] && [ "$tgp" -le $((tgc + 4 * layers)) ] && ok ||
      fail "$case -fa auto -ngl 0: ${tgp:-?} splits of a token's graph with the plugin, more than ${tgc:-?} + 4 x ${layers:-?} layers"
  fi
esac

echo "attention ($case): $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# shellcheck disable=SC2015  # "A && ok || fail": ok never fails
# Attention on the plugin in Debian's llama.cpp (issue 40, item 3): llama-perplexity at a
# context of CTX tokens (one batch of CTX rows, then the chunk's second half scored) on one
# model, with flash attention auto (llama.cpp's default), on and off, without and with the
# plugin. For each mode:
#   - the perplexity with the plugin within MAX_REL_DIFF of that without it, same mode;
#   - the plugin computed the attention: its log names the call serving FLASH_ATTN_EXT (-fa on)
#     or llama.cpp's unfused chain (-fa off, and -fa auto, which llama.cpp turns off on one
#     board because the op would run on GEMM_RVV, not on the layer's CPU device);
#   - graph splits of the batch graph as without the plugin, and of a token's graph at most
#     1 + 4 a layer (below 32 rows llama.cpp pins each layer's two norms to the layer's device,
#     the CPU; attention adds none).
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

for mode in $MODES; do
  for with in cpu plugin; do
    env=(); [ "$with" = plugin ] && env=(GGML_BACKEND_PATH="$plugin")
    env "${env[@]}" "$QEMU" -cpu "$QEMU_CPU" -L "$GGML_ROOT" "$GGML_ROOT/usr/bin/llama-perplexity" \
      -m "$model" -f "$models/text.txt" -c "$CTX" -b "$CTX" --chunks 1 -t "$THREADS" -fa "$mode" -v \
      > "$(log "$mode" "$with")" 2>&1
  done
  layers=${layers:-$(sed -n 's/.*print_info: n_layer *= *\([0-9]*\).*/\1/p' "$(log "$mode" cpu)" | head -1)}
  cpu=$(ppl "$mode" cpu) with=$(ppl "$mode" plugin)
  if [ -z "$cpu" ] || [ -z "$with" ]; then
    fail "$case -fa $mode: no perplexity without ($cpu) or with ($with) the plugin ($(log "$mode" plugin))"
    tail -n 3 "$(log "$mode" plugin)"
    continue
  fi
  rel=$(awk -v a="$with" -v b="$cpu" 'BEGIN { d = (a - b) / b; printf "%.2e", d < 0 ? -d : d }')
  echo "$case -fa $mode: llama-perplexity -c $CTX: $cpu without the plugin, $with with it (relative difference $rel)"
  awk -v r="$rel" -v m="$MAX_REL_DIFF" 'BEGIN { exit !(r <= m) }' && ok ||
    fail "$case -fa $mode: the perplexities differ by $rel, more than $MAX_REL_DIFF"
  # -fa on keeps FLASH_ATTN_EXT; auto and off end on the unfused chain.
  what='attention without FLASH_ATTN_EXT'
  [ "$mode" = on ] && what='FLASH_ATTN_EXT'
  if grep -q "GEMM_RVV: .* ($what): attention D = " "$(log "$mode" plugin)"; then
    ok; echo "$case -fa $mode: $(grep -o "GEMM_RVV: .* ($what): attention D = [0-9]*, .*heads" "$(log "$mode" plugin)" | head -1)"
  else
    fail "$case -fa $mode: the plugin's log names no attention it computed ($what; $(log "$mode" plugin))"
  fi
  read -r ppc tgc < <(splits "$mode" cpu)
  read -r ppp tgp < <(splits "$mode" plugin)
  echo "$case -fa $mode: graph splits (batch of $CTX / one token): ${ppc:-?} / ${tgc:-?} without the plugin, ${ppp:-?} / ${tgp:-?} with it (${layers:-?} layers)"
  [ -n "$ppp" ] && [ "$ppp" = "$ppc" ] && ok ||
    fail "$case -fa $mode: ${ppp:-?} splits of the batch graph with the plugin, ${ppc:-?} without"
  [ -n "$tgp" ] && [ -n "$layers" ] && [ "$tgp" -le $((tgc + 4 * layers)) ] && ok ||
    fail "$case -fa $mode: ${tgp:-?} splits of a token's graph with the plugin, more than ${tgc:-?} + 4 x ${layers:-?} layers"
done

echo "attention ($case): $passed passed, $failed failed"
[ "$failed" -eq 0 ]

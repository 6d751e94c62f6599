#!/usr/bin/env bash
# shellcheck disable=SC2015  # "A && ok || fail": ok never fails
# Debian's llama.cpp on one tiny GGUF model (tests/llama/make_gguf_models.py) under QEMU, without
# and with the ggml plugin, as a user runs it beyond one batch:
#   - long prompts: llama-perplexity -c 64 -b 16 (four micro-batches a chunk; before the plugin
#     skipped empty nodes the earlier ones failed with "M, N or K is zero or negative") gives
#     the same perplexity with the plugin (relative difference at most MAX_REL_DIFF,
#     MAX_REL_DIFF_Q8 for a model with Q8_0 weights, as check-perplexity.sh's), and
#     llama-completion of a prompt longer than its micro-batch (-b 64 -ub 16, 43 tokens), greedy
#     (--temp 0), GEN_TOKENS tokens, prints the same text;
#   - threads: that generation's clone() calls (QEMU's -strace), on THREADS threads: with the
#     plugin at most MAX_EXTRA_CLONES more than without (the library's workers, started once;
#     a pool started per graph would add about 2 a token);
#   - graph splits (the scheduler's, as llama.cpp logs them at load) of a batch of 16, of 32
#     rows or more and of one token: as many with the plugin as without (1: llama.cpp gives
#     the layers to GEMM_RVV, an iGPU device, and their graphs stay on it whole);
#   - attention: on the plugin (llama.cpp's default -fa auto keeps flash attention on, the op
#     on the layer's device; check-attention.sh checks every -fa mode and -ngl 0);
#   - memory: the QEMU process's peak resident size (GNU time's "Maximum resident set size",
#     QEMU's own memory in both) of each perplexity run, with llama.cpp's default loading (mmap) and
#     with -lm none (no mmap; llama.cpp 0.7 has no --no-mmap): with the plugin at most
#     MAX_MEM_RATIO x without, plus MEM_SCRATCH_KB (the plugin's code and scratch, and the
#     compute buffer GEMM_RVV gets besides the CPU's), with mmap and -lm none alike (without
#     mmap llama.cpp reads a weight for GEMM_RVV's buffer through the plugin's 1 MiB host
#     buffers); check-memory.sh holds issue 42's models to 5 % of their size.
# Printed: every figure, for docs/measurements.md.
#
# Usage: tests/llama/check-llama-run.sh MODELS CASE
# Environment: QEMU, QEMU_CPU, GGML_ROOT, PLUGIN, GGUF_SHAPES (as check-perplexity.sh), LOG_DIR, THREADS (2), GEN_TOKENS (20),
# MEM_MODES (the loadings the long prompts run with: "mmap none", or one of them).
# QEMU_CPU defaults to rv64,v=false: ggml's rv64gc variant and the library's scalar fallback
# (the same bits as the kernels), eight times faster under sid's QEMU than its vector
# emulation; what is checked here does not depend on the kernels (check-perplexity.sh runs them).
set -u
models=$1 case=$2
: "${QEMU:?}" "${GGML_ROOT:?}" "${PLUGIN:?}" "${GGUF_SHAPES:?}"
QEMU_CPU=${QEMU_CPU:-rv64,v=false}
THREADS=${THREADS:-2} GEN_TOKENS=${GEN_TOKENS:-20} MEM_MODES=${MEM_MODES:-mmap none}
MAX_REL_DIFF=${MAX_REL_DIFF:-1e-3}
MAX_REL_DIFF_Q8=${MAX_REL_DIFF_Q8:-2e-3}
MAX_EXTRA_CLONES=${MAX_EXTRA_CLONES:-4}
MAX_MEM_RATIO=${MAX_MEM_RATIO:-1.05} MEM_SCRATCH_KB=${MEM_SCRATCH_KB:-4096}
LOG_DIR=${LOG_DIR:-build/llama/logs}
mkdir -p "$LOG_DIR"
model=$models/$case.gguf
failed=0 passed=0
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }
[ -f "$model" ] || { echo "error: no model $model" >&2; exit 2; }
[ -f "$PLUGIN" ] || { echo "error: no plugin $PLUGIN" >&2; exit 2; }
plugin=$(realpath "$PLUGIN")

# run TAG WITH PROGRAM ARGS...: PROGRAM of llama.cpp under QEMU (WITH: plugin or cpu), its
# output in LOG_DIR/CASE.TAG.WITH.{out,log}, its peak resident KiB in .rss.
run() {
  local tag=$1 with=$2 prog=$3 env=()
  shift 3
  [ "$with" = plugin ] && env=(GGML_BACKEND_PATH="$plugin")
  local base=$LOG_DIR/$case.$tag.$with
  /usr/bin/time -f %M -o "$base.rss" env "${env[@]}" "$QEMU" -cpu "$QEMU_CPU" "${qemu_args[@]}" \
    -L "$GGML_ROOT" "$GGML_ROOT/usr/bin/$prog" -m "$model" -t "$THREADS" "$@" \
    > "$base.out" 2> "$base.log"
}
ppl() { sed -n 's/.*Final estimate: PPL = \([0-9.e+-]*\) .*/\1/p' "$LOG_DIR/$case.$1.$2.out" "$LOG_DIR/$case.$1.$2.log" | head -1; }
rss() { tail -1 "$LOG_DIR/$case.$1.$2.rss"; }
# splits TAG WITH: "PP TG", the splits of the batch graph and of the one-token graph at load.
splits() {
  sed -n -e 's/.*sched_reserve: graph (pp bs=[0-9]*, tg bs=1): .*splits = \([0-9]*\) \/ \([0-9]*\),.*/\1 \2/p' \
         -e 's/.*sched_reserve: graph: .*splits = \([0-9]*\),.*/\1 \1/p' "$LOG_DIR/$case.$1.$2.log" | tail -1
}
# The model's layers: the blocks of its Linears' weights.
layers=$($GGUF_SHAPES --weights "$model" | sed -n 's/^blk\.\([0-9]*\)\..*/\1/p' | sort -u | wc -l)

$GGUF_SHAPES --weights "$model" | cut -f2 | grep -qx Q8_0 && MAX_REL_DIFF=$MAX_REL_DIFF_Q8

# ---- long prompts, and memory: perplexity over several micro-batches, mmap and -lm none ----
qemu_args=()
for mode in $MEM_MODES; do
  extra=(); [ "$mode" = none ] && extra=(-lm none)
  for with in cpu plugin; do
    run "ppl16-$mode" "$with" llama-perplexity -f "$models/text.txt" -c 64 -b 16 --chunks 1 -v "${extra[@]}"
  done
  cpu=$(ppl "ppl16-$mode" cpu) with=$(ppl "ppl16-$mode" plugin)
  if [ -z "$cpu" ] || [ -z "$with" ]; then
    fail "$case: llama-perplexity -c 64 -b 16 ($mode) gave no perplexity without ($cpu) or with ($with) the plugin:"
    tail -n 3 "$LOG_DIR/$case.ppl16-$mode.cpu.log" "$LOG_DIR/$case.ppl16-$mode.plugin.log"
  else
    rel=$(awk -v a="$with" -v b="$cpu" 'BEGIN { d = (a - b) / b; printf "%.2e", d < 0 ? -d : d }')
    echo "$case: llama-perplexity -c 64 -b 16 ($mode): $cpu without the plugin, $with with it (relative difference $rel)"
    awk -v r="$rel" -v m="$MAX_REL_DIFF" 'BEGIN { exit !(r <= m) }' && ok ||
      fail "$case: -c 64 -b 16 ($mode): the perplexities differ by $rel, more than $MAX_REL_DIFF"
  fi
  rc=$(rss "ppl16-$mode" cpu) rp=$(rss "ppl16-$mode" plugin)
  echo "$case: peak resident (llama-perplexity -c 64 -b 16, $mode): $rc KiB without the plugin, $rp KiB with it ($(awk -v a="$rp" -v b="$rc" 'BEGIN { printf "%.3f", a / b }') x)"
  awk -v a="$rp" -v b="$rc" -v r="$MAX_MEM_RATIO" -v s="$MEM_SCRATCH_KB" 'BEGIN { exit !(a <= b * r + s) }' && ok ||
    fail "$case: peak resident with the plugin ($rp KiB, $mode) above $MAX_MEM_RATIO x $rc KiB + $MEM_SCRATCH_KB KiB"
done

# ---- a prompt longer than the micro-batch, generated greedily; its clone() calls -----------
# The prompt: the text's first 75 characters, about 40 tokens of the test vocabulary, in one
# batch (-b 64) of three micro-batches (-ub 16): only the last token's logits are asked for,
# so the first two run the last layer's FFN and the lm_head on 0 rows (with -b 16 each batch
# would have its own last token's output, and no product would be empty).
head -c 75 "$models/text.txt" > "$LOG_DIR/$case.prompt.txt"
qemu_args=(-strace)
for with in cpu plugin; do
  run gen "$with" llama-completion -f "$LOG_DIR/$case.prompt.txt" -n "$GEN_TOKENS" --temp 0 -s 1 \
    -c 128 -b 64 -ub 16 -no-cnv --no-warmup -v
done
prompt_tokens=$(sed -n 's/.*prompt eval time = .* \/ *\([0-9]*\) tokens.*/\1/p' "$LOG_DIR/$case.gen.cpu.log")
if [ -s "$LOG_DIR/$case.gen.cpu.out" ] && cmp -s "$LOG_DIR/$case.gen.cpu.out" "$LOG_DIR/$case.gen.plugin.out"; then
  ok; echo "$case: llama-completion of ${prompt_tokens:-?} prompt tokens (-b 64 -ub 16), $GEN_TOKENS generated: the same text with and without the plugin"
else
  fail "$case: llama-completion printed other text with the plugin ($LOG_DIR/$case.gen.{cpu,plugin}.out)"
  tail -3 "$LOG_DIR/$case.gen.plugin.log"
fi
[ "${prompt_tokens:-0}" -gt 16 ] && ok || fail "$case: the prompt (${prompt_tokens:-?} tokens) is not longer than the micro-batch"
clones() { grep -cE '^[0-9]+ clone\(' "$LOG_DIR/$case.gen.$1.log"; }
cc=$(clones cpu) cp=$(clones plugin)
echo "$case: clone() calls over the generation ($THREADS threads, $GEN_TOKENS tokens): $cc without the plugin, $cp with it"
[ "$cp" -le $((cc + MAX_EXTRA_CLONES)) ] && ok ||
  fail "$case: $cp clone() calls with the plugin, more than $cc + $MAX_EXTRA_CLONES: threads started per token?"

# ---- graph splits ----------------------------------------------------------------------------
read -r ppc tgc < <(splits gen cpu)
read -r ppp tgp < <(splits gen plugin)
read -r pp64c _ < <(splits ppl16-mmap cpu)
echo "$case: graph splits (batch of 16 / one token): ${ppc:-?} / ${tgc:-?} without the plugin, ${ppp:-?} / ${tgp:-?} with it ($layers layers)"
# A batch of 32 rows or more (check-perplexity.sh's -b CTX: 32 or 64): as many as without.
if [ -f "$LOG_DIR/$case.plugin.log" ]; then
  case64="$(sed -n 's/.*sched_reserve: worst-case: n_tokens = \([0-9]*\),.*/\1/p' "$LOG_DIR/$case.plugin.log" | tail -1) $(
    sed -n -e 's/.*sched_reserve: graph (pp bs=[0-9]*, tg bs=1): .*splits = \([0-9]*\) \/.*/\1/p' \
           -e 's/.*sched_reserve: graph: .*splits = \([0-9]*\),.*/\1/p' "$LOG_DIR/$case.plugin.log" | tail -1)"
  echo "$case: graph splits of a batch of ${case64% *} with the plugin: ${case64#* } (without: ${pp64c:-?})"
  [ -n "$layers" ] && [ "${pp64c:-x}" = 1 ] && [ "${case64#* }" = 1 ] && ok ||
    fail "$case: ${case64#* } splits at batch ${case64% *} with the plugin, ${pp64c:-?} without"
fi
[ -n "$ppp" ] && [ "$ppp" = "$ppc" ] && [ -n "$tgp" ] && [ "$tgp" = "$tgc" ] && ok ||
  fail "$case: ${ppp:-?} / ${tgp:-?} splits of a batch of 16 / a token's graph with the plugin, ${ppc:-?} / ${tgc:-?} without"

# Attention: flash attention stays on (llama.cpp's auto), on the plugin.
attn=$(grep -c 'GEMM_RVV: .* (FLASH_ATTN_EXT): attention D = ' "$LOG_DIR/$case.gen.plugin.log" || true)
echo "$case: attention computed by the plugin: $attn log line(s)"
[ "$attn" -gt 0 ] && ok || fail "$case: the plugin's log names no attention it computed ($LOG_DIR/$case.gen.plugin.log)"

echo "llama.cpp runs ($case): $passed passed, $failed failed"
[ "$failed" -eq 0 ]

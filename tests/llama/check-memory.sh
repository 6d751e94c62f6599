#!/usr/bin/env bash
# shellcheck disable=SC2015  # "A && ok || fail": ok never fails
# Peak memory of Debian's llama-perplexity with the ggml plugin against without it (issue 42):
# for each model CASE (MODELS/CASE.gguf) and each way of loading it (MEM_MODES: llama.cpp's
# default, mmap, and -lm none, llama.cpp 0.7's way to load without mapping the file), the QEMU
# process's peak resident size (GNU time's "Maximum resident set size", QEMU's own memory in
# both runs) with the plugin must be at most that without it plus MAX_MODEL_SHARE of the GGUF's
# size: a model that fits a board without the plugin fits with it. The plugin holds each weight
# it packs once (the file's pages it was packed from given back, a tied embedding held once
# for the lm_head and the table), so what it adds is its code, its scratch and the compute
# buffer it gets besides the CPU's. (check-perplexity.sh compares the results.)
# Printed: a row per model and loading, for docs/llama-cpp.md's table.
#
# Usage: tests/llama/check-memory.sh MODELS CASE...
# Environment: QEMU, GGML_ROOT, PLUGIN (as check-perplexity.sh); QEMU_CPU (rv64,v=false:
# ggml's rv64gc variant and the library's fallback, which hold the same memory as the kernels
# and run faster under QEMU), MEM_MODES ("mmap none"), CTX (llama-perplexity's -c and -b, 16),
# THREADS (2), MAX_MODEL_SHARE (0.05), LOG_DIR.
set -u
models=$1; shift
: "${QEMU:?}" "${GGML_ROOT:?}" "${PLUGIN:?}"
QEMU_CPU=${QEMU_CPU:-rv64,v=false} MEM_MODES=${MEM_MODES:-mmap none}
CTX=${CTX:-16} THREADS=${THREADS:-2}
MAX_MODEL_SHARE=${MAX_MODEL_SHARE:-0.05}
LOG_DIR=${LOG_DIR:-build/llama/logs}
mkdir -p "$LOG_DIR"
[ -f "$PLUGIN" ] || { echo "error: no plugin $PLUGIN" >&2; exit 2; }
plugin=$(realpath "$PLUGIN")
failed=0 passed=0
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }

# run CASE MODE WITH: llama-perplexity on the case's model (WITH: plugin or cpu); its log in
# LOG_DIR/CASE.mem-MODE.WITH.log, its peak resident KiB in .rss.
run() {
  local case=$1 mode=$2 with=$3 env=() extra=()
  [ "$with" = plugin ] && env=(GGML_BACKEND_PATH="$plugin")
  [ "$mode" = none ] && extra=(-lm none)
  local base=$LOG_DIR/$case.mem-$mode.$with
  /usr/bin/time -f %M -o "$base.rss" env "${env[@]}" "$QEMU" -cpu "$QEMU_CPU" -L "$GGML_ROOT" \
    "$GGML_ROOT/usr/bin/llama-perplexity" -m "$models/$case.gguf" -f "$models/text.txt" \
    -c "$CTX" -b "$CTX" --chunks 1 -t "$THREADS" "${extra[@]}" > "$base.log" 2>&1
}
ppl() { sed -n 's/.*Final estimate: PPL = \([0-9.e+-]*\) .*/\1/p' "$LOG_DIR/$1.mem-$2.$3.log"; }
rss() { tail -n 1 "$LOG_DIR/$1.mem-$2.$3.rss"; }

echo "model | GGUF | loading | peak RSS without | with the plugin | extra | extra / model"
for case in "$@"; do
  [ -f "$models/$case.gguf" ] || { fail "$case: no model $models/$case.gguf"; continue; }
  size=$(stat -c %s "$models/$case.gguf")
  for mode in $MEM_MODES; do
    run "$case" "$mode" cpu; run "$case" "$mode" plugin
    pc=$(ppl "$case" "$mode" cpu) pp=$(ppl "$case" "$mode" plugin)
    rc=$(rss "$case" "$mode" cpu) rp=$(rss "$case" "$mode" plugin)
    if [ -z "$pc" ] || [ -z "$pp" ] || [ -z "$rc" ] || [ -z "$rp" ]; then
      fail "$case ($mode): no perplexity or peak memory without ($pc, $rc KiB) or with ($pp, $rp KiB) the plugin ($LOG_DIR/$case.mem-$mode.*.log)"
      continue
    fi
    awk -v c="$rc" -v p="$rp" -v s="$size" -v m="$mode" -v n="$case" 'BEGIN {
      printf "%s | %.1f MB | %s | %.1f MB | %.1f MB | %.1f MB | %.1f %%\n", n, s / 1e6, m,
        c * 1024 / 1e6, p * 1024 / 1e6, (p - c) * 1024 / 1e6, (p - c) * 1024 / s * 100 }'
    awk -v c="$rc" -v p="$rp" -v s="$size" -v r="$MAX_MODEL_SHARE" 'BEGIN { exit !(p * 1024 <= c * 1024 + r * s) }' && ok ||
      fail "$case ($mode): peak resident $rp KiB with the plugin, more than $rc KiB without it + $MAX_MODEL_SHARE of the model's $size bytes"
  done
done
echo "llama.cpp memory: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

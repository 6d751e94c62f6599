#!/usr/bin/env bash
# Instructions and vector work per token of Debian's llama-bench on a tiny BF16 GGUF, counted
# with measure/count/insn_count.c under Debian 12's QEMU 7.2 (VLEN 256, one thread), without and with
# the ggml plugin. QEMU 7.2 has no riscv_hwprobe: measure/llama/hwprobe_shim.c (LD_PRELOAD) answers it,
# so ggml loads its RVV CPU variant as on a K1.
#
# Per token: a run with two repetitions minus the same run with one (the loading, the warm-up
# and the first repetition cancel), over the repetition's tokens: pp = a prompt of TOKENS
# tokens in one batch (per prompt token), tg = TOKENS tokens decoded one by one.
# The Linears' share: instructions in the code that runs them, by offset in the mapped file:
# without the plugin ggml-cpu's ggml_compute_forward_mul_mat, ggml_vec_dot_bf16 and
# ggml_cpu_fp32_to_bf16 (activations rounded to BF16); with it, all of libggml-gemm-rvv.so.
#
# Usage: measure/llama/llama-count.sh COUNT_PLUGIN SHIM GGML_ROOT MODEL OUT_DIR [GGML_PLUGIN]
# Environment: QEMU (qemu-riscv64 7.2), NM (a riscv64 nm), GGUF_SHAPES (runs tools/gguf-shapes),
#              TOKENS (16), CONFIGS ("cpu", and "plugin" when GGML_PLUGIN is given).
# Writes OUT_DIR/llama-count.csv and prints the table.
set -euo pipefail
count_plugin=$1 shim=$2 root=$3 model=$4 out=$5 ggml_plugin=${6:-}
QEMU=${QEMU:-qemu-riscv64}
TOKENS=${TOKENS:-16}
: "${NM:?}" "${GGUF_SHAPES:?}"
mkdir -p "$out"
cpu_lib=$(find "$root/usr/lib" -name 'libggml-cpu-riscv64_v.so' | head -1)
[ -n "$cpu_lib" ] || { echo "error: no libggml-cpu-riscv64_v.so under $root/usr/lib" >&2; exit 1; }

# ranges FILE SYMBOL...: range=NAME:LO-HI arguments for the plugin, from FILE's dynamic symbols
# (a shared library's text is mapped at offset = address).
ranges() {
  local file=$1 sym addr size name args=""
  shift
  for sym in "$@"; do
    read -r addr size _ name < <("$NM" -D -S --defined-only "$file" | awk -v s="$sym" '$4 == s')
    [ -n "${name:-}" ] || { echo "error: $file has no symbol $sym" >&2; exit 1; }
    args+=$(printf ",range=%s:%x-%x" "$(basename "$file")" "$((16#$addr))" "$((16#$addr + 16#$size))")
  done
  echo "$args"
}
# The plugin's text: its loadable segment that executes (at offset 0).
plugin_range() {
  local size
  size=$(readelf -lW "$1" | awk '$1 == "LOAD" && / R E / { print $5; exit }')
  printf ",range=%s:0-%x" "$(basename "$1")" "$((size))"
}

# count TAG RANGES BENCH_ARGS...: llama-bench under the counting plugin (QEMU's environment
# options in env_args); prints its counts.
count() {
  local tag=$1 range_args=$2; shift 2
  "$QEMU" -cpu rv64,v=true,vlen=256 -E LD_PRELOAD="$(realpath "$shim")" "${env_args[@]}" \
    -plugin "$count_plugin,all=on$range_args,out=$out/$tag.count" \
    -L "$root" "$root/usr/bin/llama-bench" -m "$model" -t 1 -o csv "$@" > "$out/$tag.log" 2>&1 ||
    { echo "error: llama-bench failed ($out/$tag.log):" >&2; tail -5 "$out/$tag.log" >&2; exit 1; }
  tr '\n' ' ' < "$out/$tag.count"
}

value() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2"; }

# The Linears' MACs per token: a decoded token runs them all. Of a prompt, llama.cpp keeps
# only the positions whose logits are asked for (the last one, in llama-bench) from the last
# block's attention output on: that block's FFN and the lm_head run once per prompt. The
# lm_head is output.weight, or token_embd.weight in a tied model (--weights lists it only then).
read -r body last < <($GGUF_SHAPES --weights "$model" | awk -F'\t' '
  $2 == "BF16" { split($1, p, "."); macs[NR] = $3 * $4; block[NR] = p[1] == "blk" ? p[2] : -1
                 tail[NR] = $1 == "output.weight" || $1 == "token_embd.weight" || $1 ~ /^blk\.[0-9]+\.ffn_/
                 if (block[NR] > top) top = block[NR] }
  END { for (i in macs) if (tail[i] && (block[i] == top || block[i] == -1)) l += macs[i]; else b += macs[i]
        print b + 0, l + 0 }')
echo "config,test,tokens,insns_per_token,vwork_per_token,linear_insns_per_token,linear_share,insns_per_linear_mac" \
  > "$out/llama-count.csv"
read -r -a configs <<< "${CONFIGS:-cpu${ggml_plugin:+ plugin}}"
for config in "${configs[@]}"; do
  env_args=()
  range_args=$(ranges "$cpu_lib" ggml_compute_forward_mul_mat ggml_vec_dot_bf16 ggml_cpu_fp32_to_bf16)
  if [ "$config" = plugin ]; then
    [ -n "$ggml_plugin" ] || { echo "error: CONFIGS names plugin but no GGML_PLUGIN is given" >&2; exit 2; }
    # One library thread: the counters are not atomic across threads.
    env_args=(-E GGML_BACKEND_PATH="$(realpath "$ggml_plugin")" -E GEMM_RVV_THREADS=1)
    range_args=$(plugin_range "$ggml_plugin")
  fi
  for test in pp tg; do
    if [ "$test" = pp ]; then sizes=(-p "$TOKENS" -n 0); else sizes=(-p 0 -n "$TOKENS"); fi
    one=$(count "$config-$test-r1" "$range_args" "${sizes[@]}" -r 1)
    two=$(count "$config-$test-r2" "$range_args" "${sizes[@]}" -r 2)
    if [ "$test" = pp ]; then macs=$((body + last / TOKENS)); else macs=$((body + last)); fi
    awk -v c="$config" -v t="$test" -v n="$TOKENS" -v macs="$macs" \
        -v i1="$(value insns "$one")" -v i2="$(value insns "$two")" \
        -v v1="$(value vwork_eighths "$one")" -v v2="$(value vwork_eighths "$two")" \
        -v r1="$(value range_insns "$one")" -v r2="$(value range_insns "$two")" 'BEGIN {
      i = (i2 - i1) / n; v = (v2 - v1) / 8 / n; r = (r2 - r1) / n
      printf "%s,%s,%d,%.0f,%.0f,%.0f,%.3f,%.2f\n", c, t, n, i, v, r, r / i, i / macs }' \
      >> "$out/llama-count.csv"
  done
done
column -s, -t "$out/llama-count.csv"
echo "(Linear MACs per decoded token: $((body + last)); per prompt token: $((body + last / TOKENS)); $model)"

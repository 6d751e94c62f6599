#!/usr/bin/env bash
# Instructions and vector work per token of Debian's llama-bench on a tiny BF16 GGUF, counted
# with measure/count/insn_count.c under Debian 12's QEMU 7.2 (VLEN 256, one thread), without and with
# the ggml plugin. QEMU 7.2 has no riscv_hwprobe: measure/llama/hwprobe_shim.c (LD_PRELOAD) answers it,
# so ggml loads its RVV CPU variant as on a K1.
#
# Per token: a run with two repetitions minus the same run with one, side by side (the
# loading, the warm-up and the first repetition cancel), over the repetition's tokens: pp = a
# prompt of TOKENS tokens in one batch (per prompt token), tg = TOKENS tokens decoded one by
# one; pp@N and tg@N the same at a context depth of N tokens (llama-bench -d N: N tokens in the
# KV cache first; llama-bench computes them once and restores its saved state for the second
# repetition, so a token's figure also holds 1/TOKENS of that restore, a copy of the cache).
# The Linears' share: instructions in the code that runs them, by offset in the mapped file:
# without the plugin ggml-cpu's ggml_compute_forward_mul_mat, ggml_vec_dot_bf16 and
# ggml_cpu_fp32_to_bf16 (activations rounded to BF16); with it, all of libggml-gemm-rvv.so.
#
# Where the instructions go (OUT_DIR/breakdown-CONFIG-TEST.csv; printed for the plugin's
# prompt token, and for ggml's when CONFIGS has no plugin): per function by the dynamic
# symbols of ggml-cpu, ggml-base and llama, every symbol of the plugin (which holds the
# library), the rest of each of those files, and libc, libgomp, libstdc++ and the program as
# wholes (insn_count.c's bins=); per token as above. ggml-cpu is stripped to its dynamic symbols:
# its static functions (most ops' kernels) count as "libggml-cpu:(other)".
#
# Usage: measure/llama/llama-count.sh COUNT_PLUGIN SHIM GGML_ROOT MODEL OUT_DIR [GGML_PLUGIN]
# Environment: QEMU (qemu-riscv64 7.2), NM (a riscv64 nm), GGUF_SHAPES (runs tools/gguf-shapes),
#              TOKENS (16), CONFIGS ("cpu", and "plugin" when GGML_PLUGIN is given),
#              TESTS ("pp tg"; e.g. "tg@1024 pp@512" for context depths).
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
    -plugin "$count_plugin,all=on$range_args,bins=$bins,out=$out/$tag.count" \
    -L "$root" "$root/usr/bin/llama-bench" -m "$model" -t 1 -o csv "$@" > "$out/$tag.log" 2>&1 ||
    { echo "error: llama-bench failed ($out/$tag.log):" >&2; tail -5 "$out/$tag.log" >&2; exit 1; }
  grep -v '^bin ' "$out/$tag.count" | tr '\n' ' '
}

# breakdown CONFIG TEST: per token, each bin of the two runs' difference, largest first.
breakdown() {
  awk -v n="$TOKENS" '$1 == "bin" { c[$2] += (FILENAME ~ /-r2\.count$/ ? 1 : -1) * $3 }
    END { for (b in c) if (c[b] / n >= 0.5 || c[b] / n <= -0.5) printf "%.0f,%s\n", c[b] / n, b }' \
    "$out/$1-$2-r1.count" "$out/$1-$2-r2.count" | sort -t, -k1,1nr > "$out/breakdown-$1-$2.csv"
}

# The bins file: dynamic (or, for the plugin, all) function symbols with sizes of each file,
# then each file whole.
bins=$out/bins.txt
{
  for lib in "$cpu_lib" $(find "$root/usr/lib" -name 'libggml-base.so.*.*' -o -name 'libllama.so.*.*' | sort) \
             ${ggml_plugin:+"$ggml_plugin"}; do
    f=$(basename "$(realpath "$lib")") d=-D short=${f%%.so*}
    [ "$lib" = "${ggml_plugin:-}" ] && d=
    # shellcheck disable=SC2086
    "$NM" $d -S --defined-only "$lib" | awk -v f="$f" '
      function hex(s,  i, n) { n = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return n }
      NF == 4 && $3 ~ /^[TtWw]$/ { printf "%s %s %x %s\n", f, $1, hex($1) + hex($2), $4 }'
    echo "$f 0 ffffffffff $short:(other)"
  done
  for lib in $(find "$root/usr/lib" -name 'libc.so.6' -o -name 'libm.so.6' -o -name 'libgomp.so.1' \
                 -o -name 'libstdc++.so.6' -o -name 'libgcc_s.so.1' -o -name 'ld-linux-riscv64-lp64d.so.1' \
                 -o -name 'libggml.so.*.*' -o -name 'libllama-common.so.*.*' -o -name 'libllama-bench-impl.so' | sort); do
    f=$(basename "$(realpath "$lib")")
    echo "$f 0 ffffffffff ${f%%.so*}"
  done
  echo "llama-bench 0 ffffffffff llama-bench"
} > "$bins"

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
  for spec in ${TESTS:-pp tg}; do
    test=${spec%@*} depth=0
    [ "$spec" = "$test" ] || depth=${spec#*@}
    if [ "$test" = pp ]; then sizes=(-p "$TOKENS" -n 0); else sizes=(-p 0 -n "$TOKENS"); fi
    sizes+=(-d "$depth")
    # The two runs side by side (their counts do not depend on it).
    count "$config-$spec-r1" "$range_args" "${sizes[@]}" -r 1 > /dev/null &
    r1=$!
    two=$(count "$config-$spec-r2" "$range_args" "${sizes[@]}" -r 2) || { kill "$r1"; exit 1; }
    wait "$r1" || exit 1
    one=$(grep -v '^bin ' "$out/$config-$spec-r1.count" | tr '\n' ' ')
    if [ "$test" = pp ]; then macs=$((body + last / TOKENS)); else macs=$((body + last)); fi
    awk -v c="$config" -v t="$spec" -v n="$TOKENS" -v macs="$macs" \
        -v i1="$(value insns "$one")" -v i2="$(value insns "$two")" \
        -v v1="$(value vwork_eighths "$one")" -v v2="$(value vwork_eighths "$two")" \
        -v r1="$(value range_insns "$one")" -v r2="$(value range_insns "$two")" 'BEGIN {
      i = (i2 - i1) / n; v = (v2 - v1) / 8 / n; r = (r2 - r1) / n
      printf "%s,%s,%d,%.0f,%.0f,%.0f,%.3f,%.2f\n", c, t, n, i, v, r, r / i, i / macs }' \
      >> "$out/llama-count.csv"
    breakdown "$config" "$spec"
  done
done
column -s, -t "$out/llama-count.csv"
# show CONFIG TEST: the breakdown's 25 largest.
show() {
  echo "Where a token's instructions go ($1, $2; instructions per token, function or file):"
  awk -F, '{ t += $1; r[NR] = $0 } END { for (i = 1; i <= NR && i <= 25; i++) { split(r[i], f, ",")
    printf "  %12d  %5.1f %%  %s\n", f[1], 100 * f[1] / t, f[2] } printf "  %12d  100.0 %%  (all)\n", t }' \
    "$out/breakdown-$1-$2.csv"
}
# The plugin's prompt token (ggml's without the plugin); every config's at a context depth.
shown=plugin; [ -f "$out/breakdown-plugin-pp.csv" ] || shown=cpu
[ -f "$out/breakdown-$shown-pp.csv" ] && show "$shown" pp
for config in "${configs[@]}"; do
  for spec in ${TESTS:-pp tg}; do [ "$spec" = "${spec%@*}" ] || show "$config" "$spec"; done
done
echo "(Linear MACs per decoded token: $((body + last)); per prompt token: $((body + last / TOKENS)); $model)"

#!/usr/bin/env bash
# Instructions, scalar instructions and vector work per attention MAC of gemm_rvv_attention
# calls, counted by the QEMU plugin (measure/count/insn_count.c) in the call and the runtime's
# attention functions, beside issue 40's targets and ggml's figures. Run by
# `make bench-count-attention`:
#   measure/count/count-attention.sh PLUGIN PROGRAM WORK_DIR OUT_CSV
# PROGRAM is measure/count/count_attention.c built (9 query heads on 3 KV heads, one thread).
# Env: ATTN_COUNT_TYPES (the caches: "f16 bf16"), ATTN_COUNT_D (head dims: "64 128"),
#   ATTN_COUNT_KV (a decoded token's n_kv: "256 1024 4096"), ATTN_COUNT_PROMPT (prompts as
#   N_Q:N_KV, causal: "512:512"), ATTN_COUNT_SYMS (the symbol prefixes counted:
#   "gemm_rvv_attention gr_attention_ gr_attn_"), VLEN (256), JOBS (runs at once, 2).
# Writes OUT_CSV:
#   kv_type,head_dim,n_q,n_kv,macs,live_macs,insns_per_mac,scalar_per_mac,vwork_per_mac,target,ggml
# (per MAC as issue 40 counts them, 2 n_q n_kv D H_q, masked positions too; live_macs: those of
# the positions the mask leaves, all of them decoding, about half in a prompt; target: issue 40's,
# <= 0.5 instructions per MAC decoding, <= 0.25 for a prompt; ggml: Debian's ggml 0.27 CPU
# backend on the same shape as issue 40 counted it, D 128, n_kv 256 and 1024 decoding, a 512
# prompt at n_kv 512 with an F16 cache; "-" where not counted) and prints it as a table.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 PLUGIN PROGRAM WORK_DIR OUT_CSV" >&2; exit 2; }
plugin=$1 program=$2 work=$3 out=$4
syms=""
for s in ${ATTN_COUNT_SYMS:-gemm_rvv_attention gr_attention_ gr_attn_}; do syms="$syms,sym=$s"; done
mkdir -p "$work"
runs=()
for t in ${ATTN_COUNT_TYPES:-f16 bf16}; do
  for d in ${ATTN_COUNT_D:-64 128}; do
    for n in ${ATTN_COUNT_KV:-256 1024 4096}; do runs+=("$t $d 1 $n"); done
    for p in ${ATTN_COUNT_PROMPT:-512:512}; do runs+=("$t $d ${p%%:*} ${p##*:}"); done
  done
done

# count TYPE D N_Q N_KV: one call into WORK_DIR/TYPE-D-N_Q-N_KV.{txt,macs}
count() {
  local tag="$1-$2-$3-$4"
  qemu-riscv64 -cpu "rv64,v=true,vext_spec=v1.0,vlen=${VLEN:-256}" \
    -plugin "$plugin$syms,out=$work/$tag.txt" "$program" "$@" > "$work/$tag.macs"
}
export -f count
export plugin program work syms
printf '%s\n' "${runs[@]}" | xargs -P "${JOBS:-2}" -L 1 bash -c 'set -euo pipefail; count "$@"' _

echo "kv_type,head_dim,n_q,n_kv,macs,live_macs,insns_per_mac,scalar_per_mac,vwork_per_mac,target,ggml" > "$out.part"
for r in "${runs[@]}"; do
  read -r t d nq nkv <<< "$r"
  read -r macs live < "$work/$t-$d-$nq-$nkv.macs"
  awk -v t="$t" -v d="$d" -v nq="$nq" -v nkv="$nkv" -v m="$macs" -v live="$live" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] } }
    END {
      ggml = "-"
      if (d == 128 && nq == 1 && (nkv == 256 || nkv == 1024)) ggml = t == "f16" ? "25.8" : "9.5"
      if (d == 128 && nq == 512 && nkv == 512 && t == "f16") ggml = "0.34"
      printf "%s,%s,%s,%s,%s,%s,%.4f,%.4f,%.4f,%s,%s\n", t, d, nq, nkv, m, live, c["insns"] / m,
             c["scalar"] / m, c["vwork_eighths"] / 8 / m, nq == 1 ? "0.5" : "0.25", ggml }' \
    "$work/$t-$d-$nq-$nkv.txt" >> "$out.part"
done
mv "$out.part" "$out"
awk -F, 'NR == 1 { print "cache  D     n_q   n_kv  insns/MAC  scalar/MAC  vwork/MAC  target   ggml"; next }
  { printf "%-5s %4d %6d %6d %10.4f %11.4f %10.4f  <= %-5s %5s%s\n", $1, $2, $3, $4, $7, $8, $9, $10,
           $11, $7 <= $10 ? "" : "   (above the target)" }' "$out"
echo "bench-count-attention: wrote $out ($(($(wc -l < "$out") - 1)) rows)"

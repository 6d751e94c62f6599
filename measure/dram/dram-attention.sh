#!/usr/bin/env bash
# DRAM traffic of whole gemm_rvv_attention calls under the cache model (measure/cache/
# cache_model.c: L1D 32 KiB 8-way, L2 16-way, 64-byte lines, LRU, write-back, write-allocate;
# caches cold at the call), against the cache bytes the call must read (K and V once) and the
# minimum (those, Q, the mask and the outputs once). Run by `make bench-dram-attention`:
#   measure/dram/dram-attention.sh PLUGIN PROGRAM WORK_DIR OUT_CSV
# PROGRAM is measure/dram/dram_attention.c built.
# Env: ATTN_DRAM_CALLS "TYPE D H_Q H_KV N_Q N_KV [THREADS];..." (default: a decoded token at
#   n_kv 4096, D 128, 9 query heads on 3 KV heads (issue 40's shape), F16 and BF16, one
#   thread); one thread: an L2 of each DRAM_L2_KB size ("512 128": a core alone / its share
#   of a cluster); above 1: the cache model of a K1's clusters (one L1 per thread, 512 KiB of
#   L2 per 4 threads, lockstep DRAM_LOCKSTEP, 256), as make bench-dram's. DRAM_PLACEMENT
#   (aligned), VLEN (256), JOBS (2).
# Writes OUT_CSV, one row per call and L2:
#   kv_type,head_dim,q_heads,kv_heads,n_q,n_kv,threads,l2_kb,dram_bytes,cache_bytes,min_bytes,ratio
# (ratio: dram_bytes / cache_bytes, issue 40's target <= 1.1) and prints it.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 PLUGIN PROGRAM WORK_DIR OUT_CSV" >&2; exit 2; }
plugin=$1 program=$2 work=$3 out=$4
CALLS=("f16 128 9 3 1 4096" "bf16 128 9 3 1 4096")
if [ -n "${ATTN_DRAM_CALLS:-}" ]; then IFS=';' read -ra CALLS <<< "$ATTN_DRAM_CALLS"; fi
for c in "${CALLS[@]}"; do
  read -r t d hq hkv nq nkv threads extra <<< "$c"
  [[ $t =~ ^(f16|bf16)$ ]] && [ -n "${nkv:-}" ] && [ -z "${extra:-}" ] ||
    { echo "dram-attention: \"$c\": expected f16|bf16 D H_Q H_KV N_Q N_KV [THREADS]" >&2; exit 2; }
done
mkdir -p "$work"

# measure TYPE D H_Q H_KV N_Q N_KV THREADS: one call into WORK_DIR/TAG.{counts,out,csv}
measure() {
  local tag="$1-d$2-h$3-kv$4-q$5-n$6-t$7" l2 args=""
  if [ "$7" = 1 ]; then for l2 in ${DRAM_L2_KB:-512 128}; do args="$args,l2=${l2}K"; done
  else args=",l2=512K,l2_cores=4,lockstep=${DRAM_LOCKSTEP:-256}"; fi
  env -i DRAM_PLACEMENT="${DRAM_PLACEMENT:-aligned}" \
    qemu-riscv64 -cpu "rv64,v=true,vext_spec=v1.0,vlen=${VLEN:-256}" \
    -plugin "$plugin,l1=32K,l1_ways=8,l1_line=64,l2_ways=16,l2_line=64$args,out=$work/$tag.counts" \
    "$program" "$@" > "$work/$tag.out"
  grep -q '^regions=1 .* foreign=0$' "$work/$tag.counts" ||
    { echo "dram-attention: $tag: expected one region with every access modelled, got: $(head -1 "$work/$tag.counts")" >&2; exit 1; }
  awk -v row="$1,$2,$3,$4,$5,$6,$7" -v cache="$(sed -n 's/^cache_bytes=//p' "$work/$tag.out")" \
      -v min="$(sed -n 's/^min_bytes=//p' "$work/$tag.out")" '
    /^l2=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
             printf "%s,%d,%s,%s,%s,%.3f\n", row, f["l2"] / 1024, f["dram_bytes"], cache, min, f["dram_bytes"] / cache }' \
    "$work/$tag.counts" > "$work/$tag.csv"
}
export -f measure
export plugin program work
for c in "${CALLS[@]}"; do
  read -r t d hq hkv nq nkv threads <<< "$c"
  echo "$t $d $hq $hkv $nq $nkv ${threads:-1}"
done | xargs -P "${JOBS:-2}" -L 1 bash -c 'set -euo pipefail; measure "$@"' _

echo "kv_type,head_dim,q_heads,kv_heads,n_q,n_kv,threads,l2_kb,dram_bytes,cache_bytes,min_bytes,ratio" > "$out.part"
for c in "${CALLS[@]}"; do
  read -r t d hq hkv nq nkv threads <<< "$c"
  cat "$work/$t-d$d-h$hq-kv$hkv-q$nq-n$nkv-t${threads:-1}.csv" >> "$out.part"
done
mv "$out.part" "$out"
awk -F, 'NR == 1 { print "cache  D  H_q H_kv  n_q   n_kv thr.  L2 KiB   DRAM bytes  cache bytes  DRAM / cache (target <= 1.1)"; next }
  { printf "%-5s %3d %4d %4d %4d %6d %4d %7d %12d %12d  %.3f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12 }' "$out"
echo "bench-dram-attention: wrote $out ($(($(wc -l < "$out") - 1)) rows)"

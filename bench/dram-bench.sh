#!/usr/bin/env bash
# DRAM traffic per call under the cache model for the benchmark shapes, at L2 512 KiB and
# 128 KiB (L1D 32 KiB 8-way, L2 16-way, 64-byte lines), VLEN 256, one thread. Called by
# `make bench` after bench/run.sh:
#   bench/dram-bench.sh CACHE_PLUGIN DRAM_CALL_PROGRAM
# Writes ${BUILD}/bench/dram.csv (every measurement) and adds the columns
# dram_per_min_512k,dram_per_min_128k to bench/results.csv (VLEN 256 rows of the paths
# measured here; empty elsewhere).
set -euo pipefail
plugin=$1 program=$2
here=$(cd "$(dirname "$0")" && pwd)
work=${BUILD:-build}/bench/dram-runs
out=${BUILD:-build}/bench/dram.csv
results=bench/results.csv
mkdir -p "$work"
rm -f "$work"/*.row

# The shapes of bench/run.sh on every path that is cheap enough, and the M = 128 calls of the
# two other Llama shapes (for the prefill projection). M = 128 runs on narrower shapes of
# bench/shapes-bench.yaml when their plans block as the full one's (the generator's --explain
# output in ${BUILD}/bench/explain.txt says), else whole.
MEASUREMENTS=(
  "1 4096 4096 packed" "1 4096 4096 plain" "1 4096 4096 fallback"
  "1 11008 4096 packed" "1 11008 4096 plain" "1 11008 4096 fallback"
  "1 4096 11008 packed" "1 4096 11008 plain" "1 4096 11008 fallback"
  "1 32000 4096 packed" "1 32000 4096 plain" "1 32000 4096 fallback"
  "4 4096 4096 packed" "4 4096 4096 plain"
  "16 4096 4096 packed" "16 4096 4096 plain"
  "128 4096 4096 packed" "128 4096 4096 plain"
  "128 11008 4096 packed" "128 4096 11008 packed"
)
# DRAM_MEASUREMENTS="M N K PATH;..." measures those instead (a quick look at a few).
if [ -n "${DRAM_MEASUREMENTS:-}" ]; then IFS=';' read -ra MEASUREMENTS <<< "$DRAM_MEASUREMENTS"; fi

# One measurement: "M,N,K,path,bytes_512k,bytes_128k,min_bytes,ratio_512k,ratio_128k,measured"
measure() {
  local m=$1 n=$2 k=$3 path=$4 tag="$1-$2-$3-$4"
  # shellcheck disable=SC2046
  L2_KB="512 128" VLEN=256 "$here/dram-measure.sh" "$plugin" "$program" "$path" "$m" "$n" "$k" \
    $("$here/dram-measure.sh" --columns "$m" "$n" "$k" "${BUILD:-build}/bench/explain.txt" "$path") \
    > "$work/$tag.txt"
  awk -v row="$m,$n,$k,$path" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[NR, kv[1]] = kv[2] } }
    END { printf "%s,%s,%s,%s,%s,%s,%s\n", row, f[1, "dram_bytes"], f[2, "dram_bytes"],
                 f[1, "min_bytes"], f[1, "ratio"], f[2, "ratio"], f[1, "measured"] }' \
    "$work/$tag.txt" > "$work/$tag.row"
}
export -f measure
export plugin program work here

printf '%s\n' "${MEASUREMENTS[@]}" | xargs -P "${JOBS:-2}" -L 1 bash -c 'measure "$@"' _

echo "M,N,K,path,dram_bytes_512k,dram_bytes_128k,min_bytes,dram_per_min_512k,dram_per_min_128k,measured" > "$out"
for entry in "${MEASUREMENTS[@]}"; do
  read -r m n k path <<< "$entry"
  cat "$work/$m-$n-$k-$path.row"
done >> "$out"

# The two ratio columns onto results.csv, by shape and path (kernel-packed is "packed" here).
if [ -f "$results" ] && ! head -1 "$results" | grep -q dram_per_min; then
  awk -F, -v OFS=, 'NR == FNR { if (FNR > 1) r[$1","$2","$3","$4] = $8","$9; next }
    FNR == 1 { print $0, "dram_per_min_512k", "dram_per_min_128k"; next }
    { p = $5; sub(/^kernel-/, "", p); key = $1","$2","$3","p
      print $0, ($4 == 256 && key in r) ? r[key] : "," }' "$out" "$results" > "$results.new"
  mv "$results.new" "$results"
fi
echo "bench: wrote $out ($(($(wc -l < "$out") - 1)) rows) and added the DRAM columns to $results"

#!/usr/bin/env bash
# The report of `make bench`, from what its entries wrote into MEASURE_DIR (count.csv,
# dram.csv, build-times.csv, static-vwork-vlen256.txt): MEASURE_DIR/report.md and
# MEASURE_DIR/vwork_per_mac.png. PROJECT_ARGS: measure/report/project.sh's arguments (the
# count and DRAM CSVs it reads and the models it projects), its tables go into the report.
#   measure/report/report.sh MEASURE_DIR PROJECT_ARGS...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 MEASURE_DIR PROJECT_ARGS..." >&2; exit 2; }
dir=$1
shift
csv=$dir/count.csv dram=$dir/dram.csv times=$dir/build-times.csv static=$dir/static-vwork-vlen256.txt
md=$dir/report.md png=$dir/vwork_per_mac.png
for f in "$csv" "$dram" "$times"; do
  [ -f "$f" ] || { echo "report: $f is missing: run make bench (or the entry that writes it)" >&2; exit 1; }
done

# value SHAPE VLEN PATH COLUMN -> one number from the CSV (COLUMN 6 insns, 8 vwork)
value() {
  awk -F, -v s="$1" -v v="$2" -v p="$3" -v c="$4" \
    '$1","$2","$3 == s && $4 == v && $5 == p { print $c }' "$csv"
}

# dram_value SHAPE PATH L2_KB COLUMN [THREADS] -> one number of dram.csv's aligned rows on
# THREADS threads (default 1; column 8 bytes, 10 the ratio to the minimum), or "-"
dram_value() {
  awk -F, -v s="$1" -v p="$2" -v l2="$3" -v c="$4" -v t="${5:-1}" \
    '$1","$2","$3 == s && $4 == p && $5 == "aligned" && $6 == t && $7 == l2 { v = $c } END { print v == "" ? "-" : v }' "$dram"
}

# placement_rows -> "M|N|K|PATH|L2|aligned|malloc|page+2|worst" for every one-thread call of
# dram.csv that ran on misaligned buffers too: DRAM / minimum per placement ("-": not
# measured), and the worst misaligned bytes over the aligned ones.
placement_rows() {
  awk -F, 'NR > 1 && $6 == 1 { key = $1 "|" $2 "|" $3 "|" $4 "|" $7; r[key, $5] = $10; b[key, $5] = $8
                    if ($5 != "aligned" && !(key in seen)) { seen[key] = 1; order[++n] = key } }
    END { for (i = 1; i <= n; i++) { key = order[i]; w = 0
            for (j = 1; j <= 2; j++) { pl = j == 1 ? "malloc" : "page+2"
              if ((key, pl) in b && (key, "aligned") in b && b[key, pl] / b[key, "aligned"] > w)
                w = b[key, pl] / b[key, "aligned"] }
            printf "%s|%s|%s|%s|%s\n", key, (key, "aligned") in r ? r[key, "aligned"] : "-",
                   (key, "malloc") in r ? r[key, "malloc"] : "-",
                   (key, "page+2") in r ? r[key, "page+2"] : "-", w ? sprintf("%.3f", w) : "-" } }' "$dram"
}

SHAPES=$(awk -F, 'NR > 1 && $4 == 256 && $5 == "kernel-packed" { print $1","$2","$3 }' "$csv")
PATHS="kernel-packed kernel-plain fallback plain-c"

{
  echo "# gemm_rvv benchmark: counted instructions per multiply-accumulate"
  echo
  echo "Made by \`make bench-count\`: each path runs once under \`qemu-riscv64\` with the project's TCG"
  echo "plugin (\`measure/count/insn_count.c\`), counting inside the measured functions only. *insns*:"
  echo "executed instructions; *vwork*: the LMUL in effect of every vector instruction but"
  echo "vset*, doubled for widening ones. Both per MAC (M*N*K). Big runs cover the first columns"
  echo "only, in whole groups of 256 (2^26 MACs for fallback and plain C, 2^28 for kernels): every"
  echo "column costs the same. Plain C is GCC 15,"
  echo "\`-O3 -ffast-math -march=rv64gcv_zvl256b\` (\`rv64gcv\` at VLEN 128)."
  for vlen in 256 128; do
    echo
    echo "## VLEN $vlen: instructions / vector work per MAC"
    echo
    echo "| M | N | K | kernel, packed | kernel, plain [N,K] | scalar fallback | plain C |"
    echo "|---|---|---|---|---|---|---|"
    for s in $SHAPES; do
      row="| ${s//,/ | } |"
      for p in $PATHS; do row="$row $(value "$s" $vlen $p 6) / $(value "$s" $vlen $p 8) |"; done
      echo "$row"
    done
  done
  echo
  echo "## DRAM traffic per call / minimum (cache model, VLEN 256, one thread)"
  echo
  echo "\`make bench-dram\`: \`measure/cache/cache_model.c\` inside QEMU: L1D 32 KiB 8-way, L2 16-way at 512 KiB (one core alone)"
  echo "and 128 KiB (one core's share of a 4-core cluster), 64-byte lines, LRU, write-back,"
  echo "write-allocate, cold at the call; the whole public call (activation widening included,"
  echo "packing at create not). Minimum: the weights once (BF16) + the BF16 activations once + the"
  echo "F32 outputs once. The library's blocking for each L2 (GEMM_RVV_BLOCKING alone / shared)."
  echo "M = 128 may run on two narrower calls whose plans block as the full one's, extrapolated"
  echo "to N along the line through them (\`measured\` in \`$dram\`). Buffers 64-byte aligned."
  echo "Figures: 512 KiB / 128 KiB."
  echo
  echo "| M | N | K | kernel, packed | kernel, plain [N,K] | scalar fallback | DRAM MB, packed, 512 KiB |"
  echo "|---|---|---|---|---|---|---|"
  for s in $(awk -F, 'NR > 1 && $4 == "packed" && $5 == "aligned" && $6 == 1 && $7 == 512 { print $1","$2","$3 }' "$dram"); do
    row="| ${s//,/ | } |"
    for p in packed plain fallback; do
      row="$row $(dram_value "$s" $p 512 10) / $(dram_value "$s" $p 128 10) |"
    done
    echo "$row $(awk -v b="$(dram_value "$s" packed 512 8)" 'BEGIN { printf "%.1f", b / 1e6 }') |"
  done
  echo
  echo "## DRAM traffic per call / minimum on several threads"
  echo
  echo "The same calls through the library's pool (\`gemm_rvv_set_threads\`), the cache model of"
  echo "several cores: one L1D per thread, one 512 KiB L2 per cluster of 4 threads (4 threads: one"
  echo "cluster; 8: both), coherent (\`measure/cache/cache_sim.h\`); the blocking the runtime picks"
  echo "for that count; whole calls. One thread: L2 512 KiB alone. Packed weights, buffers aligned."
  echo
  echo "| M | N | K | 1 thread | 4 threads | 8 threads |"
  echo "|---|---|---|---|---|---|"
  for s in $(awk -F, 'NR > 1 && $4 == "packed" && $5 == "aligned" && $6 > 1 && !seen[$1","$2","$3]++ { print $1","$2","$3 }' "$dram"); do
    echo "| ${s//,/ | } | $(dram_value "$s" packed 512 10) | $(dram_value "$s" packed 512 10 4) | $(dram_value "$s" packed 512 10 8) |"
  done
  echo
  echo "## DRAM traffic by where the caller's buffers sit"
  echo
  echo "The calls of \`make bench-dram\` that also ran on misaligned buffers (\`measure/dram/placement.h\`):"
  echo "X, W and Y from plain malloc (glibc: 16 bytes past a page) or 2 bytes past a page (an FP32 Y"
  echo "at the multiple of 4 below), against the same call on 64-byte aligned buffers. DRAM bytes /"
  echo "minimum, and the worst misaligned / aligned (target: at most 1.02)."
  echo
  echo "| M | N | K | weights | L2 KiB | aligned | malloc | page+2 | worst / aligned |"
  echo "|---|---|---|---|---|---|---|---|---|"
  placement_rows | while IFS='|' read -r m n k w l2 aligned malloc page2 worst; do
    echo "| $m | $n | $k | $w | $l2 | $aligned | $malloc | $page2 | $worst |"
  done
  echo
  "$(dirname "$0")/project.sh" "$@"
  if [ -f "$static" ]; then
    echo
    echo "## Vector work per MAC of every plan's tiles, from the objects (\`make bench-static\`)"
    echo
    echo '```'
    cat "$static"
    echo '```'
  fi
  echo
  echo "## Targets (VLEN 256, packed weights unless said)"
  echo
  echo "| check | measured | target | met |"
  echo "|---|---|---|---|"
  check() { # LABEL MEASURED TARGET
    echo "| $1 | $2 | <= $3 | $(awk -v a="$2" -v b="$3" 'BEGIN {
      print a !~ /^[0-9.]+$/ ? "**not measured**" : (a <= b + 1e-9) ? "yes" : "**no**" }') |"
  }
  for t in "1,4096,4096 0.32 0.065" "4,4096,4096 0.19 0.10" "16,4096,4096 0.155 0.12" \
           "128,4096,4096 0.140 0.14"; do
    read -r s tv ti <<< "$t"
    check "M=${s%%,*} vector work/MAC" "$(value "$s" 256 kernel-packed 8)" "$tv"
    check "M=${s%%,*} instructions/MAC" "$(value "$s" 256 kernel-packed 6)" "$ti"
  done
  for s in $SHAPES; do
    ratio=$(awk -v a="$(value "$s" 256 kernel-plain 8)" -v b="$(value "$s" 256 kernel-packed 8)" \
      'BEGIN { printf "%.2f", a / b }')
    check "plain/packed vector work, ${s//,/ x }" "$ratio" 1.5
  done
  for s in $SHAPES; do
    ratio=$(awk -v a="$(value "$s" 128 kernel-packed 8)" -v b="$(value "$s" 256 kernel-packed 8)" \
      'BEGIN { printf "%.2f", a / b }')
    check "VLEN 128 / VLEN 256 vector work, ${s//,/ x }" "$ratio" 2.2
  done
  for t in "1,4096,4096 1.02 1.02" "1,11008,4096 1.02 1.02" "1,4096,11008 1.02 1.02" \
           "4,4096,4096 1.05 1.05" "16,4096,4096 1.10 1.20" "128,4096,4096 1.50 2.00"; do
    read -r s t512 t128 <<< "$t"
    check "DRAM / minimum, ${s//,/ x }, L2 512 KiB" "$(dram_value "$s" packed 512 10)" "$t512"
    check "DRAM / minimum, ${s//,/ x }, L2 128 KiB" "$(dram_value "$s" packed 128 10)" "$t128"
  done
  for t in "1,4096,4096 1.03" "4,4096,4096 1.03" "16,4096,4096 1.15" "128,4096,4096 2.0"; do
    read -r s target <<< "$t"
    for threads in 4 8; do
      check "DRAM / minimum, ${s//,/ x }, $threads threads" "$(dram_value "$s" packed 512 10 $threads)" "$target"
    done
  done
  for s in 1,4096,4096 4,4096,4096 16,4096,4096 128,4096,4096; do
    for l2 in 512 128; do
      ratio=$(awk -v a="$(dram_value "$s" plain $l2 10)" -v b="$(dram_value "$s" packed $l2 10)" \
        'BEGIN { if (a b ~ /^[0-9.]+$/) printf "%.2f", a / b; else print "-" }')
      check "plain/packed DRAM, ${s//,/ x }, L2 $l2 KiB" "$ratio" 1.10
    done
  done
  # every call measured on misaligned buffers against its aligned twin
  placement_rows | while IFS='|' read -r m n k w l2 aligned malloc page2 worst; do
    check "DRAM misaligned / aligned, $m x $n x $k $w, L2 $l2 KiB" "$worst" 1.02
  done
  echo
  echo "## Generator and library build, from nothing (2-core machine)"
  echo
  echo "| shapes file | make gen + library, s | kernels |"
  echo "|---|---|---|"
  while IFS=, read -r f sec kern; do printf '| %s | %.1f | %s |\n' "$f" "$sec" "$kern"; done < "$times"
  echo
  echo "![vector work per MAC]($(basename "$png"))"
} > "$md"

# The chart: vector work per MAC at VLEN 256, one cluster per shape, one bar per path.
dat=$dir/vwork.dat
{
  echo "shape $PATHS"
  for s in $SHAPES; do
    line="${s//,/x}"
    for p in $PATHS; do line="$line $(value "$s" 256 $p 8)"; done
    echo "$line"
  done
} > "$dat"
gnuplot <<GP
set terminal png size 1000,520
set output "$png"
set title "Vector work per multiply-accumulate at VLEN 256 (lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "vector work / MAC"
set xlabel "M x N x K"
set key outside right top
set grid ytics
set yrange [0:*]
plot for [i=2:5] "$dat" using i:xtic(1) title columnheader(i)
GP
echo "report: wrote $md and $png"

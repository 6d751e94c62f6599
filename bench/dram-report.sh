#!/usr/bin/env bash
# Prints what bench/dram-measure.sh measured (its key=value lines on stdin) as bench/dram.sh
# and bench/dram-variant.sh show it: DRAM bytes, the minimum and their ratio per L2; and, with
# a MAP_DIR, the traffic by address range of the widest run, each range named by the buffers
# it holds ("lib" for none of the named ones).
#   dram-measure.sh ... | bench/dram-report.sh MAP_DIR N COLS "L2_KB ..."
# MAP_DIR empty: no map. COLS: "full" or the "C1 C2" slices measured.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 MAP_DIR N COLS L2S" >&2; exit 2; }
map_dir=$1 n=$2 cols=$3 l2s=$4

awk '{
  for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
  printf "  L2 %4d KiB: %.0f DRAM bytes, minimum %.0f, ratio %s (%s)\n",
         f["l2_kb"], f["dram_bytes"], f["min_bytes"], f["ratio"],
         f["measured"] == "full" ? "full call" : "extrapolated from " f["measured"] " columns"
}'

[ -n "$map_dir" ] || exit 0
widest=$n l2=${l2s%% *}
[ "$cols" = full ] || widest=${cols##* }
echo "  traffic by address range of the call on $widest columns at L2 $l2 KiB, 16 KiB or" \
     "more (MiB filled + MiB written back):"
awk '
  function hex(s,   v, i) { v = 0; s = tolower(substr(s, 3))
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v }
  FNR == NR { if ($1 ~ /^buffer=/) { split($1, a, "="); split($2, b, "="); split($3, c, "=")
                lo[a[2]] = hex(b[2]); hi[a[2]] = hex(b[2]) + c[2] }; next }
  { start = hex($1); end = hex($2); names = ""
    for (x in lo) if (lo[x] < end && hi[x] > start) names = names (names ? "," : "") x
    line = sprintf("    %-26s %8.0f KiB %-8s", $1 "-" $2, $3, names ? names : "lib")
    for (i = 4; i + 2 <= NF; i += 3) {
      split($i, l, "="); split($(i + 1), f, "="); split($(i + 2), w, "=")
      line = line sprintf("  L2 %d KiB: %.2f + %.2f", l[2] / 1024, f[2] * 64 / 1048576, w[2] * 64 / 1048576)
    }
    if ((f[2] + w[2]) * 64 >= 16384) print line }' "$map_dir/$widest-$l2.out" "$map_dir/$widest-$l2.map"

#!/usr/bin/env bash
# Cycles of every compiled tile's k-loop on a SpacemiT X60, under LLVM's scheduling model of
# it (llvm-mca, -mcpu=spacemit-x60): the loops as the build compiled them, taken from the
# objects (loops.awk), each run for ITERATIONS trips.
#   measure/cycles/cycles.sh OBJDUMP GEN_DIR OBJ_DIR OUT_DIR [--check]
# OBJ_DIR/gen holds the tiles objects (bf16_tiles_<variant>.o, q8_0_tiles.o), GEN_DIR the plans
# (which tile each M bucket runs). Writes OUT_DIR/NAME.s (a loop as llvm-mca reads it),
# OUT_DIR/NAME.mca (its report) and OUT_DIR/cycles.csv; prints the table (markdown).
# --check: only that every tile's loop is found and llvm-mca reads it (one trip each).
# Environment: LLVM_MCA (llvm-mca-22), VLEN (256, the K1's), ITERATIONS (200).
# Peak: 8 FP32 MACs a cycle, one vfmacc e32 m1 a cycle at VLEN 256 (the model's vector FP unit).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 OBJDUMP GEN_DIR OBJ_DIR OUT_DIR [--check]" >&2; exit 2; }
objdump=$1 gen=$2 obj=$3 out=$4 check=${5:-}
mca=${LLVM_MCA:-llvm-mca-22} vlen=${VLEN:-256} iterations=${ITERATIONS:-200}
here=$(dirname "$0")
command -v "$mca" >/dev/null || {
  echo "cycles: $mca not found (make bench-cycles installs it: tools/setup-deps.sh cycles)" >&2; exit 1; }
[ "$check" = --check ] && iterations=1

rm -rf "$out" && mkdir -p "$out"
list=$out/loops.txt
: > "$list"
# The tiles objects: every variant's, and the Q8_0 one where a plan has Q8_0 weights.
objects=$(ls "$obj"/gen/bf16_tiles_*.o "$obj"/gen/q8_0_tiles.o 2>/dev/null || true)
[ -n "$objects" ] || { echo "cycles: no tiles object in $obj/gen (build the library first)" >&2; exit 1; }
for o in $objects; do
  "$objdump" -d --no-show-raw-insn "$o" | awk -v dir="$out" -v vlen="$vlen" -f "$here/loops.awk" >> "$list"
done
# A Q8_0 tile has two copies of each path's loop, the same body (the weights going on past
# the K block, or not and the last block peeled off): the first is measured.
awk -v out="$out" '!seen[$2 " " $8]++ { print; next } { system("rm -f \"" out "/" $1 "\"") }' \
  "$list" > "$list.first" && mv "$list.first" "$list"
# Every tile function in the objects has its loop.
tiles=$(for o in $objects; do
          "$objdump" -t "$o" | awk '$NF ~ /^gr_(bf16_tile_r[0-9]+_m[0-9]_|q8_0_tile_r[0-9]+$)/ { print $NF }'
        done | sort -u)
found=$(awk '{ print $2 }' "$list" | sort -u)
[ -n "$tiles" ] && [ "$tiles" = "$found" ] || {
  echo "cycles: tiles without a loop found: $(comm -23 <(echo "$tiles") <(echo "$found") | tr '\n' ' ')" >&2; exit 1; }

# The M buckets whose plans run a tile as their main one (space-separated), by key rows_lmul
# (BF16, either variant) or q8_rows_path (Q8_0: the driver widens the scales when a strip
# has several tiles).
buckets() {
  local f b r l
  for f in "$gen"/bf16_gem*_m*.c "$gen"/q8_0_gem*_m*.c; do
    [ -f "$f" ] || continue
    b=$(sed -n 's/^    \.bucket = \([0-9]*\),$/\1/p' "$f")
    r=$(sed -n 's/^    \.tile_rows = \([0-9]*\),$/\1/p' "$f")
    l=$(sed -n 's/^    \.lmul = \([0-9]*\),$/\1/p' "$f")
    case $(basename "$f") in
      q8_0_*) echo "q8_${r}_$([ "$b" -gt "$r" ] && echo scales-widened || echo scales-in-tile) $b" ;;
      *) echo "${r}_${l} $b" ;;
    esac
  done | sort -u -k1,1 -k2,2n | awk '{ b[$1] = b[$1] (b[$1] == "" ? "" : " ") $2 } END { for (k in b) print k, b[k] }'
}
buckets > "$out/buckets.txt"

echo "variant,tile,rows,lmul,columns,path,k_per_trip,cycles_per_trip,macs_per_trip,macs_per_cycle,busiest,busiest_cycles_per_trip,buckets" > "$out/cycles.csv"
while read -r file fn rows lmul cols kpt macs path; do
  attr=+v
  case $fn in *_zvfbfwma) attr=+v,+zvfbfwma ;; esac
  "$mca" -mtriple=riscv64 -mcpu=spacemit-x60 -mattr=$attr -iterations="$iterations" \
    "$out/$file" > "$out/${file%.s}.mca" 2>&1 || {
    echo "cycles: llvm-mca failed on $out/$file:" >&2; head -5 "$out/${file%.s}.mca" >&2; exit 1; }
  [ "$check" = --check ] && continue
  # Total cycles, and the busiest resource per trip ("Resource pressure per iteration").
  read -r total unit ucycles < <(awk '
    /^Total Cycles:/ { total = $3 }
    /^\[[0-9.]+\] +- / { name[$1] = $3 }
    /^Resource pressure per iteration:/ { getline; n = split($0, hdr); getline; split($0, val)
      for (i = 1; i <= n; i++) if (val[i] != "-" && val[i] + 0 > best) { best = val[i] + 0; unit = name[hdr[i]] } }
    END { printf "%s %s %s\n", total, unit, best }' "$out/${file%.s}.mca")
  case $fn in
    gr_q8_0_*) variant=q8_0 key=q8_${rows}_$path ;;
    *) variant=${fn##*_} key=${rows}_${lmul} ;;
  esac
  used=$(awk -v k="$key" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$out/buckets.txt")
  awk -v v="$variant" -v fn="$fn" -v r="$rows" -v l="$lmul" -v c="$cols" -v p="$path" -v k="$kpt" \
      -v t="$total" -v it="$iterations" -v m="$macs" -v u="$unit" -v uc="$ucycles" -v b="$used" \
    'BEGIN { cpt = t / it; printf "%s,%s,%s,%s,%s,%s,%s,%.3f,%s,%.4f,%s,%s,%s\n", v, fn, r, l, c, p, k, cpt, m, m / cpt, u, uc, b }' \
    >> "$out/cycles.csv"
done < "$list"
[ "$check" = --check ] && { echo "cycles: $(wc -l < "$list") loops of $(echo "$tiles" | wc -l) tiles found, llvm-mca reads each"; exit 0; }

# The table.
awk -F, -v vlen="$vlen" -v it="$iterations" '
  function unit(s) {
    if (s == "SMX60_VFP") return "vector FP"; if (s == "SMX60_VIEU") return "vector integer"
    if (s == "SMX60_VLS") return "vector load/store"; if (s == "SMX60_LS") return "scalar load/store"
    if (s ~ /^SMX60_IEU/) return "scalar integer"; if (s == "SMX60_FP") return "scalar FP"; return s }
  NR == 1 { next }
  {
    gsub(/ /, ", ", $13)
    q8 = $1 == "q8_0"
    tile = q8 ? "Q8_0 " $3 " row" ($3 > 1 ? "s" : "") ($6 == "scales-in-tile" ? ", scales widened here" : \
      $6 == "scales-in-tile-stored" ? ", scales widened here for the strip" : ", scales widened by the driver") : $3 "x" $4
    ceil = $9 / $12
    printf "| %s | %s | %d | %d | %.1f | %.2f | %d | %.2f | %s | %s, %.1f | %.2f | %s | %s |\n",
      $1, tile, $5, $7, $8, $8 / $7, $9 / $7, $10,
      q8 ? "-" : sprintf("%.1f %%", 100 * $10 / 8), unit($11), $12, ceil,
      q8 ? sprintf("%.0f %% of it", 100 * $10 / ceil) : sprintf("%.0f %%", 100 * ceil / 8), $13 == "" ? "-" : $13
  }' "$out/cycles.csv" > "$out/rows.md"
cat <<EOF
Cycles of each tile's k-loop on a SpacemiT X60 under LLVM's model ($("$mca" --version | sed -n 's/.*LLVM version \([0-9.]*\).*/\1/p'), -mcpu=spacemit-x60), VLEN $vlen, $iterations trips.
Peak: 8 FP32 MACs a cycle. Q8_0: int8 MACs; its ceiling is the busiest unit's.

| variant | tile (rows x LMUL) | columns | k per trip | cycles per trip | cycles per k | MACs per k | MACs per cycle | % of peak | busiest unit, its cycles per trip | its ceiling, MACs per cycle | ceiling, % of peak | plans' M buckets |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
$(cat "$out/rows.md")
EOF

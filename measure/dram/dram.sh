#!/usr/bin/env bash
# DRAM traffic of whole Linear calls under the cache model (measure/cache/cache_model.c: L1D
# 32 KiB 8-way, L2 16-way, 64-byte lines, LRU, write-back, write-allocate; caches cold at the
# call; one thread, or several through the library's pool with one L1 per thread and one L2
# per cluster of 4; packing at weight create not counted), against the minimum: the weights
# once, the BF16 activations once, the F32 outputs once. Run by `make bench-dram`, which builds
# every piece from the one library of measure/shapes.yaml:
#   measure/dram/dram.sh PLUGIN DRAM_CALL EXPLAIN WORK_DIR OUT_CSV [TWIN REAL]
# EXPLAIN is the generator's --explain output for that library (which columns a call may be
# measured on: measure-call.sh --columns). TWIN and REAL: dram_variant.c linked against the
# twin library and against the real one, for PATH zvfbfwma.
# Env (make's variables of the same names):
#   DRAM_CALLS      "M N K PATH [PLACEMENT [THREADS]];..." (default: the report's list below).
#                   PATH: packed, plain, fallback, q8 (Q8_0 weights; DRAM_CALL, through the
#                   public API, q8 on the whole call), zvfbfwma
#                   (the packed call's loops with the Zvfbfwma tiles' trace twin, TWIN; one
#                   thread only). THREADS: the library's pool size for the call (default
#                   DRAM_THREADS, else 1). Above 1: the cache model of several cores (one L1D
#                   per thread, one L2 of CLUSTER_L2_KB per cluster of CLUSTER_CORES threads,
#                   coherent; measure/cache/cache_sim.h), the blocking the runtime picks for
#                   that count, and always the whole call (measure-call.sh: slices are exact
#                   on one thread only).
#   DRAM_PLACEMENT  where the caller's buffers sit when a call names none (placement.h; aligned)
#   DRAM_THREADS    the thread count of a call that names none (default 1)
#   DRAM_LOCKSTEP   on several threads, how many accesses a thread may run ahead of the
#                   others (default 256; 0: as the host schedules them; measure-call.sh)
#   DRAM_L2_KB      the L2 sizes modelled on one thread ("512 128": one core alone / its share
#                   of a cluster)
#   DRAM_COLS       "full" or "C1 C2" for every one-thread call (default: measure-call.sh --columns)
#   DRAM_MAP=1      also the traffic by address range of the widest run, each range named by
#                   the buffers it holds (x, w, y, and for zvfbfwma packed, scratch; "lib": none)
#   DRAM_CHECK=0    skips the twin's bit-exactness checks (against the fallback under QEMU 7.2,
#                   and against the real Zvfbfwma tiles under SID_QEMU when it is executable)
#   JOBS            calls measured at once (default 2); VLEN (default 256)
# Writes OUT_CSV, one row per call and L2 (l2_kb: on several threads, each cluster's L2):
#   M,N,K,path,placement,threads,l2_kb,dram_bytes,min_bytes,ratio,measured
# and prints each call's figures. The programs run with the same environment whatever the
# caller's (measure-call.sh), so one call gives the same bytes from any make entry.
set -euo pipefail
[ $# -eq 5 ] || [ $# -eq 7 ] ||
  { echo "usage: $0 PLUGIN DRAM_CALL EXPLAIN WORK_DIR OUT_CSV [TWIN REAL]" >&2; exit 2; }
plugin=$1 program=$2 explain=$3 work=$4 out=$5 twin=${6:-} real=${7:-}
here=$(cd "$(dirname "$0")" && pwd)
l2s=${DRAM_L2_KB:-512 128} vlen=${VLEN:-256}
# The K1: two clusters of four cores, each sharing one 512 KiB L2. A pool of T threads is the
# caller (vCPU 0) and T - 1 workers (vCPUs 1 to T - 1, started in order), so threads 0-3 form
# cluster 0 and 4-7 cluster 1, as the runtime's compact affinity places them on a K1.
CLUSTER_CORES=4 CLUSTER_L2_KB=512

# The shapes of the instruction counts on every path that is cheap enough, and the M = 128
# calls of the two other Llama shapes (for the prefill projection), on aligned buffers.
CALLS=(
  "1 4096 4096 packed" "1 4096 4096 plain" "1 4096 4096 fallback"
  "1 11008 4096 packed" "1 11008 4096 plain" "1 11008 4096 fallback"
  "1 4096 11008 packed" "1 4096 11008 plain" "1 4096 11008 fallback"
  "1 32000 4096 packed" "1 32000 4096 plain" "1 32000 4096 fallback"
  "4 4096 4096 packed" "4 4096 4096 plain"
  "16 4096 4096 packed" "16 4096 4096 plain"
  "128 4096 4096 packed" "128 4096 4096 plain"
  "128 11008 4096 packed" "128 4096 11008 packed"
)
# Llama's 4096 x 4096 on one cluster (4 threads) and on both (8), through the library's pool.
for t in 4 8; do
  for m in 1 4 16 128; do CALLS+=("$m 4096 4096 packed aligned $t"); done
done
# The Llama 4096 x 4096 calls on misaligned buffers too (the report sets them beside the
# aligned ones): malloc'd, and 2 bytes past a page.
for m in 1 16 128; do
  for path in packed plain; do
    CALLS+=("$m 4096 4096 $path malloc" "$m 4096 4096 $path page+2")
  done
done
if [ -n "${DRAM_CALLS:-}" ]; then IFS=';' read -ra CALLS <<< "$DRAM_CALLS"; fi

# Every call checked before any runs: a typo should not surface an hour in.
for c in "${CALLS[@]}"; do
  read -r m n k path placement threads extra <<< "$c"
  placement=${placement:-${DRAM_PLACEMENT:-aligned}} threads=${threads:-${DRAM_THREADS:-1}}
  for v in "$m" "$n" "$k" "$threads"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "dram: \"$c\": M, N, K and THREADS must be positive integers" >&2; exit 2; }
  done
  [ "$threads" -le 64 ] || { echo "dram: \"$c\": at most 64 threads" >&2; exit 2; }
  [ "$path" != zvfbfwma ] || [ "$threads" = 1 ] ||
    { echo "dram: \"$c\": the zvfbfwma twin runs on one thread only" >&2; exit 2; }
  case $path in
    packed|plain|fallback|q8) ;;
    zvfbfwma) [ -n "$twin" ] || { echo "dram: \"$c\": no twin program given" >&2; exit 2; } ;;
    *) echo "dram: \"$c\": PATH must be packed, plain, fallback, q8 or zvfbfwma" >&2; exit 2 ;;
  esac
  [[ $placement =~ ^(aligned|malloc|page\+[0-9]+)$ ]] && [ -z "${extra:-}" ] ||
    { echo "dram: \"$c\": expected M N K PATH [aligned|malloc|page+B [THREADS]]" >&2; exit 2; }
  [ "$path" = fallback ] || awk -v n="$n" -v k="$k" -v w="$([ "$path" = q8 ] && echo q8_0 || echo bf16)" \
    '$3 == n && $4 == k && $5 == w && $6 == "kernel" { found = 1 }
    END { exit !found }' "$explain" ||
    { echo "dram: \"$c\": the library has no kernel for N=$n K=$k: add the layer to measure/shapes.yaml" >&2; exit 2; }
done

# twin_check M N K COLUMNS: the twin's Y equals the fallback's bit for bit (dram_call's data,
# and every kind of BF16), and where sid's QEMU runs, the real tiles' Y equals the twin's.
twin_check() {
  local m=$1 n=$2 k=$3 c=$4 mode out rout line sid=0
  [ -n "${SID_QEMU:-}" ] && [ -x "$SID_QEMU" ] && sid=1
  for mode in check check-special; do
    out=$(qemu-riscv64 -cpu "rv64,v=true,vext_spec=v1.0,vlen=$vlen" "$twin" zvfbfwma "$m" "$c" "$k" $mode |
          grep '^check=') || { echo "dram: twin N=$c $mode: $out" >&2; return 1; }
    line="  $mode N=$c: twin (QEMU 7.2) vs fallback: ${out%% *}"
    if [ $sid = 1 ]; then
      rout=$("$SID_QEMU" -cpu "rv64,v=true,vlen=$vlen,zvfbfmin=true,zvfbfwma=true" \
               "$real" zvfbfwma "$m" "$c" "$k" $mode | grep '^check=') ||
        { echo "dram: real Zvfbfwma N=$c $mode under sid's QEMU: $rout" >&2; return 1; }
      [ "${rout#* }" = "${out#* }" ] ||
        { echo "dram: N=$c $mode: the twin's ${out#* } differs from the real tiles' ${rout#* }" >&2; return 1; }
      line="$line; real vfwmaccbf16 (sid's QEMU) vs fallback: ${rout%% *}; same outputs (${out#* })"
    else
      line="$line (${out#* }; no sid QEMU: not compared with the real tiles)"
    fi
    echo "$line"
  done
}

# report DIR N COLUMNS L2S: the figures of one call as text, and its map with DRAM_MAP=1.
report() {
  local dir=$1 widest=$2 cols=$3 l2=${4%% *}
  awk '{
    for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    printf "  L2 %4d KiB: %.0f DRAM bytes, minimum %.0f, ratio %s (%s%s)\n",
           f["l2_kb"], f["dram_bytes"], f["min_bytes"], f["ratio"],
           f["measured"] == "full" ? "full call" : "extrapolated from " f["measured"] " columns",
           f["work"] == "" ? "" : "; accesses per thread, %: " f["work"] \
             "; mean run of one thread between two of another: " f["run"] " accesses" \
             "; lockstep joins: " f["joins"]
  }' "$dir/result.txt"
  [ "${DRAM_MAP:-0}" = 1 ] || return 0
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
      if ((f[2] + w[2]) * 64 >= 16384) print line }' "$dir/map/$widest-$l2.out" "$dir/map/$widest-$l2.map"
}

# call_dir M N K PATH PLACEMENT THREADS -> the call's folder under WORK_DIR
call_dir() { echo "$work/$1-$2-$3-$4-$5$([ "$6" = 1 ] || echo "-t$6")"; }

# measure M N K PATH PLACEMENT THREADS: one call into its call_dir (result.txt, rows.csv,
# report.txt).
measure() {
  local m=$1 n=$2 k=$3 path=$4 placement=$5 threads=$6 dir cols prog=$program map_dir="" l2=$l2s
  dir=$(call_dir "$@")
  rm -rf "$dir"; mkdir -p "$dir"
  if [ "$threads" != 1 ]; then cols=full l2=$CLUSTER_L2_KB
  elif [ -n "${DRAM_COLS:-}" ]; then cols=$DRAM_COLS
  elif [ "$path" = q8 ]; then cols=full # the columns' slices are of BF16 plans
  else cols=$("$here/measure-call.sh" --columns "$m" "$n" "$k" "$explain" "${path/zvfbfwma/packed}"); fi
  if [ "$path" = zvfbfwma ]; then
    prog=$twin
    # on the narrower slice when extrapolating: it has the shape's tile and blocking
    if [ "${DRAM_CHECK:-1}" != 0 ]; then
      DRAM_PLACEMENT=$placement twin_check "$m" "$n" "$k" "$([ "$cols" = full ] && echo "$n" || echo "${cols%% *}")" \
        > "$dir/check.txt"
    fi
  fi
  [ "${DRAM_MAP:-0}" != 1 ] || { map_dir=$dir/map; mkdir -p "$map_dir"; }
  # shellcheck disable=SC2086
  DRAM_PLACEMENT=$placement DRAM_MAP_DIR=$map_dir L2_KB=$l2 VLEN=$vlen THREADS=$threads \
    LOCKSTEP=${DRAM_LOCKSTEP:-256} \
    L2_CORES=$CLUSTER_CORES "$here/measure-call.sh" "$plugin" "$prog" "$path" "$m" "$n" "$k" $cols \
    > "$dir/result.txt"
  awk -v row="$m,$n,$k,$path,$placement,$threads" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      gsub(",", "+", f["measured"])
      printf "%s,%s,%s,%s,%s,%s\n", row, f["l2_kb"], f["dram_bytes"], f["min_bytes"], f["ratio"], f["measured"] }' \
    "$dir/result.txt" > "$dir/rows.csv"
  {
    if [ "$threads" = 1 ]; then echo "dram: M=$m N=$n K=$k $path, buffers $placement, VLEN $vlen, one thread"
    else echo "dram: M=$m N=$n K=$k $path, buffers $placement, VLEN $vlen, $threads threads" \
              "(clusters of $CLUSTER_CORES, L2 per cluster; lockstep ${DRAM_LOCKSTEP:-256})"; fi
    [ ! -f "$dir/check.txt" ] || cat "$dir/check.txt"
    report "$dir" "$n" "$cols" "$l2"
  } > "$dir/report.txt"
}
export -f measure twin_check report call_dir
export plugin program twin real explain work here l2s vlen CLUSTER_CORES CLUSTER_L2_KB

mkdir -p "$work"
for c in "${CALLS[@]}"; do
  read -r m n k path placement threads <<< "$c"
  echo "$m $n $k $path ${placement:-${DRAM_PLACEMENT:-aligned}} ${threads:-${DRAM_THREADS:-1}}"
done | xargs -P "${JOBS:-2}" -L 1 bash -c 'set -euo pipefail; measure "$@"' _

echo "M,N,K,path,placement,threads,l2_kb,dram_bytes,min_bytes,ratio,measured" > "$out.part"
for c in "${CALLS[@]}"; do
  read -r m n k path placement threads <<< "$c"
  dir=$(call_dir "$m" "$n" "$k" "$path" "${placement:-${DRAM_PLACEMENT:-aligned}}" "${threads:-${DRAM_THREADS:-1}}")
  cat "$dir/report.txt"
  cat "$dir/rows.csv" >> "$out.part"
done
mv "$out.part" "$out"
echo "dram: wrote $out ($(($(wc -l < "$out") - 1)) rows)"

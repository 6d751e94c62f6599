#!/usr/bin/env bash
# DRAM traffic of one Linear call under the cache model, against the minimum:
#   measure/dram/measure-call.sh PLUGIN PROGRAM PATH M N K [COLS1 COLS2 | full]
#   measure/dram/measure-call.sh --columns M N K [EXPLAIN [PATH]]  the columns to measure: "full" for calls
#       of at most 2^28 multiply-accumulates; else "C 2C" for the least C of 256, 512, 1024,
#       2048 (2C below N) whose plans for (C, K) and (2C, K) block as that of (N, K) does in the
#       generator's --explain output EXPLAIN (tile, loop order, K block, column block and the
#       rows from which a call copies X, for both L2 shares; PATH plain: the plain weights'
#       blockings): so the narrower calls copy X as the full call does. "full" when none
#       does or there is no such output.
# PLUGIN is measure/cache/cache_model.c built, PROGRAM measure/dram/dram_call.c (PATH packed,
# plain or fallback) or dram_variant.c (PATH a variant) linked statically against a library
# that has kernels for (N, K) (or for (COLS1, K) and (COLS2, K)); measure/dram/dram.sh runs it.
# Env: L2_KB (default "512 128", each modelled with L1D 32 KiB 8-way, L2 16-way,
# 64-byte lines; one run each, with GEMM_RVV_BLOCKING=alone at 512 KiB and more, else
# shared), THREADS (default 1: the program's pool size; above 1 the plugin models one L1 per
# vCPU and one L2 of each L2_KB size per cluster of L2_CORES (default 4) vCPUs, all sizes in
# one run, and the library picks its blocking itself, as it does for that many threads; the
# whole call then runs, never slices), LOCKSTEP (default 256: on several threads, no thread
# runs more than that many accesses ahead of the others, as cores of one speed would; 0: as
# the host schedules them), VLEN (default 256), DRAM_MAP_DIR (keep each run's traffic by
# address range and the program's output there, as COLUMNS-L2_KB.map and .out),
# DRAM_PLACEMENT (where the program puts the caller's buffers: measure/dram/placement.h).
# Prints one line per L2:
#   l2_kb=512 dram_bytes=B min_bytes=B ratio=R measured=full
# With COLS1 < COLS2 the two narrower calls run instead of the full one (a call with M = 128
# and N = 4096 takes minutes under QEMU) and the traffic is extrapolated to N columns along
# the line through them: traffic = fixed + per_column * columns. That is exact when the kernel
# walks the columns in blocks that each cost the same and COLS1, COLS2 are multiples of the
# block (the fixed part, the activation widening, is the same at any N); see docs/measurements.md.
set -euo pipefail
# plan_blocking EXPLAIN BUCKET N K PATH -> the blocking columns of that plan's row of the table
# (all but its name and its modelled DRAM and vector work, which depend on N; the X column
# is the plan's own: the rows from which its one-thread call copies X), or nothing; on plain
# weights those of the "plain [N, K] weights" row under it where it has one.
plan_blocking() {
  awk -v re="^bf16_.*_m$2_n$3_k$4\$" -v plain="$([ "$5" = plain ] && echo 1 || echo 0)" '
    found && plain && $1 == "plain" && NF >= 16 { print tile, $5, $6, $7, $8, $11, $12, $13, $14; done = 1; exit }
    found { exit }
    $1 ~ re && NF >= 14 { tile = $2; row = $2 " " $3 " " $4 " " $5 " " $6 " " $9 " " $10 " " $11 " " $12; found = 1 }
    END { if (found && !done) print row }' "$1"
}
default_columns() {
  local m=$1 n=$2 k=$3 explain=${4:-} path=${5:-packed} budget=$(( 1 << 28 )) c b=1 full
  if [ $(( m * n * k )) -le $budget ]; then echo full; return; fi
  while [ $b -lt "$m" ] && [ $b -lt 128 ]; do b=$((2 * b)); done
  if [ -n "$explain" ] && [ -f "$explain" ]; then
    full=$(plan_blocking "$explain" $b "$n" "$k" "$path")
    for c in 256 512 1024 2048; do
      [ $((2 * c)) -lt "$n" ] || break
      # the same blocking, and the same copy of X or none, in both narrower calls
      if [ -n "$full" ] && [ "$(plan_blocking "$explain" $b $c "$k" "$path")" = "$full" ] &&
         [ "$(plan_blocking "$explain" $b $((2 * c)) "$k" "$path")" = "$full" ]; then
        echo "$c $((2 * c))"; return
      fi
    done
  fi
  echo full
}
if [ "${1:-}" = --columns ] && [ $# -ge 4 ]; then default_columns "$2" "$3" "$4" "${5:-}" "${6:-}"; exit 0; fi
[ $# -ge 6 ] && [ $# -le 8 ] || {
  echo "usage: $0 PLUGIN PROGRAM packed|plain|fallback|q8 M N K [COLS1 COLS2 | full]" >&2; exit 2; }
plugin=$1 program=$2 path=$3 m=$4 n=$5 k=$6
shift 6
# shellcheck disable=SC2046
[ $# -gt 0 ] || set -- $(default_columns "$m" "$n" "$k")
[ "${1:-}" != full ] || shift
l2s=${L2_KB:-512 128} vlen=${VLEN:-256} threads=${THREADS:-1} l2_cores=${L2_CORES:-4}
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "measure-call: THREADS must be a positive integer" >&2; exit 2; }
# Slices are exact on one thread only: on several, the columns are split over the threads, so
# a narrower call gives each thread other pieces than the full call does.
[ "$threads" = 1 ] || [ $# -eq 0 ] ||
  { echo "measure-call: on $threads threads only whole calls are measured (no COLS1 COLS2)" >&2; exit 2; }
qemu=$(command -v qemu-riscv64)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The library's blocking for each L2 (GEMM_RVV_BLOCKING, which older libraries ignore): the
# plan for a whole L2 at 512 KiB and more, that for one core's share of it below.
blocking() { [ "$1" -ge 512 ] && echo alone || echo shared; }

# check_run TAG: the call was served as asked, in one region, every access modelled.
check_run() {
  local tag=$1 served want=kernel
  [ "$path" = fallback ] && want=fallback
  served=$(sed -n 's/^served=//p' "$tmp/$tag.out")
  if [ "$served" != "$want" ]; then
    echo "measure-call: M=$m N=${tag%%-*} K=$k $path was served by the $served, not a $want" \
         "(does the library have a kernel for N=${tag%%-*}, K=$k?)" >&2
    exit 1
  fi
  if ! grep -q '^regions=1 .* foreign=0$' "$tmp/$tag.counts"; then
    echo "measure-call: expected one region with every access modelled, got: $(head -1 "$tmp/$tag.counts")" >&2
    exit 1
  fi
}

# run_threads: the whole call on THREADS threads, once for every L2 size, into
# "$tmp/N-L2.counts" for each. No GEMM_RVV_BLOCKING: the runtime's own choice for that count.
run_threads() {
  local l2 args="" tag=$n-threads
  for l2 in $l2s; do args="$args,l2=${l2}K"; done
  args="$args,l2_cores=$l2_cores,lockstep=${LOCKSTEP:-256}"
  [ -z "${DRAM_MAP_DIR:-}" ] || args="$args,regions=$DRAM_MAP_DIR/$n-${l2s%% *}.map"
  # A thread the host left unscheduled for a second drops out of the lockstep, and the run is
  # not the one cores of one speed would make: up to three tries for one without that.
  local try joins
  for try in 1 2 3; do
    env -i DRAM_PLACEMENT="${DRAM_PLACEMENT:-aligned}" \
      "$qemu" -cpu "rv64,v=true,vext_spec=v1.0,vlen=$vlen" \
      -plugin "$plugin,l1=32K,l1_ways=8,l1_line=64,l2_ways=16,l2_line=64$args,out=$tmp/$tag.counts" \
      "$program" "$path" "$m" "$n" "$k" "$threads" > "$tmp/$tag.out"
    joins=$(sed -n 's/^cores=.* joins=//p' "$tmp/$tag.counts")
    [ "${LOCKSTEP:-256}" != 0 ] && [ "${joins:-0}" -gt "$threads" ] || break
    echo "measure-call: M=$m N=$n K=$k $path on $threads threads: a thread left the lockstep" \
         "($joins joins; try $try of 3)" >&2
  done
  [ -z "${DRAM_MAP_DIR:-}" ] || cp "$tmp/$tag.out" "$DRAM_MAP_DIR/$n-${l2s%% *}.out"
  check_run "$tag"
  for l2 in $l2s; do cp "$tmp/$tag.counts" "$tmp/$n-$l2.counts"; done
}

# work TAG -> each vCPU's share of the accesses, in percent, and the mean run of one thread's
# accesses, and how often a thread joined the lockstep (once each, more if one was left out
# for a while): "A0/A1/... run=R joins=J".
work() {
  awk '/^vcpu=/ { split($1, v, "="); split($3, a, "="); n[v[2]] = a[2]; t += a[2]; if (v[2] > hi) hi = v[2] }
       /^cores=/ { for (i = 1; i <= NF; i++) { split($i, s, "="); f[s[1]] = s[2] } }
       END { for (i = 0; i <= hi; i++) printf "%s%.0f", i ? "/" : "", 100 * n[i] / t
             printf " run=%.0f joins=%d", f["switches"] ? t / f["switches"] : 0, f["joins"] }' "$tmp/$1.counts"
}

# run COLUMNS -> "$tmp/COLUMNS-L2.counts" for each L2: one call on COLUMNS columns per L2.
run() {
  local cols=$1 l2 args tag
  for l2 in $l2s; do
    tag=$cols-$l2 args=",l2=${l2}K"
    [ -z "${DRAM_MAP_DIR:-}" ] || args="$args,regions=$DRAM_MAP_DIR/$tag.map"
    # the program's environment is these two variables alone: where its stack sits does not
    # depend on the caller's
    env -i GEMM_RVV_BLOCKING="$(blocking "$l2")" DRAM_PLACEMENT="${DRAM_PLACEMENT:-aligned}" \
      "$qemu" -cpu "rv64,v=true,vext_spec=v1.0,vlen=$vlen" \
      -plugin "$plugin,l1=32K,l1_ways=8,l1_line=64,l2_ways=16,l2_line=64$args,out=$tmp/$tag.counts" \
      "$program" "$path" "$m" "$cols" "$k" > "$tmp/$tag.out"
    [ -z "${DRAM_MAP_DIR:-}" ] || cp "$tmp/$tag.out" "$DRAM_MAP_DIR/$tag.out"
    check_run "$tag"
  done
}

# bytes COLUMNS L2_KB -> the DRAM bytes of that run at that L2.
bytes() { sed -n "s/^l2=$(($2 * 1024)) .*dram_bytes=//p" "$tmp/$1-$2.counts"; }

# The weights, X and Y once: BF16 W and X, or for q8 the GGUF blocks (34 bytes per 32 weights)
# and FP32 X; FP32 Y.
if [ "$path" = q8 ]; then min=$(( n * k / 32 * 34 + m * k * 4 + m * n * 4 ))
else min=$(( n * k * 2 + m * k * 2 + m * n * 4 )); fi
if [ "$threads" -gt 1 ]; then
  run_threads
  for l2 in $l2s; do
    awk -v l2="$l2" -v d="$(bytes "$n" "$l2")" -v min="$min" -v w="$(work "$n-threads")" 'BEGIN {
      printf "l2_kb=%d dram_bytes=%.0f min_bytes=%.0f ratio=%.3f measured=full work=%s\n", l2, d, min, d / min, w }'
  done
elif [ $# -eq 0 ]; then
  run "$n"
  for l2 in $l2s; do
    awk -v l2="$l2" -v d="$(bytes "$n" "$l2")" -v min="$min" 'BEGIN {
      printf "l2_kb=%d dram_bytes=%.0f min_bytes=%.0f ratio=%.3f measured=full\n", l2, d, min, d / min }'
  done
else
  [ $# -eq 2 ] || { echo "measure-call: give two column counts, or full" >&2; exit 2; }
  c1=$1 c2=$2
  [ "$c1" -lt "$c2" ] || { echo "measure-call: COLS1 must be below COLS2" >&2; exit 2; }
  run "$c1"
  run "$c2"
  for l2 in $l2s; do
    awk -v l2="$l2" -v d1="$(bytes "$c1" "$l2")" -v d2="$(bytes "$c2" "$l2")" -v c1="$c1" \
        -v c2="$c2" -v n="$n" -v min="$min" 'BEGIN {
      per = (d2 - d1) / (c2 - c1); fixed = d1 - per * c1; d = fixed + per * n
      printf "l2_kb=%d dram_bytes=%.0f min_bytes=%.0f ratio=%.3f measured=cols:%d,%d" \
             " fixed_bytes=%.0f per_column_bytes=%.0f\n", l2, d, min, d / min, c1, c2, fixed, per }'
  done
fi

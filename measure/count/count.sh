#!/usr/bin/env bash
# Executed instructions and vector work per multiply-accumulate, counted by the QEMU plugin
# measure/count/insn_count.c, for every shape x path x VLEN, into a CSV
# (M,N,K,vlen,path,insns_per_mac,scalar_per_mac,vwork_per_mac). Run by `make bench-count`:
#   measure/count/count.sh PLUGIN COUNT_CALL WORK_DIR OUT_CSV
# COUNT_RUNS="M N K PATH VLEN;..." counts those runs instead of the whole table. JOBS: runs at
# once (default 2).
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 PLUGIN COUNT_CALL WORK_DIR OUT_CSV" >&2; exit 2; }
plugin=$1 program=$2 work=$3 csv=$4
mkdir -p "$work"
rm -f "$work"/*.row

SHAPES=("1 4096 4096" "1 11008 4096" "1 4096 11008" "1 32000 4096"
        "4 4096 4096" "16 4096 4096" "128 4096 4096")
PATHS=(kernel-packed kernel-plain fallback plain-c q8-packed)
VLENS=(256 128)

# The functions each path is measured in (symbol prefixes). The driver, for every format:
# runtime/driver.c's and plan_call.c's functions are all named gr_drive_* or drive_* (a rule
# of those files: a new or renamed one is still counted), runtime/lines.c's gr_k_* and gr_y_*.
symbols() {
  local driver="sym=gr_drive_,sym=drive_,sym=gr_k_,sym=gr_y_"
  case $1 in
    # the BF16 tiles, the driver, the variant's support (arrange_, pack_, vlenb_ of each)
    kernel-*) echo "sym=gr_bf16_,$driver,sym=arrange_,sym=pack_,sym=vlenb_" ;;
    fallback) echo "sym=gr_fallback,sym=widen_column" ;;
    # the Q8_0 tiles and their support (q8_*: the widening, X's quantisation), Q8_0's
    # descriptor (runtime/q8_0_format.c, q8_*), the scale's scalar rule (q8_0_scale.h), the driver
    q8-packed) echo "sym=gr_q8_0_tile,sym=q8_,sym=gr_q8_quantize_rows,sym=gr_q8_x_scale,sym=gr_f32_round_fp16,$driver" ;;
    plain-c)  echo "sym=plain_c_linear,sym=widen" ;;
  esac
}

# One measurement: writes "M,N,K,vlen,path,insns/mac,scalar/mac,vwork/mac" to a .row file.
measure() {
  local m=$1 n=$2 k=$3 vlen=$4 path=$5 cols=$2 tag
  tag="$m-$n-$k-$vlen-$path"
  # Every column costs the same (N is a multiple of every strip width here), so big runs
  # measure a whole number of 256-column groups: about 2^26 MACs for the scalar paths, 2^28
  # for the kernels.
  local budget=28
  [ "$path" = fallback ] || [ "$path" = plain-c ] && budget=26
  if [ $(( m * n * k )) -gt $(( 1 << budget )) ]; then
    cols=$(( (1 << budget) / (m * k) / 256 * 256 ))
    [ "$cols" -lt 256 ] && cols=256
  fi
  qemu-riscv64 -cpu "rv64,v=true,vext_spec=v1.0,vlen=$vlen" \
    -plugin "$plugin,$(symbols "$path"),out=$work/$tag.count" \
    "$program" "$path" "$m" "$n" "$k" "$cols" > "$work/$tag.out"
  local macs counts
  macs=$(sed -n 's/^macs=//p' "$work/$tag.out")
  counts=$(cat "$work/$tag.count")
  awk -v m="$m" -v n="$n" -v k="$k" -v vlen="$vlen" -v path="$path" -v macs="$macs" \
      -v counts="$counts" 'BEGIN {
        split(counts, f, /[ =]/)   # insns=A scalar=B vwork_eighths=C unknown_vsetvl=D
        if (f[8] != 0) { print "unknown vsetvl in " path > "/dev/stderr"; exit 1 }
        printf "%d,%d,%d,%d,%s,%.4f,%.4f,%.4f\n", m, n, k, vlen, path,
               f[2] / macs, f[4] / macs, f[6] / 8 / macs }' > "$work/$tag.row"
}
export -f measure symbols
export plugin program work

RUNS=()
for vlen in "${VLENS[@]}"; do
  for shape in "${SHAPES[@]}"; do
    for path in "${PATHS[@]}"; do
      [ "$path" = q8-packed ] || RUNS+=("$shape $path $vlen")
    done
  done
done
# Q8_0: the 4096 x 4096 layer of measure/shapes.yaml at VLEN 256 (docs/measurements.md).
for m in 1 16 128; do RUNS+=("$m 4096 4096 q8-packed 256"); done
if [ -n "${COUNT_RUNS:-}" ]; then IFS=';' read -ra RUNS <<< "$COUNT_RUNS"; fi
for r in "${RUNS[@]}"; do
  read -r m n k path vlen extra <<< "$r"
  [[ "$m $n $k $vlen" =~ ^[1-9][0-9]*\ [1-9][0-9]*\ [1-9][0-9]*\ [1-9][0-9]*$ ]] && [ -z "${extra:-}" ] &&
    [[ " ${PATHS[*]} " == *" $path "* ]] ||
    { echo "count: \"$r\": expected M N K PATH VLEN, PATH one of ${PATHS[*]}" >&2; exit 2; }
done

for r in "${RUNS[@]}"; do
  read -r m n k path vlen <<< "$r"
  echo "$m $n $k $vlen $path"
done | xargs -P "${JOBS:-2}" -L 1 bash -c 'set -euo pipefail; measure "$@"' _

echo "M,N,K,vlen,path,insns_per_mac,scalar_per_mac,vwork_per_mac" > "$csv.part"
for r in "${RUNS[@]}"; do
  read -r m n k path vlen <<< "$r"
  cat "$work/$m-$n-$k-$vlen-$path.row"
done >> "$csv.part"
mv "$csv.part" "$csv"
echo "count: wrote $csv ($(($(wc -l < "$csv") - 1)) rows)"

#!/usr/bin/env bash
# Vector work per multiply-accumulate of every plan's micro-kernels, counted statically from
# the compiled tiles (objdump), for every ISA variant: the way to count the Zvfbfwma tiles,
# which only sid's QEMU 11 runs and which loads no plugins here.
#   measure/static-vwork.sh OBJDUMP GEN_DIR OBJ_DIR [VLEN]
# GEN_DIR holds the generated plans (bf16_gemm_*.c, bf16_gemv_*.c), OBJ_DIR/gen the compiled
# bf16_tiles_<variant>.o. VLEN defaults to 256.
#
# The metric is insn_count.c's: each vector instruction but vsetvli/vsetivli weighs the LMUL of
# the vtype in effect, twice for widening ones (vw*, vfw*: vfwmaccbf16 too). Counted over one
# trip of each tile function's main loop (the backward branch whose body holds the most FMAs),
# with the vtype in effect on entry to it; MACs per trip are each FMA's VLMAX elements
# (VLEN * LMUL / SEW). A plan of bucket M and tile R runs M / R tiles of R rows and one of the
# rest, so its figure is their sum of work over their sum of MACs ("loop"). "call" adds what a
# plan with K blocks does between them: each row's partial sums stored and loaded again at
# LMUL L per strip per block boundary, 64 (KB - 1) / (VLEN K) per MAC (KB the K blocks of the
# L2-alone blocking; gen/blocking.c models it so). Left out: arranging the activations (once
# per column block) and the last block's bias and output; for the base tiles the plugin's
# dynamic count of a whole call agrees with "call" within 1 % (docs/measurements.md).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OBJDUMP GEN_DIR OBJ_DIR [VLEN]" >&2; exit 2; }
objdump=$1 gen=$2 obj=$3 vlen=${4:-256}

# One line per tile function: variant rows lmul vwork_per_trip macs_per_trip
loops() {
  local variant=$1 file=$obj/gen/bf16_tiles_$1.o
  [ -f "$file" ] || { echo "static-vwork: $file not found (build the library first)" >&2; exit 1; }
  "$objdump" -d --no-show-raw-insn "$file" | awk -v variant="$variant" -v vlen="$vlen" '
    function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    function lmul_of(s) { return s ~ /^mf/ ? 1 / substr(s, 3) : substr(s, 2) + 0 }
    function flush(   i, j, best, bestlen, fma, head, lm, sew, vw, macs, parts, n) {
      if (fn == "") return
      best = -1; bestlen = 0
      for (i = 0; i < count; i++) {           # backward branches: loops; the innermost with FMAs
        if (tgt[i] == "" || tgt[i] >= adr[i]) continue
        fma = 0
        for (j = 0; j < count; j++)
          if (adr[j] >= tgt[i] && adr[j] <= adr[i] && mn[j] ~ /^vf(w)?macc/) fma++
        if (fma > 0 && (best < 0 || adr[i] - tgt[i] < bestlen)) { best = i; bestlen = adr[i] - tgt[i] }
      }
      if (best < 0) { fn = ""; return }
      head = tgt[best]; lm = 1; sew = 8
      for (j = 0; j < count && adr[j] < head; j++)  # vtype on entry
        if (mn[j] ~ /^vseti?vli$/) { n = split(op[j], parts, ","); sew = substr(parts[3], 2); lm = lmul_of(parts[4]) }
      for (j = 0; j < count; j++)                  # a vsetvli inside the loop holds at its head
        if (adr[j] >= head && adr[j] <= adr[best] && mn[j] ~ /^vseti?vli$/) {
          n = split(op[j], parts, ","); sew = substr(parts[3], 2); lm = lmul_of(parts[4]) }
      vw = 0; macs = 0
      for (j = 0; j < count; j++) {
        if (adr[j] < head || adr[j] > adr[best]) continue
        if (mn[j] ~ /^vseti?vli$/) { n = split(op[j], parts, ","); sew = substr(parts[3], 2); lm = lmul_of(parts[4]); continue }
        if (mn[j] !~ /^v/) continue
        vw += lm * (mn[j] ~ /^vf?w/ ? 2 : 1)
        if (mn[j] ~ /^vf(w)?macc/) macs += vlen * lm / sew
      }
      split(fn, parts, "_")                         # gr bf16 tile rR mL variant
      printf "%s %s %s %.4f %d\n", variant, substr(parts[4], 2), substr(parts[5], 2), vw, macs
      fn = ""
    }
    /^[0-9a-f]+ <[^.][^>]*>:$/ {                     # a function (local labels start with .)
      flush(); name = $2; gsub(/[<>:]/, "", name)
      fn = name ~ /^gr_bf16_tile_r[0-9]+_m[0-9]_/ ? name : ""; count = 0; next }
    fn != "" && /^ +[0-9a-f]+:\t/ {
      split($0, f, "\t"); a = f[1]; gsub(/[ :]/, "", a)
      adr[count] = hex(a); mn[count] = f[2]; op[count] = f[3]; tgt[count] = ""
      if (f[2] ~ /^(b[a-z]*|j)$/ && match(f[3], /[0-9a-f]+ </)) tgt[count] = hex(substr(f[3], RSTART, RLENGTH - 2))
      count++ }
    END { flush() }'
}

variants="base zvfbfwma"
tables=$(for v in $variants; do loops "$v"; done)
printf '%-34s %5s %5s' plan tile KB
for v in $variants; do printf ' %9s %9s' "$v" "(call)"; done
printf '   (vector work per MAC, VLEN %s)\n' "$vlen"
for plan in $(ls "$gen" | sed -n 's/^\(bf16_gem[mv]_m[0-9]*_n[0-9]*_k[0-9]*\)\.c$/\1/p' | sort -t_ -k3.2n -k4.2n -k5.2n); do
  src=$gen/$plan.c
  bucket=$(sed -n 's/^    \.bucket = \([0-9]*\),$/\1/p' "$src")
  rows=$(sed -n 's/^    \.tile_rows = \([0-9]*\),$/\1/p' "$src")
  lmul=$(sed -n 's/^    \.lmul = \([0-9]*\),$/\1/p' "$src")
  k=$(sed -n 's/^    \.k = \([0-9]*\),$/\1/p' "$src")
  # the packed weights' blocking for a core alone (.blocking, before .plain)
  kc=$(sed -n '/^    \.blocking = {$/,/^    },$/s/^        \[GR_L2_ALONE\] = {.order = [A-Z_]*, .k_block = \([0-9]*\),.*/\1/p' "$src")
  blocks=$(( kc >= k ? 1 : (k + kc - 1) / kc ))
  printf '%-34s %5s %5s' "$plan" "${rows}x$lmul" "$blocks"
  for v in $variants; do
    echo "$tables" | awk -v v="$v" -v m="$bucket" -v r="$rows" -v l="$lmul" -v kb="$blocks" \
      -v k="$k" -v vlen="$vlen" '
      $1 == v && $3 == l { vw[$2] = $4; macs[$2] = $5 }
      END {
        full = int(m / r); rest = m % r
        w = full * vw[r] + (rest ? vw[rest] : 0); n = full * macs[r] + (rest ? macs[rest] : 0)
        if (n > 0) printf " %9.4f %9.4f", w / n, w / n + 64 * (kb - 1) / (vlen * k)
        else printf " %9s %9s", "-", "-" }'
  done
  printf '\n'
done

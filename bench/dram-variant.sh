#!/usr/bin/env bash
# DRAM traffic of one call of a chosen kernel VARIANT (base or zvfbfwma), packed weights, one
# thread, under the cache model of bench/dram.sh (L1D 32 KiB 8-way, L2 16-way, 64-byte lines,
# LRU, write-back, write-allocate; caches cold at the call; packing not counted):
#   VARIANT=zvfbfwma bench/dram-variant.sh CHECKOUT M N K [L2_KB ...]
#   VARIANT=base     bench/dram-variant.sh CHECKOUT M N K [L2_KB ...]
# Why: the cache model is a QEMU 7.2 plugin, and QEMU 7.2 has no Zvfbfwma (vfwmaccbf16 is
# SIGILL); sid's QEMU 11 has it but loads no plugins here. So the Zvfbfwma variant is measured
# through its TRACE TWIN, bench/tiles_zvfbfwma_twin.c.in: the same tiles with the same memory
# accesses element for element (one vle16 of vl BF16 weights per k at the same addresses, the
# activation read as 2 bytes at the same address, the same partial-sum and output loads and
# stores), the arithmetic done with base RVV (vzext.vf2 + vsll 16; lhu + slli 16 + fmv.w.x;
# vfmacc.vf), which gives vfwmaccbf16.vf's bits. The variant's packing, activation arranging
# and tile ends (templates/zvfbfwma/support.c.in, tile_ends.c.in) are base RVV already and are
# used as they are. Nothing users get changes: the twin lives in bench/ only.
#
# Steps: (1) CHECKOUT's templates/ copied to the build folder with the twin in place of
# zvfbfwma/tiles.c.in; CHECKOUT's own Makefile builds a library for this shape (and the
# narrower slices dram.sh would use) with `gemm-rvv-gen --templates` on that copy and the
# Zvfbfwma object built for plain rv64gcv (the copy's variants.txt says so, and make reads it
# as VARIANTS: so it cannot hold a BF16 instruction; objdump checks it too), in
# CHECKOUT/build/dram-twin/M-N-K. (2) bench/
# dram_variant.c is linked against it: it packs W in the variant's layout (gr_pack;
# GR_LAYOUT_ROWS for zvfbfwma), and runs the plan's loops (gr_drive_init with the variant,
# gr_drive_columns over all columns on scratch of gr_drive_bytes()) between the cache markers,
# as bench/dram_call.c brackets its call; X, W, Y, the packed weights and the scratch are
# allocated as in dram_call's API call (DRAM_ALLOC=glibc, the default) or each in a mapping of
# its own (DRAM_ALLOC=spaced: MAP=1 then names every buffer apart; the buffers sit at other
# addresses modulo the L2's way, which moves the traffic a little: compare like with like).
# (3) Bit-exactness, before measuring: on the columns measured, the variant's Y equals the
# scalar fallback's bit for bit (dram_call's data, and data with +-0, subnormals, overflow and
# +-Inf), under QEMU 7.2; and, where sid's QEMU is in the toolchain (REAL=0 skips it), the
# real Zvfbfwma library (CHECKOUT's own templates, in M-N-K/real) runs the same program there
# with the extension and must give the twin's outputs (their digest). (4) The
# measurement, by bench/dram-measure.sh (columns and extrapolation as bench/dram.sh).
# Output lines are those of bench/dram.sh; with VARIANT=base the same program runs the base
# tiles (a check that this path measures what dram.sh measures through the API).
# Env: VARIANT (default zvfbfwma), TOOLCHAIN_DIR (default CHECKOUT/.toolchain), CROSS, VLEN
# (default 256), COLS, MAP=1, JOBS: as in bench/dram.sh. REAL=0: skip the sid QEMU check;
# CHECK=0: skip step (3). When the traffic is extrapolated from two slices, (3) runs on the
# narrower one (its plan has the shape's tile and blocking; the fallback takes minutes).
# DRAM_ALLOC=glibc|spaced (above).
# Example: TOOLCHAIN_DIR=/work/main/.toolchain VARIANT=zvfbfwma bench/dram-variant.sh . 16 4096 4096
set -euo pipefail
usage() { echo "usage: VARIANT=base|zvfbfwma $0 CHECKOUT M N K [L2_KB ...]" >&2; exit 2; }
[ $# -ge 4 ] || usage
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$(cd "$1" && pwd)
[ -f "$tree/Makefile" ] || tree=$(cd "$tree/.." && pwd)
[ -f "$tree/Makefile" ] && [ -f "$tree/include/gemm_rvv.h" ] && [ -f "$tree/templates/zvfbfwma/tiles.c.in" ] ||
  { echo "dram-variant.sh: $1 is not a gemm_rvv checkout with Zvfbfwma variants" >&2; exit 2; }
m=$2 n=$3 k=$4
shift 4
for v in "$m" "$n" "$k"; do [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "dram-variant.sh: M, N, K must be positive integers" >&2; exit 2; }; done
variant=${VARIANT:-zvfbfwma}
case $variant in base|zvfbfwma) ;; *) echo "dram-variant.sh: VARIANT must be base or zvfbfwma" >&2; exit 2 ;; esac
l2s=${*:-512 128}
vlen=${VLEN:-256}
toolchain=${TOOLCHAIN_DIR:-$tree/.toolchain}
work=$tree/build/dram-twin/$m-$n-$k
mkdir -p "$work"

# The shapes: this one, and the narrower slices a measurement may extrapolate from (dram.sh's).
widths=$n
if [ "${COLS:-}" != full ] && [ $(( m * n * k )) -gt $(( 1 << 28 )) ]; then
  for c in 256 512 1024 2048 4096; do if [ "$c" -lt "$n" ]; then widths="$widths $c"; fi; done
fi
[ -z "${COLS:-}" ] || [ "$COLS" = full ] || widths="$n $COLS"
shapes=$work/shapes.yaml
{
  echo "# Written by bench/dram-variant.sh: the shapes of one DRAM measurement."
  echo "model: dram"
  echo "gate: {min_n: 1, min_k: 1, max_m: 128, min_mnk: 1}"
  echo "layers:"
  for w in $widths; do echo "  - {name: n$w, N: $w, K: $k, M: [$m]}"; done
} > "$shapes.new"
cmp -s "$shapes.new" "$shapes" && rm "$shapes.new" || mv "$shapes.new" "$shapes"

# (1) The templates with the twin swapped in; the generator runs again when they change.
tdir=$work/templates-twin
rm -rf "$tdir.new"; mkdir -p "$tdir.new"
cp -r "$tree"/templates/. "$tdir.new/"
cp "$here/bench/tiles_zvfbfwma_twin.c.in" "$tdir.new/zvfbfwma/tiles.c.in"
awk '$1 == "zvfbfwma" { $3 = "rv64gcv" } { print }' "$tree/templates/variants.txt" > "$tdir.new/variants.txt"
if diff -rq "$tdir.new" "$tdir" > /dev/null 2>&1; then rm -rf "$tdir.new"
else rm -rf "$tdir"; mv "$tdir.new" "$tdir"; rm -f "$work/gen/manifest.json"; fi
build_lib() { # BUILD_DIR MAKE_ARGS...
  local dir=$1; shift
  make -C "$tree" --no-print-directory BUILD="$dir" SHAPES="$shapes" TOOLCHAIN_DIR="$toolchain" \
    JOBS="${JOBS:-2}" ${CROSS:+CROSS=$CROSS} "$@" lib > "$dir.make.log" 2>&1 ||
    { tail -20 "$dir.make.log" >&2; echo "dram-variant.sh: building the library failed (log: $dir.make.log)" >&2; exit 1; }
}
build_lib "$work" GEN_FLAGS="--templates $tdir" VARIANTS="$tdir/variants.txt"
if [ -n "${CROSS:-}" ]; then cc=${CROSS}gcc objdump=${CROSS}objdump
else cc=$toolchain/gcc15/usr/bin/riscv64-linux-gnu-gcc-15 objdump=$toolchain/gcc15/usr/bin/riscv64-linux-gnu-objdump; fi
twin_obj=$work/obj/gen/bf16_tiles_zvfbfwma.o
grep -q 'twin_bf16_' "$work/gen/bf16_tiles_zvfbfwma.c" ||
  { echo "dram-variant.sh: $work/gen/bf16_tiles_zvfbfwma.c is not the twin" >&2; exit 1; }
if "$objdump" -d "$twin_obj" | grep -Eq $'\t(vfwmaccbf16|vfwcvtbf16|vfncvtbf16|flh|fsh|fcvt\\.s\\.bf16|fcvt\\.bf16\\.s)'; then
  echo "dram-variant.sh: $twin_obj holds a BF16 instruction: QEMU 7.2 cannot run it" >&2; exit 1
fi
"$work/host/gemm-rvv-gen" --explain -o "$work/explain-gen" "$shapes" > "$work/explain.txt" 2>&1 || true
cols=${COLS:-$("$here/bench/dram-measure.sh" --columns "$m" "$n" "$k" "$work/explain.txt")}

# (2) The program.
link() { # LIBDIR OUT
  "$cc" -std=c11 -O2 -march=rv64gc -mabi=lp64d -Wall -Wextra -D_ISOC11_SOURCE \
    -D_POSIX_C_SOURCE=200809L -static -I"$tree/include" -I"$tree/runtime" -I"$1/gen" \
    -I"$here/bench" "$here/bench/dram_variant.c" "$here/bench/cache_marker.c" \
    "$1/libgemm_rvv.a" -lpthread -lm -o "$2"
}
prog=$work/dram_variant
link "$work" "$prog"

# The plugin: this tree's (as bench/dram.sh builds it).
header=""
for d in "${QEMU_PLUGIN_INCLUDE:-}" "$toolchain/qemu-plugin/include" "$here/.toolchain/qemu-plugin/include"; do
  [ -n "$d" ] && [ -f "$d/qemu-plugin.h" ] && { header=$d; break; }
done
if [ -z "$header" ]; then
  "$here/tools/setup-deps.sh" bench "$toolchain"
  header=$toolchain/qemu-plugin/include
fi
plugin=$work/libcache_model.so
sources=("$here"/bench/cache_model.c "$here"/bench/cache_sim.c "$here"/bench/traffic_map.c)
stale=0
for f in "${sources[@]}" "$here"/bench/cache_sim.h "$here"/bench/traffic_map.h; do
  [ -f "$plugin" ] && [ "$plugin" -nt "$f" ] || stale=1
done
if [ $stale = 1 ]; then
  "${HOST_CC:-cc}" -std=c11 -O2 -Wall -Wextra -D_DEFAULT_SOURCE -I"$header" -I"$here/bench" \
    -fPIC -shared "${sources[@]}" -o "$plugin"
fi

export DRAM_ALLOC=${DRAM_ALLOC:-glibc}
label=$variant
[ "$variant" = base ] || label="$variant twin"
echo "dram: M=$m N=$n K=$k packed, variant $label, buffers $DRAM_ALLOC," \
     "VLEN $vlen, one thread; library of $tree" \
     "($(git -C "$tree" log -1 --format='%h %s' 2>/dev/null | cut -c1-60))"

# (3) Bit for bit against the fallback at every column count measured, then against the real
# Zvfbfwma tiles under sid's QEMU.
checked=$n
[ "$cols" = full ] || checked=${cols%% *} # the narrower slice: the same tile and blocking
[ "${CHECK:-1}" != 0 ] || checked=""
qemu7=(qemu-riscv64 -cpu "rv64,v=true,vext_spec=v1.0,vlen=$vlen")
sid_qemu=$toolchain/sid-qemu/usr/bin/qemu-riscv64
real=${REAL:-1}
[ "$variant" = zvfbfwma ] && [ -x "$sid_qemu" ] || real=0
if [ "$real" = 1 ] && [ -n "$checked" ]; then
  build_lib "$work/real"
  link "$work/real" "$work/dram_variant_real"
fi
for c in $checked; do
  for mode in check check-special; do
    out=$("${qemu7[@]}" "$prog" "$variant" "$m" "$c" "$k" $mode | grep '^check=') ||
      { echo "dram-variant.sh: N=$c $mode: $out" >&2; exit 1; }
    line="  $mode N=$c: $label (QEMU 7.2) vs fallback: ${out%% *}"
    [ "$real" = 1 ] || line="$line (${out#* })"
    if [ "$real" = 1 ]; then
      rout=$("$sid_qemu" -cpu "rv64,v=true,vlen=$vlen,zvfbfmin=true,zvfbfwma=true" \
               "$work/dram_variant_real" zvfbfwma "$m" "$c" "$k" $mode | grep '^check=') ||
        { echo "dram-variant.sh: N=$c $mode, real Zvfbfwma under sid QEMU: $rout" >&2; exit 1; }
      [ "${rout#* }" = "${out#* }" ] ||
        { echo "dram-variant.sh: N=$c $mode: the twin's ${out#* } differs from the real tiles' ${rout#* }" >&2; exit 1; }
      line="$line; real vfwmaccbf16 (sid QEMU 11) vs fallback: ${rout%% *}; same outputs (${out#* })"
    fi
    echo "$line"
  done
done

# (4) The measurement.
map_dir=""
if [ "${MAP:-0}" = 1 ]; then map_dir=$work/map-$variant-$DRAM_ALLOC; rm -rf "$map_dir"; mkdir -p "$map_dir"; fi
# shellcheck disable=SC2086
DRAM_MAP_DIR=$map_dir L2_KB=$l2s VLEN=$vlen "$here/bench/dram-measure.sh" "$plugin" "$prog" "$variant" "$m" "$n" "$k" \
  $cols |
"$here/bench/dram-report.sh" "$map_dir" "$n" "$cols" "$l2s"

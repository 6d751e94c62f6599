#!/usr/bin/env bash
# One-shot DRAM traffic of one Linear call of any checkout's library, under the cache model
# (bench/cache_model.c: L1D 32 KiB 8-way, L2 16-way, 64-byte lines, LRU, write-back,
# write-allocate; single thread; caches cold at the call; packing at create not counted):
#   bench/dram.sh CHECKOUT M N K packed|plain|fallback [L2_KB ...]
# CHECKOUT is a source tree of gemm_rvv (or its build folder). Its own Makefile builds a
# library for just this shape (`make lib` with BUILD=CHECKOUT/build/dram/M-N-K and a shapes file
# written here, gate lowered), bench/dram_call.c (public API only) is linked against it, and
# the call runs under qemu-riscv64 with this tree's plugin. L2 sizes default to 512 and 128.
# Env: TOOLCHAIN_DIR (default CHECKOUT/.toolchain), CROSS (your own cross compiler, as in the
# Makefile), VLEN (default 256), COLS ("C1 C2": measure calls on C1 and C2 columns and
# extrapolate to N, see dram-measure.sh; "full": the whole call; default: full up to 2^28
# multiply-accumulates, else the narrowest pair of 256 .. 2048 columns whose plans block as
# (N, K)'s, per the generator's --explain (dram-measure.sh --columns); else full),
# MAP=1 (also the traffic of the widest run by address range, each range named by the
# caller's buffers it holds: x, w, y; a range with none is the library's own, e.g. the packed
# weights or the widened activations).
# Example: TOOLCHAIN_DIR=/work/main/.toolchain bench/dram.sh /work/main 16 4096 4096 packed
# The report lines come from bench/dram-report.sh, shared with bench/dram-variant.sh.
set -euo pipefail
usage() { echo "usage: $0 CHECKOUT M N K packed|plain|fallback [L2_KB ...]" >&2; exit 2; }
[ $# -ge 5 ] || usage
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$(cd "$1" && pwd)
[ -f "$tree/Makefile" ] || tree=$(cd "$tree/.." && pwd)
[ -f "$tree/Makefile" ] && [ -f "$tree/include/gemm_rvv.h" ] ||
  { echo "dram.sh: $1 is neither a gemm_rvv checkout nor its build folder" >&2; exit 2; }
m=$2 n=$3 k=$4 path=$5
shift 5
for v in "$m" "$n" "$k"; do [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "dram.sh: M, N, K must be positive integers" >&2; exit 2; }; done
case $path in packed|plain|fallback) ;; *) usage ;; esac
l2s=${*:-512 128}
toolchain=${TOOLCHAIN_DIR:-$tree/.toolchain}
work=$tree/build/dram/$m-$n-$k
mkdir -p "$work"

# The library: this shape, and the narrower ones a slice may use, alone, through the
# checkout's own build rules; the generator's --explain says which slices plan as the shape.
widths=$n
if [ "${COLS:-}" != full ] && [ $(( m * n * k )) -gt $(( 1 << 28 )) ]; then
  for c in 256 512 1024 2048 4096; do if [ "$c" -lt "$n" ]; then widths="$widths $c"; fi; done
fi
[ -z "${COLS:-}" ] || [ "$COLS" = full ] || widths="$n $COLS"
shapes=$work/shapes.yaml
{
  echo "# Written by bench/dram.sh: the shapes of one DRAM measurement."
  echo "model: dram"
  echo "gate: {min_n: 1, min_k: 1, max_m: 128, min_mnk: 1}"
  echo "layers:"
  for w in $widths; do echo "  - {name: n$w, N: $w, K: $k, M: [$m]}"; done
} > "$shapes.new"
cmp -s "$shapes.new" "$shapes" && rm "$shapes.new" || mv "$shapes.new" "$shapes"
make -C "$tree" --no-print-directory BUILD="$work" SHAPES="$shapes" TOOLCHAIN_DIR="$toolchain" \
  JOBS="${JOBS:-2}" ${CROSS:+CROSS=$CROSS} lib > "$work/make.log" 2>&1 ||
  { tail -20 "$work/make.log" >&2; echo "dram.sh: building the library failed (log: $work/make.log)" >&2; exit 1; }
"$work/host/gemm-rvv-gen" --explain -o "$work/explain-gen" "$shapes" > "$work/explain.txt" 2>&1 || true
cols=${COLS:-$("$here/bench/dram-measure.sh" --columns "$m" "$n" "$k" "$work/explain.txt" "$path")}

if [ -n "${CROSS:-}" ]; then cc=${CROSS}gcc; else cc=$toolchain/gcc15/usr/bin/riscv64-linux-gnu-gcc-15; fi
"$cc" -std=c11 -O2 -march=rv64gcv -mabi=lp64d -Wall -Wextra -D_ISOC11_SOURCE -static \
  -I"$tree/include" -I"$here/bench" "$here/bench/dram_call.c" "$here/bench/cache_marker.c" \
  "$work/libgemm_rvv.a" -lpthread -lm -o "$work/dram_call"

# The plugin: this tree's, with QEMU's plugin header (fetched once if missing).
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

echo "dram: M=$m N=$n K=$k $path, VLEN ${VLEN:-256}, one thread; library of $tree" \
     "($(git -C "$tree" log -1 --format='%h %s' 2>/dev/null | cut -c1-60))"
map_dir=""
if [ "${MAP:-0}" = 1 ]; then map_dir=$work/map; rm -rf "$map_dir"; mkdir -p "$map_dir"; fi
# shellcheck disable=SC2086
DRAM_MAP_DIR=$map_dir L2_KB=$l2s "$here/bench/dram-measure.sh" "$plugin" "$work/dram_call" "$path" "$m" "$n" "$k" \
  $cols |
"$here/bench/dram-report.sh" "$map_dir" "$n" "$cols" "$l2s"

#!/usr/bin/env bash
# measure/report/project.sh on measure/report/fixture/, whose figures are worked out by hand
# below: exits non-zero on the first figure that differs (relative 1e-5) or mark that is not
# the expected one. Outputs under WORK_DIR (make test-project: build/project-check).
#   measure/report/project-check.sh WORK_DIR
# The fixture's clock and bandwidth make the arithmetic plain: K1_GHZ = 1 with VLEN/DLEN = 2
# and two vector units, so one unit of vector work is 1 ns; DRAM_GBPS = 1, one byte 1 ns.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 WORK_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd) work=$1
fix=$here/fixture
mkdir -p "$work"
run() { # NAME DRAM_CSV|cycles.csv|count-attention.csv|dram-attention.csv... : the projection
  # of the fixture with those CSVs (attention at depths 0 and 999, KV_CACHE and PROMPT as in
  # the caller's environment, else f16 and 128)
  local name=$1 args=() f
  shift
  for f in "$@"; do
    case $f in
      cycles*) args+=(--cycles "$fix/$f") ;;
      count-attention*) args+=(--attention-count "$fix/$f") ;;
      dram-attention*) args+=(--attention-dram "$fix/$f") ;;
      torch-count*) args+=(--torch-count "$fix/$f") ;;
      llama-count*) args+=(--llama-count "$fix/$f") ;;
      *) args+=(--dram "$fix/$f") ;;
    esac
  done
  K1_GHZ=1 DRAM_GBPS=1 VLEN=256 DLEN=128 VEC_UNITS=2 PROMPT=${PROMPT:-128} THREADS="1 4 8" \
    CORE_GBPS='' DEPTHS="0 999" SCALAR_IPC=1 KV_CACHE=${KV_CACHE:-f16} \
    "$here/project.sh" --count "$fix/count.csv" "${args[@]}" --csv "$work/$name.csv" \
    "$fix/shapes.yaml:2" > "$work/$name.md"
}
fail=0
# expect NAME KIND LAYER M THREADS FIELD VALUE [MARK_FIELD MARK]: one figure of NAME.csv
expect() {
  local name=$1 kind=$2 layer=$3 m=$4 t=$5 field=$6 want=$7 mfield=${8:-} mark=${9:-}
  awk -F, -v kind="$kind" -v layer="$layer" -v m="$m" -v t="$t" -v field="$field" -v want="$want" \
      -v mfield="$mfield" -v mark="$mark" -v name="$name" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == kind && $3 == layer && $6 == m && $7 == t { found = 1
      got = $col[field]
      if (want ~ /^[0-9.]+$/ ? (got - want > 1e-5 * want || want - got > 1e-5 * want) : got != want) {
        printf "project-check: %s: %s %s M=%s T=%s %s = %s, expected %s\n", name, kind, layer, m, t, field, got, want; bad = 1 }
      if (mfield != "" && $col[mfield] != mark) {
        printf "project-check: %s: %s %s M=%s T=%s %s = \"%s\", expected \"%s\"\n", name, kind, layer, m, t, mfield, $col[mfield], mark; bad = 1 } }
    END { if (!found) { printf "project-check: %s: no %s row for %s M=%s T=%s\n", name, kind, layer, m, t; bad = 1 }
          exit bad }' "$work/$name.csv" || fail=1
}

# The new format (threads rows). Minimum bytes: up (1000 x 500) 1,005,000 at M = 1 and
# 1,640,000 at M = 128; down (500 x 1000) 1,004,000 and 1,512,000; lm_head 2,009,000.
run new dram.csv
# up, M = 1: compute 500,000 MACs x 0.5 = 0.25 ms; DRAM the rows of 1 and 4 threads; no
# 8-thread row of up, so the nearest 8-thread shape's ratio (lm_head: 2.3 M / 2.009 M) x its minimum
expect new linear up 1 1 ms 1.1 dram_mark ""
expect new linear up 1 1 bound memory
expect new linear up 1 1 compute_ms 0.25
expect new linear up 1 4 ms 1.3 dram_mark ""
expect new linear up 1 8 ms 1.150572 dram_mark "‡"
# down, M = 1: not counted, up's 0.5 (nearer than lm_head's); not measured: up's ratio x 1,004,000
expect new linear down 1 1 vwork_per_mac 0.5 vwork_mark "*"
expect new linear down 1 1 ms 1.098905 dram_mark "‡"
expect new linear down 1 4 ms 1.298706 dram_mark "‡"
expect new linear down 1 8 ms 1.149428 dram_mark "‡"
expect new linear lm_head 1 1 ms 2.1
expect new linear lm_head 1 4 ms 2.2
expect new linear lm_head 1 8 ms 2.3 dram_mark ""
# up, M = 128: compute 64 M MACs x 0.2 = 12.8 ms / T; DRAM 3.0, 3.5, 4.0 ms
expect new linear up 128 1 ms 12.8 bound compute
expect new linear up 128 4 ms 3.5 bound memory
expect new linear up 128 8 ms 4.0 bound memory
# down, M = 128: up's vector work and ratios x 1,512,000
expect new linear down 128 1 dram_ms 2.765854 dram_mark "‡"
expect new linear down 128 1 ms 12.8 bound compute
expect new linear down 128 4 ms 3.226829 bound memory
expect new linear down 128 8 ms 3.687805 bound memory
# the model: 2 blocks of up + down, lm_head once; weights 6,000,000 bytes: 166.667 tokens/s
expect new model decode 1 1 ms 6.497811
expect new model decode 1 4 ms 7.397412
expect new model decode 1 8 ms 6.9
expect new model bound 1 8 tok_s 166.6667
expect new model prefill 128 1 ms 53.3
expect new model prefill 128 4 ms 15.653659
expect new model prefill 128 8 ms 17.67561

# The old format (no threads column): 4 and 8 threads from the one-thread rows at 128 KiB.
run old dram-old.csv
expect old linear up 1 1 ms 1.05 dram_mark ""
expect old linear up 1 4 ms 1.2 dram_mark "†"
expect old linear up 1 8 ms 1.2 dram_mark "†"
expect old linear lm_head 1 1 ms 2.098955 dram_mark "‡"
expect old linear up 128 1 dram_ms 1.64 dram_mark "§"
# both, the new one last: its row replaces the old one's
run both dram-old.csv dram.csv
expect both linear up 1 1 ms 1.1 dram_mark ""

# The modelled cycles (cycles.csv, base rows only): M = 1 runs the 1x8 tile, 160 cycles a
# trip of 4 k x 64 columns: 0.625 cycles per MAC; M = 128 runs 9 tiles of 13 rows (104 cycles
# a trip of 4 k) and one of 11 (88): (9 x 26 + 22) / (128 x 16) = 0.125.
run cyc dram.csv cycles.csv
expect cyc linear up 1 1 cycles_per_mac 0.625
expect cyc linear up 1 1 compute_ms 0.3125
expect cyc linear up 1 1 ms 1.1 bound memory
expect cyc linear up 128 1 cycles_per_mac 0.125
expect cyc linear up 128 1 ms 8 bound compute
expect cyc linear down 128 1 ms 8 bound compute
# A prompt of 16 rows on the plan of 13-row tiles: one of 13 and one of the 3 left, which the
# driver runs at LMUL 4 (64 cycles a trip of 4 k x 32 columns): (26 / 16 + 16 / 32) / 16.
PROMPT=16 run cyc16 dram.csv cycles.csv
expect cyc16 linear up 16 1 cycles_per_mac 0.1328125
expect cyc linear up 128 4 ms 3.5 bound memory
# prefill on one thread: 2 blocks x (8 + 8) + lm_head at M = 1 (2.1, memory-bound)
expect cyc model prefill 128 1 ms 34.1
grep -q 'Compute from the X60 model instead' "$work/cyc.md" ||
  { echo "project-check: cyc.md: the modelled compute is not stated" >&2; fail=1; }
! grep -q 'Compute from the X60 model instead' "$work/new.md" ||
  { echo "project-check: new.md: states a modelled compute it has no cycles for" >&2; fail=1; }

# Attention (count-attention.csv, dram-attention.csv; 4 query heads, 2 KV heads of 64, from
# the shapes file's comment). A decoded token at depth 999: n_kv 1000, 2 x 1000 x 64 x 4 =
# 512,000 MACs at 2 cycles each (D 64's row at n_kv 500, scalar 2.0 a cycle over vector work
# 0.5; not D 128's of n_kv 1000, 50: the head dim is matched first): 1.024 ms on 1 thread, 0.256 on 4 and 8 (4 heads); KV bytes 4 x 1000 x 2 x 64
# = 512,000 x 1.5 (1 thread, 512 KiB), 2.0 (the 4-thread row), 3.0 († the one-thread 128 KiB
# row for 8): 0.768, 1.024, 1.536 ms. Two blocks: 2.048, 2.048, 3.072 ms, added to the decode
# of the Linears above (6.497811, 7.397412, 6.9 ms).
run attn dram.csv count-attention.csv dram-attention.csv
expect attn attention decode@999 1 1 ms 2.048 bound compute
expect attn attention decode@999 1 1 dram_ratio 1.5 dram_mark ""
expect attn attention decode@999 1 1 tok_s 117.016396
expect attn attention decode@999 1 4 ms 2.048 bound memory
expect attn attention decode@999 1 4 tok_s 105.871507 dram_mark ""
expect attn attention decode@999 1 8 ms 3.072 dram_mark "†"
expect attn attention decode@999 1 8 tok_s 100.280786
# depth 0: n_kv 1, the DRAM row of n_kv 250 (nearer in log than 1000): ratio 2, 1,024 bytes
expect attn attention decode@0 1 1 dram_ratio 2
expect attn attention decode@0 1 1 ms 0.002048
# A prompt of 128 at depth 999: 128 x 999 + 128 x 129 / 2 = 136,128 live positions, 2 x 64 x
# 4 MACs each, at the prompt row's 1.0 scalar instructions per MAC over its live fraction
# (4,227,072 / 8,388,608): 1.984496 cycles; 138.3145 ms a block on 1 thread, / 4 and / 8;
# its KV bytes once (§). Two blocks added to the Linears' prefill (53.3, 15.653659, 17.67561).
expect attn attention prefill@999 128 1 ms 276.62898 bound compute
expect attn attention prefill@999 128 1 tok_s 387.962282 dram_mark "§"
expect attn attention prefill@999 128 4 tok_s 1509.239896
expect attn attention prefill@999 128 8 tok_s 2449.562339
grep -q 'Fixture at context depths' "$work/attn.md" ||
  { echo "project-check: attn.md: no table at context depths" >&2; fail=1; }
grep -q 'no --attention-count' "$work/new.md" ||
  { echo "project-check: new.md: does not say that attention is not projected" >&2; fail=1; }
# A BF16 cache takes the bf16 rows: 9 cycles a MAC (4.608 ms), ratio 10 (5.12 ms) a block.
KV_CACHE=bf16 run attn-bf16 dram.csv count-attention.csv dram-attention.csv
expect attn-bf16 attention decode@999 1 1 ms 10.24 bound memory

# The engines' own work (torch-count.csv: the Qwen2-shaped model's patched row, 2 blocks;
# llama-count.csv: the plugin's pp and tg rows): PyTorch 2,000,000 instructions a decoded
# token outside the library = 1,000,000 a block, 2 ms for the fixture's 2 blocks, added to the
# Linears' 6.497811 ms (1 thread) and 6.9 (8); a prompt token 100,000 a block: 25.6 ms for 128
# tokens beside the Linears' 53.3. llama.cpp: 200,000 a block (0.4 ms) and the attention at
# depth 0 (0.002048 ms).
run eng dram.csv count-attention.csv dram-attention.csv torch-count.csv llama-count.csv
expect eng engine torch 1 1 ms 2
expect eng engine torch 1 1 tok_s 117.677364
expect eng engine torch 1 8 tok_s 112.359551
expect eng engine torch 128 1 ms 25.6
expect eng engine torch 128 1 tok_s 1622.306717
expect eng engine llama 1 1 tok_s 144.930498
grep -q 'each engine.s own work besides the Linears' "$work/eng.md" ||
  { echo "project-check: eng.md: no table of the engines' own work" >&2; fail=1; }
! grep -q 'own work besides' "$work/attn.md" ||
  { echo "project-check: attn.md: an engines' table without their counts" >&2; fail=1; }

# the assumptions once, beside the tables
for name in new old both cyc attn; do
  [ "$(grep -c '^Assumptions' "$work/$name.md")" = 1 ] ||
    { echo "project-check: $name.md: the assumptions are not stated once" >&2; fail=1; }
done
grep -q 'nothing of this M measured' "$work/old.md" ||
  { echo "project-check: old.md: the § mark is not explained" >&2; fail=1; }
[ $fail = 0 ] && echo "project-check: the projection of the fixture matches the figures worked out by hand"
exit $fail

#!/usr/bin/env bash
# Projected K1 times from the counted vector work and the modelled DRAM traffic, as markdown:
#   measure/report/project.sh COUNT_CSV DRAM_CSV MODEL_MANIFEST
# COUNT_CSV is make bench-count's (vwork_per_mac at VLEN 256), DRAM_CSV make bench-dram's (its
# rows with aligned buffers), MODEL_MANIFEST the generator's manifest.json for a model's shapes file (its entries
# give the layers: name, N, K). Every assumption is an environment variable, printed with the
# tables: K1_GHZ (1.6), DLEN (128, bits of the vector datapath), VLEN (256), DRAM_GBPS (6),
# MODEL_BLOCKS (32: transformer blocks, each running every layer but lm_head once), PROMPT
# (128: the prefill length, one M = PROMPT call per layer; lm_head once at M = 1), K1_CORES (8).
set -euo pipefail
results=$1 dram=$2 manifest=$3
ghz=${K1_GHZ:-1.6} dlen=${DLEN:-128} vlen=${VLEN:-256} gbps=${DRAM_GBPS:-6}
blocks=${MODEL_BLOCKS:-32} prompt=${PROMPT:-128} cores=${K1_CORES:-8}
layers=$(jq -r '[.entries[] | {name, N, K}] | unique[] | "\(.name) \(.N) \(.K)"' "$manifest")
[ -n "$layers" ] || { echo "project.sh: no layers in $manifest" >&2; exit 1; }
model=$(jq -r '.model // "the model"' "$manifest")

awk -F, -v cores="$cores" -v ghz="$ghz" -v dlen="$dlen" -v vlen="$vlen" -v gbps="$gbps" -v blocks="$blocks" \
    -v prompt="$prompt" -v layers="$layers" -v model="$model" '
  FNR == 1 { file++; next }
  file == 1 && $4 == vlen { vwork[$1","$2","$3","$5] = $8; next }
  file == 2 && $5 == "aligned" { key = $1","$2","$3","$4
              if (!(key in seen)) { seen[key] = 1; rows[++nrows] = key }
              if ($6 == 512) b512[key] = $7; else if ($6 == 128) b128[key] = $7; next }
  # Vector work per MAC of a call: measured, else that of the same M and path at 4096 x 4096
  # (a kernel of one M bucket runs the same tile whatever N and K are).
  function vw(m, n, k, path,   p) {
    p = "kernel-" path
    if ((m","n","k","p) in vwork) return vwork[m","n","k","p]
    return vwork[m",4096,4096,"p]
  }
  function compute_s(m, n, k, path) { return vw(m, n, k, path) * m * n * k * (vlen / dlen) / (ghz * 1e9) }
  function dram_s(bytes) { return bytes / (gbps * 1e9) }
  function t(m, n, k, path, bytes,   c, d) { c = compute_s(m, n, k, path); d = dram_s(bytes); return c > d ? c : d }
  # All cores of the K1: the compute split over them, the traffic that at 128 KiB, shared.
  function t8(m, n, k, path, bytes,   c, d) { c = compute_s(m, n, k, path) / cores; d = dram_s(bytes); return c > d ? c : d }
  function bound(m, n, k, path, bytes) { return compute_s(m, n, k, path) >= dram_s(bytes) ? "compute" : "DRAM" }
  END {
    print "## Projected K1 time per call (one core)"
    print ""
    printf "Compute: vector work x VLEN/DLEN cycles (%d/%d: the X60 runs a vector instruction\n", vlen, dlen
    print "of LMUL L on a 128-bit datapath in L x VLEN/128 cycles, one vector instruction per cycle;"
    print "scalar instructions issue beside it and cost nothing here) at " ghz " GHz. DRAM: the modelled"
    print "bytes at " gbps " GB/s. The projection is the larger of the two; *bound* says which."
    print "L2 512 KiB is one core alone; 128 KiB one core'\''s share of a cluster of four running."
    print ""
    print "| M | N | K | path | compute, ms | DRAM 512 KiB, ms | bound | DRAM 128 KiB, ms | bound |"
    print "|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= nrows; i++) {
      split(rows[i], f, ","); if (f[4] == "fallback") continue
      m = f[1]; n = f[2]; k = f[3]; p = f[4]; r = rows[i]
      printf "| %d | %d | %d | %s | %.2f | %.2f | %s | %.2f | %s |\n", m, n, k, p,
             1e3 * compute_s(m, n, k, p), 1e3 * dram_s(b512[r]), bound(m, n, k, p, b512[r]),
             1e3 * dram_s(b128[r]), bound(m, n, k, p, b128[r])
    }
    # The whole model, packed weights.
    nl = split(layers, L, "\n"); dec = 0; pre = 0; missing = ""
    for (i = 1; i <= nl; i++) {
      split(L[i], g, " "); name = g[1]; n = g[2]; k = g[3]
      one = "1,"n","k",packed"; many = prompt","n","k",packed"
      if (!(one in b512)) { missing = missing " " name "(M=1)"; continue }
      times = name == "lm_head" ? 1 : blocks
      dec += times * t(1, n, k, "packed", b512[one]); dec8 += times * t8(1, n, k, "packed", b128[one])
      if (name == "lm_head") { pre += t(1, n, k, "packed", b512[one]); pre8 += t8(1, n, k, "packed", b128[one]); continue }
      if (!(many in b512)) { missing = missing " " name "(M=" prompt ")"; continue }
      pre += blocks * t(prompt, n, k, "packed", b512[many]); pre8 += blocks * t8(prompt, n, k, "packed", b128[many])
    }
    print ""
    print "## Projected " model " on a K1 (Linear layers only)"
    print ""
    if (missing != "") { print "Not measured, so not projected:" missing "."; exit }
    print "| | one core, L2 512 KiB | " cores " cores, L2 128 KiB each |"
    print "|---|---|---|"
    printf "| decode (M = 1), tok/s | %.2f | %.2f |\n", 1 / dec, 1 / dec8
    printf "| prefill of %d tokens (M = %d), tok/s | %.1f | %.1f |\n", prompt, prompt, prompt / pre, prompt / pre8
    print ""
    print "Assumptions: " blocks " transformer blocks each run every layer of the shapes file once, but"
    print "lm_head, which runs once per token (in prefill: once, for the last token). Packed weights,"
    print "the per-call projections above summed. One core: one thread, L2 512 KiB. " cores " cores: the"
    print "compute divided by " cores ", the DRAM bytes those of one thread at L2 128 KiB (each core"
    print "has a quarter of its cluster'\''s L2; the columns split evenly), all sharing " gbps " GB/s."
    print "Attention scores, norms, activation functions and the KV cache are not counted, nor"
    print "threading overheads: an upper bound on tok/s."
  }' "$results" "$dram"

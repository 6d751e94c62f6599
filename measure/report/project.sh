#!/usr/bin/env bash
# What a token costs on a K1: every Linear of each model projected from the counted vector
# work and the cache model's DRAM bytes, at M = 1 (decode) and M = PROMPT (prefill), on 1, 4 and
# 8 threads, then each model's decode and prefill tokens/s against its bandwidth bound. Markdown
# on stdout:
#   measure/report/project.sh [--count CSV]... [--dram CSV]... [--cycles CSV] [--csv OUT] SHAPES_YAML:BLOCKS...
# --count: make bench-count's CSVs (count.csv, count-selected.csv: the kernel-packed rows at
#   VLEN). --dram: make bench-dram's CSVs (dram.csv, dram-selected.csv or copies of it: the
#   packed rows on aligned buffers), in either format, told apart by the header line:
#   M,N,K,path,placement,l2_kb,dram_bytes,min_bytes,ratio,measured (one thread), or the same
#   with a threads column after placement (threads 1 at L2 512 and 128 KiB; threads 4 and 8 at
#   512 KiB, the bytes of the whole call). A row given again in a later file replaces the earlier.
# --cycles: make bench-cycles' cycles.csv (the k-loop of every tile under llvm-mca's X60 model):
#   then a call's compute is the modelled cycles per MAC of the tiles its plan runs (the base
#   variant's: the K1 has no Zvfbfwma) instead of the vector work at the nominal rate.
# SHAPES_YAML:BLOCKS: a shapes file (its layers' name, N and K; `lm_head` runs once per token,
#   every other layer once per transformer block) and the model's number of blocks.
# --csv OUT: also every figure as CSV (what measure/report/project-check.sh compares).
# Assumptions, each an environment variable printed with the tables: K1_GHZ (1.6), VLEN (256),
# DLEN (128), VEC_UNITS (2: vector units that each take an instruction), DRAM_GBPS (4.4),
# CORE_GBPS (unset: no per-core limit), PROMPT (128), THREADS ("1 4 8").
set -euo pipefail
usage() { echo "usage: $0 [--count CSV]... [--dram CSV]... [--cycles CSV] [--csv OUT] SHAPES_YAML:BLOCKS..." >&2; exit 2; }
counts=() drams=() cycles=() csv_out=/dev/null models=()
while [ $# -gt 0 ]; do
  case $1 in
    --count) [ $# -ge 2 ] || usage; counts+=("$2"); shift 2 ;;
    --dram) [ $# -ge 2 ] || usage; drams+=("$2"); shift 2 ;;
    --cycles) [ $# -ge 2 ] || usage; cycles=("$2"); shift 2 ;;
    --csv) [ $# -ge 2 ] || usage; csv_out=$2; shift 2 ;;
    -*) usage ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || usage
[ ${#counts[@]} -gt 0 ] || { echo "project.sh: no count CSV: run make bench-count" >&2; exit 1; }
[ ${#drams[@]} -gt 0 ] || { echo "project.sh: no DRAM CSV: run make bench-dram" >&2; exit 1; }
for f in "${counts[@]}" "${drams[@]}" "${cycles[@]}"; do
  [ -f "$f" ] || { echo "project.sh: $f is missing" >&2; exit 1; }
done

# The layers of every model: "MODEL|NAME|N|K|BLOCKS" lines, from the flow mappings
# ({name: q_proj, N: 2048, K: 1024, ...}) of each shapes file.
layers=""
for spec in "${models[@]}"; do
  file=${spec%:*} blocks=${spec##*:}
  if [ "$file" = "$spec" ] || ! [[ $blocks =~ ^[1-9][0-9]*$ ]] || [ ! -f "$file" ]; then
    echo "project.sh: \"$spec\": expected SHAPES_YAML:BLOCKS, an existing file" >&2; exit 2
  fi
  got=$(awk -v blocks="$blocks" '
    function field(key,   s) {
      if (!match($0, key ": *[^,}]+")) return ""
      s = substr($0, RSTART, RLENGTH); sub(/^[^:]*: */, "", s); sub(/ +$/, "", s); return s }
    /^model:/ { model = $0; sub(/^model: */, "", model); sub(/ *(#.*)?$/, "", model) }
    /^ *- *\{ *name:/ { rows[++n] = field("name") "|" field("N") "|" field("K") }
    END { for (i = 1; i <= n; i++) print (model == "" ? FILENAME : model) "|" rows[i] "|" blocks }' "$file")
  [ -n "$got" ] || { echo "project.sh: no layers in $file" >&2; exit 1; }
  layers+=$got$'\n'
done

kinds="" files=()
for f in "${counts[@]}"; do kinds+="c"; files+=("$f"); done
for f in "${drams[@]}"; do kinds+="d"; files+=("$f"); done
for f in "${cycles[@]}"; do kinds+="y"; files+=("$f"); done

awk -F, -v kinds="$kinds" -v layers="$layers" -v csv_out="$csv_out" \
    -v ghz="${K1_GHZ:-1.6}" -v vlen="${VLEN:-256}" -v dlen="${DLEN:-128}" -v units="${VEC_UNITS:-2}" \
    -v gbps="${DRAM_GBPS:-4.4}" -v core_gbps="${CORE_GBPS:-}" -v prompt="${PROMPT:-128}" \
    -v threads="${THREADS:-1 4 8}" '
  FNR == 1 { file++; kind = substr(kinds, file, 1); delete col
             for (i = 1; i <= NF; i++) col[$i] = i
             need = kind == "c" ? "M N K vlen path vwork_per_mac" : kind == "d" ? "M N K path placement l2_kb dram_bytes min_bytes" : "variant rows lmul columns k_per_trip cycles_per_trip buckets"
             nn = split(need, req, " ")
             for (i = 1; i <= nn; i++) if (!(req[i] in col)) {
               printf "project.sh: %s: no %s column in its header\n", FILENAME, req[i] > "/dev/stderr"; bad = 1; exit 1 }
             next }
  kind == "c" { if ($col["path"] != "kernel-packed" || $col["vlen"] != vlen) next
                m = $col["M"]; key = m "," $col["N"] "," $col["K"]
                if (!(key in vw)) vshapes[m] = vshapes[m] " " $col["N"] "," $col["K"]
                vw[key] = $col["vwork_per_mac"]; next }
  kind == "d" { if ($col["path"] != "packed" || $col["placement"] != "aligned") next
                t = ("threads" in col) ? $col["threads"] : 1
                m = $col["M"]; src = m "," t "," $col["l2_kb"]; key = src "," $col["N"] "," $col["K"]
                if (!(key in db)) dshapes[src] = dshapes[src] " " $col["N"] "," $col["K"]
                db[key] = $col["dram_bytes"]; dmin[key] = $col["min_bytes"]; next }
  kind == "y" { if ($col["variant"] != "base") next
                l = $col["lmul"]; cols[l] = $col["columns"]
                cpk[l, $col["rows"]] = $col["cycles_per_trip"] / $col["k_per_trip"]
                nb = split($col["buckets"], bs, " ")
                for (i = 1; i <= nb; i++) { tile_of[bs[i]] = $col["rows"] " " l; nbk++ }
                next }

  function abs(x) { return x < 0 ? -x : x }
  # nearest(LIST, N, K): the "N,K" of LIST (space-separated) closest to N x K in log N + log K.
  function nearest(list, n, k,   a, i, c, d, best, bd, nk) {
    c = split(list, a, " "); bd = -1
    for (i = 1; i <= c; i++) { split(a[i], nk, ",")
      d = abs(log(nk[1] / n)) + abs(log(nk[2] / k))
      if (bd < 0 || d < bd) { bd = d; best = a[i] } }
    return best }
  # Vector work per MAC of a packed call: counted, else (mark "*") that of the nearest counted
  # shape of the same M; -1 when nothing of that M was counted.
  function vwork(m, n, k,   s) {
    vmark = ""
    if ((m "," n "," k) in vw) return vw[m "," n "," k]
    if (vshapes[m] == "") { vmark = "?"; return -1 }
    s = nearest(vshapes[m], n, k); vmark = "*"; return vw[m "," s] }
  # Modelled cycles per MAC of the k-loops an M-row call runs (the plan of the smallest bucket
  # >= M, else the largest: M / R tiles of R rows and one of the rest, at LMUL L); -1 without.
  function cycles_per_mac(m,   b, best, big, tl, r, l, c) {
    best = ""; big = ""
    for (b in tile_of) { if (b + 0 >= m && (best == "" || b + 0 < best + 0)) best = b
                         if (big == "" || b + 0 > big + 0) big = b }
    if (best == "") best = big
    if (best == "") return -1
    split(tile_of[best], tl, " "); r = tl[1]; l = tl[2]
    if (!((l, r) in cpk) || (m % r && !((l, m % r) in cpk))) return -1
    c = int(m / r) * cpk[l, r] + (m % r ? cpk[l, m % r] : 0)
    return c / (m * cols[l]) }
  function min_bytes(m, n, k) { return 2 * n * k + 2 * m * k + 4 * m * n }
  # DRAM bytes of the whole call on T threads. The sources, in order: T = 1: the one-thread
  # rows at L2 512 KiB; T > 1: the T-thread rows, then (mark †) the one-thread rows at 128 KiB,
  # one core'\''s share of a cluster. In each, the call itself, else (mark ‡) the nearest shape
  # of that M in it: its bytes / minimum times this call'\''s minimum. Nothing: the minimum (§).
  function bytes(m, n, k, t,   srcs, ns, i, s, key, near) {
    ns = split(t == 1 ? "1,512" : t ",512 1,128", srcs, " ")
    for (i = 1; i <= ns; i++) {
      s = m "," srcs[i]; bmark = (i == 2 ? "†" : "")
      key = s "," n "," k
      if (key in db) { bratio = db[key] / dmin[key]; return db[key] }
      if (dshapes[s] != "") { near = s "," nearest(dshapes[s], n, k); bmark = bmark "‡"
        bratio = db[near] / dmin[near]; return bratio * min_bytes(m, n, k) }
    }
    bmark = "§"; bratio = 1; return min_bytes(m, n, k) }
  function bw(t) { return (core_gbps != "" && t * core_gbps < gbps ? t * core_gbps : gbps) * 1e9 }
  # project(M, N, K, T): sets pc, pd (compute and DRAM seconds), pt (the larger), pbound.
  function project(m, n, k, t,   v) {
    v = vwork(m, n, k); pcpm = cycles_per_mac(m)
    if (pcpm >= 0) { v = 0; pc = pcpm * m * n * k / (ghz * 1e9) / t }
    else pc = v < 0 ? 0 : v * m * n * k * cyc / (ghz * 1e9) / t
    pd = bytes(m, n, k, t) / bw(t); pt = pc > pd ? pc : pd
    pbound = v < 0 ? "memory?" : pc >= pd ? "compute" : "memory"
    used[vmark] = 1; used[bmark] = 1 }
  function ms(s) { return sprintf(s < 0.001 ? "%.3f" : s < 0.1 ? "%.2f" : "%.1f", 1e3 * s) }

  END {
    if (bad) exit 1
    cyc = vlen / dlen / units
    nt = split(threads, T, " ")
    nl = split(layers, L, "\n")
    for (i = 1; i <= nl; i++) if (L[i] != "") { split(L[i], g, "|")
      if (!(g[1] in seenm)) { seenm[g[1]] = 1; mod[++nm] = g[1] }
      nly[g[1]]++; ly[g[1], nly[g[1]]] = g[2] "|" g[3] "|" g[4] "|" g[5]; blocks[g[1]] = g[5] }
    peak = units * dlen / 32 * 2 * ghz
    print "## What a token costs on a K1: the Linear layers projected"
    print ""
    print "Assumptions (environment variables of `measure/report/project.sh`):"
    print ""
    printf "- Compute: the counted vector work per MAC (`make bench-count`, packed weights, VLEN %d)\n", vlen
    printf "  x M x N x K, each unit of vector work (one instruction of LMUL 1; L for LMUL L, doubled\n"
    printf "  when widening) taking VLEN/DLEN = %d/%d cycles on one of VEC_UNITS = %d vector units, at\n", vlen, dlen, units
    printf "  K1_GHZ = %s GHz: %.3f ns per unit. Pure FP32 FMAs (0.125 per MAC at VLEN 256) then run at\n", ghz, cyc / ghz
    printf "  %.1f GFLOP/s per core, the datasheet'\''s 25.6 (cpufp measured 32); every vector\n", peak
    printf "  instruction is charged as an FMA of its LMUL, scalar instructions nothing (dual issue).\n"
    printf "  On T threads the compute is divided by T (the columns split evenly, no overhead).\n"
    if (nbk) {
      printf "- **Compute from the X60 model instead** (`--cycles`, `make bench-cycles`): a call'\''s compute\n"
      printf "  is M x N x K x the modelled cycles per MAC of the k-loops its plan runs (the base tiles,\n"
      printf "  M / R of R rows and one of the rest, under llvm-mca'\''s SpacemiT X60 model) at K1_GHZ; the\n"
      printf "  vector work is shown, not used. Left out: what runs outside the k-loops (arranging the\n"
      printf "  activations, partial sums between K blocks, the outputs).\n"
    } else printf "- No `--cycles`: the compute is the vector work at the nominal rate above.\n"
    printf "- DRAM: the bytes of the whole call from the cache model (`make bench-dram`, packed weights,\n"
    printf "  64-byte aligned buffers, caches cold at the call, so every weight byte comes from DRAM) at\n"
    printf "  DRAM_GBPS = %s GB/s, the K1'\''s end-to-end figure seen in llama.cpp decode (the channel is\n", gbps
    printf "  9.6-10.7 GB/s in theory, 6-8 likely in practice). One channel, shared: T threads share the\n"
    if (core_gbps == "") printf "  same GB/s (CORE_GBPS unset: one thread reaches it too, although one core was seen\n  copying about 2.6 GB/s).\n"
    else printf "  same GB/s, at most CORE_GBPS = %s GB/s per thread (T x CORE_GBPS in all).\n", core_gbps
    printf "  1 thread: the call'\''s bytes at L2 512 KiB (a core alone); 4 and 8 threads: the bytes of the\n"
    printf "  T-thread call (L2 512 KiB per cluster of four) where `make bench-dram` measured it, else\n"
    printf "  marked below.\n"
    printf "- A call takes the larger of its compute and DRAM time (they overlap fully); *bound* says which.\n"
    printf "- Not counted: attention (scores, softmax, KV cache reads and writes), norms, RoPE,\n"
    printf "  activation functions, embeddings, thread start and synchronisation. The tokens/s below\n"
    printf "  are upper bounds for an engine whose Linears run this way.\n"
    printf "- Decode: M = 1, every layer once per block, lm_head once per token. Prefill: a prompt of\n"
    printf "  PROMPT = %d tokens, every layer but lm_head once per block at M = %d, lm_head once at M = 1\n", prompt, prompt
    printf "  (only the last position'\''s logits). Bandwidth bound: all the Linear weights (BF16) read once\n"
    printf "  per token at DRAM_GBPS.\n"
    print ""
    print "Marks: \\* vector work of the nearest counted shape of the same M (not counted for this"
    print "shape); † no T-thread measurement: the one-thread call'\''s bytes at L2 128 KiB (one core'\''s"
    print "share of a cluster); ‡ this call not measured: the bytes / minimum of the nearest measured"
    print "shape of the same M (and thread count, or † source) times this call'\''s minimum bytes;"
    print "§ nothing of this M measured: the minimum bytes (a lower bound). ? nothing of this M"
    print "counted: compute left out."
    print "kind,model,layer,N,K,M,threads,vwork_per_mac,vwork_mark,dram_bytes,dram_ratio,dram_mark,compute_ms,dram_ms,ms,bound,tok_s,cycles_per_mac" > csv_out
    for (a = 1; a <= nm; a++) { md = mod[a]
      print ""
      printf "### %s (%d blocks), per call\n", md, blocks[md]
      print ""
      tl = T[1]; for (j = 2; j <= nt; j++) tl = tl " / " T[j]
      hdr = "| layer | N | K | M | vwork/MAC" (nbk ? " | cycles/MAC" : "") " | DRAM / min, " tl " thr."
      sep = "|---|---:|---:|---:|---:" (nbk ? "|---:" : "") "|---"
      for (j = 1; j <= nt; j++) { hdr = hdr sprintf(" | %d thr., ms | bound", T[j]); sep = sep "|---:|---" }
      print hdr " |"; print sep "|"
      wbytes = 0
      for (j = 1; j <= nt; j++) { dec[j] = 0; pre[j] = 0; decmem[j] = 0 }
      for (mi = 1; mi <= 2; mi++) { m = mi == 1 ? 1 : prompt
        for (i = 1; i <= nly[md]; i++) { split(ly[md, i], g, "|"); name = g[1]; n = g[2]; k = g[3]
          head = name == "lm_head"
          if (head && m != 1) continue
          times = head ? 1 : blocks[md]
          if (m == 1) wbytes += times * 2 * n * k
          v = vwork(m, n, k); vm = vmark
          row = ""; ratios = ""
          for (j = 1; j <= nt; j++) { t = T[j]
            project(m, n, k, t)
            row = row sprintf(" | %s | %s", ms(pt), pbound)
            ratios = ratios (j > 1 ? " / " : "") sprintf("%.3f%s", bratio, bmark)
            printf "linear,%s,%s,%d,%d,%d,%d,%.4f,%s,%.0f,%.4f,%s,%.6f,%.6f,%.6f,%s,,%s\n", md, name, n, k, m, t,
                   v, vm, bratio * min_bytes(m, n, k), bratio, bmark, 1e3 * pc, 1e3 * pd, 1e3 * pt, pbound,
                   pcpm < 0 ? "" : sprintf("%.6f", pcpm) > csv_out
            if (m == 1) { dec[j] += times * pt; if (pbound == "memory") decmem[j] += times * pt }
            if (m == prompt || head) pre[j] += times * pt
          }
          cm = nbk ? (pcpm < 0 ? " | -" : sprintf(" | %.4f", pcpm)) : ""
          printf "| %s | %d | %d | %d | %s%s | %s%s |\n", name, n, k, m, v < 0 ? "-" : sprintf("%.4f%s", v, vm), cm, ratios, row
        }
      }
      bound_tok = gbps * 1e9 / wbytes
      print ""
      printf "### %s: the whole model'\''s Linears (%.3f GB of BF16 weights)\n", md, wbytes / 1e9
      print ""
      hdr = "| |"; sep = "|---|"
      for (j = 1; j <= nt; j++) { hdr = hdr sprintf(" %d thread%s |", T[j], T[j] > 1 ? "s" : ""); sep = sep "---:|" }
      print hdr; print sep
      r1 = "| decode, ms per token |"; r2 = "| decode, tokens/s |"
      r3 = sprintf("| share of the bandwidth bound, %.2f tokens/s at %s GB/s |", bound_tok, gbps)
      r4 = "| decode time in memory-bound calls |"; r5 = sprintf("| prefill of %d tokens, tokens/s |", prompt)
      for (j = 1; j <= nt; j++) {
        r1 = r1 sprintf(" %.1f |", 1e3 * dec[j]); r2 = r2 sprintf(" %.3f |", 1 / dec[j])
        r3 = r3 sprintf(" %.1f %% |", 100 / dec[j] / bound_tok); r4 = r4 sprintf(" %.0f %% |", 100 * decmem[j] / dec[j])
        r5 = r5 sprintf(" %.1f |", prompt / pre[j])
        printf "model,%s,decode,-,-,1,%d,,,%.0f,,,,,%.6f,,%.4f\n", md, T[j], wbytes, 1e3 * dec[j], 1 / dec[j] > csv_out
        printf "model,%s,bound,-,-,1,%d,,,%.0f,,,,,,,%.4f\n", md, T[j], wbytes, bound_tok > csv_out
        printf "model,%s,prefill,-,-,%d,%d,,,,,,,,%.6f,,%.4f\n", md, prompt, T[j], 1e3 * pre[j], prompt / pre[j] > csv_out
      }
      print r1; print r2; print r3; print r4; print r5
    }
    if (used["?"] || used["§"]) {
      print ""
      print "**Some calls had no measurement of their M at all** (marks ? or §): run `make bench-count`"
      print "and `make bench-dram` for them."
    }
  }' "${files[@]}"

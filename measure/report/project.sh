#!/usr/bin/env bash
# What a token costs on a K1: every Linear of each model projected from the counted vector
# work and the cache model's DRAM bytes, at M = 1 (decode) and M = PROMPT (prefill), on 1, 4 and
# 8 threads, then each model's decode and prefill tokens/s against its bandwidth bound, and at
# context depths with attention added. Markdown on stdout:
#   measure/report/project.sh [--count CSV]... [--dram CSV]... [--cycles CSV]
#                             [--attention-count CSV] [--attention-dram CSV]... [--csv OUT] SHAPES_YAML:BLOCKS...
# --count: make bench-count's CSVs (count.csv, count-selected.csv: the kernel-packed rows at
#   VLEN). --dram: make bench-dram's CSVs (dram.csv, dram-selected.csv or copies of it: the
#   packed rows on aligned buffers), in either format, told apart by the header line:
#   M,N,K,path,placement,l2_kb,dram_bytes,min_bytes,ratio,measured (one thread), or the same
#   with a threads column after placement (threads 1 at L2 512 and 128 KiB; threads 4 and 8 at
#   512 KiB, the bytes of the whole call). A row given again in a later file replaces the earlier.
# --cycles: make bench-cycles' cycles.csv (the k-loop of every tile under llvm-mca's X60 model):
#   then a call's compute is the modelled cycles per MAC of the tiles its plan runs (the base
#   variant's: the K1 has no Zvfbfwma) instead of the vector work at the nominal rate.
# --attention-count: make bench-count-attention's count-attention.csv (gemm_rvv_attention's
#   instructions and vector work per MAC, by cache type, head dim, decoding or a prompt, n_kv).
# --attention-dram: make bench-dram-attention's dram-attention.csv (a decoded token's DRAM bytes
#   over the KV bytes it reads, by head dim, heads, n_kv, threads, L2).
# --torch-count: make bench-torch's torch-count.csv; --llama-count: make bench-llama's
#   llama-count.csv of the 2-block GQA Llama. With either, a table of the engines' own work
#   besides the Linears (PyTorch patched by gemm_rvv.torch, llama.cpp with the plugin): their
#   instructions a token outside libgemm_rvv, counted on a model of 2 blocks (PyTorch: the
#   Qwen2-shaped model, BF16; llama.cpp: the GQA Llama), per block, times each model's blocks,
#   at SCALAR_IPC, added to its Linears (and llama.cpp's attention on the library at depth 0).
# SHAPES_YAML:BLOCKS: a shapes file (its layers' name, N and K; `lm_head` runs once per token,
#   every other layer once per transformer block; the attention's shape from its header comment
#   "H query heads and G key/value heads of D", as gemm-rvv-shapes writes it) and the model's
#   number of blocks.
# --csv OUT: also every figure as CSV (what measure/report/project-check.sh compares).
# Assumptions, each an environment variable printed with the tables: K1_GHZ (1.6), VLEN (256),
# DLEN (128), VEC_UNITS (2: vector units that each take an instruction), DRAM_GBPS (4.4),
# CORE_GBPS (unset: no per-core limit), PROMPT (128), THREADS ("1 4 8"); for attention DEPTHS
# ("0 1024 4096": tokens in the KV cache before the token or the prompt), KV_CACHE (f16),
# SCALAR_IPC (1: scalar instructions a cycle).
set -euo pipefail
usage() { echo "usage: $0 [--count CSV]... [--dram CSV]... [--cycles CSV] [--csv OUT] SHAPES_YAML:BLOCKS..." >&2; exit 2; }
counts=() drams=() cycles=() attn_counts=() attn_drams=() engine_counts=() engine_kinds="" csv_out=/dev/null models=()
while [ $# -gt 0 ]; do
  case $1 in
    --count) [ $# -ge 2 ] || usage; counts+=("$2"); shift 2 ;;
    --dram) [ $# -ge 2 ] || usage; drams+=("$2"); shift 2 ;;
    --cycles) [ $# -ge 2 ] || usage; cycles=("$2"); shift 2 ;;
    --attention-count) [ $# -ge 2 ] || usage; attn_counts=("$2"); shift 2 ;;
    --attention-dram) [ $# -ge 2 ] || usage; attn_drams+=("$2"); shift 2 ;;
    --torch-count) [ $# -ge 2 ] || usage; engine_counts+=("$2"); engine_kinds+=t; shift 2 ;;
    --llama-count) [ $# -ge 2 ] || usage; engine_counts+=("$2"); engine_kinds+=l; shift 2 ;;
    --csv) [ $# -ge 2 ] || usage; csv_out=$2; shift 2 ;;
    -*) usage ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || usage
[ ${#counts[@]} -gt 0 ] || { echo "project.sh: no count CSV: run make bench-count" >&2; exit 1; }
[ ${#drams[@]} -gt 0 ] || { echo "project.sh: no DRAM CSV: run make bench-dram" >&2; exit 1; }
for f in "${counts[@]}" "${drams[@]}" "${cycles[@]}" "${attn_counts[@]}" "${attn_drams[@]}" "${engine_counts[@]}"; do
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
    /^#/ && match($0, /[0-9]+ query heads and [0-9]+ key\/value heads of [0-9]+/) {
      split(substr($0, RSTART, RLENGTH), h, " "); heads = h[1] "|" h[5] "|" h[9] }
    END { m = model == "" ? FILENAME : model
          for (i = 1; i <= n; i++) print m "|" rows[i] "|" blocks
          if (heads != "") print "@attn|" m "|" heads }' "$file")
  [ -n "$got" ] || { echo "project.sh: no layers in $file" >&2; exit 1; }
  layers+=$got$'\n'
done

kinds="" files=()
for f in "${counts[@]}"; do kinds+="c"; files+=("$f"); done
for f in "${drams[@]}"; do kinds+="d"; files+=("$f"); done
for f in "${cycles[@]}"; do kinds+="y"; files+=("$f"); done
for f in "${attn_counts[@]}"; do kinds+="a"; files+=("$f"); done
for f in "${attn_drams[@]}"; do kinds+="e"; files+=("$f"); done
kinds+=$engine_kinds; files+=("${engine_counts[@]}")

awk -F, -v kinds="$kinds" -v layers="$layers" -v csv_out="$csv_out" \
    -v ghz="${K1_GHZ:-1.6}" -v vlen="${VLEN:-256}" -v dlen="${DLEN:-128}" -v units="${VEC_UNITS:-2}" \
    -v gbps="${DRAM_GBPS:-4.4}" -v core_gbps="${CORE_GBPS:-}" -v prompt="${PROMPT:-128}" \
    -v threads="${THREADS:-1 4 8}" -v depths="${DEPTHS:-0 1024 4096}" -v kvc="${KV_CACHE:-f16}" \
    -v ipc="${SCALAR_IPC:-1}" '
  FNR == 1 { file++; kind = substr(kinds, file, 1); delete col
             for (i = 1; i <= NF; i++) col[$i] = i
             need = kind == "c" ? "M N K vlen path vwork_per_mac" : kind == "d" ? "M N K path placement l2_kb dram_bytes min_bytes" : kind == "a" ? "kv_type head_dim n_q n_kv macs live_macs scalar_per_mac vwork_per_mac" : kind == "e" ? "kv_type head_dim q_heads kv_heads n_q n_kv threads l2_kb dram_bytes cache_bytes" : kind == "t" ? "model mode per_prompt_token per_decoded_token library_prompt library_decoded" : kind == "l" ? "config test insns_per_token linear_insns_per_token" : "variant rows lmul columns k_per_trip cycles_per_trip buckets"
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
  # attention: per MAC of the live positions (a prompt'\''s causal mask leaves about half)
  kind == "a" { if ($col["kv_type"] != kvc) next
                key = $col["head_dim"] "," ($col["n_q"] > 1 ? "p" : "d") "," $col["n_kv"]
                if (!(key in as_)) akey[++na] = key
                live = $col["live_macs"] / $col["macs"]
                as_[key] = $col["scalar_per_mac"] / live; av_[key] = $col["vwork_per_mac"] / live; next }
  kind == "e" { if ($col["kv_type"] != kvc || $col["n_q"] != 1) next
                key = $col["head_dim"] "," $col["q_heads"] "," $col["kv_heads"] "," $col["threads"] "," $col["l2_kb"]
                if (!((key "," $col["n_kv"]) in er)) elist[key] = elist[key] " " $col["n_kv"]
                er[key "," $col["n_kv"]] = $col["dram_bytes"] / $col["cache_bytes"]; next }
  # the engines'\'' own instructions per token and block (their counted models have 2 blocks)
  kind == "t" { if ($col["model"] != "qwen2" || $col["mode"] != "patched") next
                rest["torch", "d"] = ($col["per_decoded_token"] - $col["library_decoded"]) / 2
                rest["torch", "p"] = ($col["per_prompt_token"] - $col["library_prompt"]) / 2; next }
  kind == "l" { if ($col["config"] != "plugin" || ($col["test"] != "tg" && $col["test"] != "pp")) next
                rest["llama", $col["test"] == "tg" ? "d" : "p"] = ($col["insns_per_token"] - $col["linear_insns_per_token"]) / 2; next }
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
  # >= M, else the largest: M / R tiles of R rows at LMUL L and one of the rest at the widest
  # LMUL the build has a tile of its rows at, as the driver runs it); -1 without.
  function cycles_per_mac(m,   b, best, big, tl, r, l, c, rest, lr, w) {
    best = ""; big = ""
    for (b in tile_of) { if (b + 0 >= m && (best == "" || b + 0 < best + 0)) best = b
                         if (big == "" || b + 0 > big + 0) big = b }
    if (best == "") best = big
    if (best == "") return -1
    split(tile_of[best], tl, " "); r = tl[1]; l = tl[2]; rest = m % r; lr = 0
    for (w = 1; w <= 8; w *= 2) if (rest && (w, rest) in cpk) lr = w
    if (!((l, r) in cpk) || (rest && !lr)) return -1
    c = int(m / r) * cpk[l, r] / cols[l] + (rest ? cpk[lr, rest] / cols[lr] : 0)
    return c / m }
  function min_bytes(m, n, k) { return 2 * n * k + 2 * m * k + 4 * m * n }
  # Modelled cycles per live attention MAC: of the counted call of the nearest head dim, then
  # n_kv (in log), decoding or a prompt as asked: scalar instructions at SCALAR_IPC a cycle
  # beside the vector work at the nominal rate, the larger of the two; -1 when none counted.
  function attn_cpm(d, prompt, nkv,   i, f, dist, bd, best, sc, vc) {
    bd = -1; best = ""
    for (i = 1; i <= na; i++) { split(akey[i], f, ",")
      if (f[2] != (prompt ? "p" : "d")) continue
      dist = 100 * abs(log(f[1] / d)) + abs(log(f[3] / nkv))
      if (bd < 0 || dist < bd) { bd = dist; best = akey[i] } }
    if (best == "") return -1
    sc = as_[best] / ipc; vc = av_[best] * cyc
    return sc > vc ? sc : vc }
  # DRAM bytes / KV bytes of a decoded token at n_kv on T threads, of the same head dim and
  # heads: the T-thread rows at 512 KiB, else (†) the one-thread rows at 128 KiB for T > 1; the
  # nearest n_kv measured (in log); nothing measured: 1 (§, a lower bound).
  function attn_ratio(d, hq, hkv, nkv, t,   srcs, ns, i, key, a, c, j, bd, dist, best) {
    ns = split(t == 1 ? "1,512" : t ",512 1,128", srcs, " ")
    for (i = 1; i <= ns; i++) {
      key = d "," hq "," hkv "," srcs[i]
      if (elist[key] == "") continue
      c = split(elist[key], a, " "); bd = -1
      for (j = 1; j <= c; j++) { dist = abs(log(a[j] / nkv)); if (bd < 0 || dist < bd) { bd = dist; best = a[j] } }
      amark = i == 2 ? "†" : ""; return er[key "," best] }
    amark = "§"; return 1 }
  # attention(MODEL, DEPTH, PROMPT?, T): one block'\''s attention of a decoded token (n_q = 1,
  # n_kv = DEPTH + 1) or of the prompt (n_q = PROMPT, n_kv = DEPTH + PROMPT, causal): sets ac,
  # ad (compute and DRAM seconds), at (the larger), acpm, abytes, aratio, amark.
  function attention(md, dep, isprompt, t,   hq, hkv, d, nq, nkv, live, par) {
    hq = ahq[md]; hkv = ahkv[md]; d = ahd[md]
    nq = isprompt ? prompt : 1; nkv = dep + nq
    live = isprompt ? prompt * dep + prompt * (prompt + 1) / 2 : nkv
    acpm = attn_cpm(d, isprompt, nkv)
    par = hq * nq < t ? hq * nq : t
    ac = acpm < 0 ? 0 : 2 * live * d * hq * acpm / (ghz * 1e9) / par
    if (isprompt) { aratio = 1; amark = "§" } else aratio = attn_ratio(d, hq, hkv, nkv, t)
    abytes = 4 * nkv * hkv * d * aratio
    ad = abytes / bw(t); at = ac > ad ? ac : ad }
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
  # The decode and prefill tables of model MD at each depth, attention added to its Linears
  # (dec[], pre[] of the tables above).
  function depth_tables(md,   nd, D, i, j, dep, r, hdr, sep, tok, share, blk, ratios) {
    print ""
    if (!(md in ahd)) { printf "(%s: no attention shape in its shapes file: not projected at depths.)\n", md; return }
    if (na == 0) { printf "(%s: no --attention-count: attention not projected at depths; run make bench-count-attention.)\n", md; return }
    nd = split(depths, D, " "); blk = blocks[md]
    printf "### %s at context depths: Linears and attention (%s KV cache, %d query heads, %d KV heads of %d)\n", md, toupper(kvc), ahq[md], ahkv[md], ahd[md]
    print ""
    hdr = "| depth | KV bytes a token reads | attention cycles / MAC | DRAM / KV bytes, " tl " thr."
    sep = "|---:|---:|---:|---"
    for (j = 1; j <= nt; j++) { hdr = hdr sprintf(" | decode %d thr., tokens/s | attention", T[j]); sep = sep "|---:|---:" }
    print hdr " |"; print sep "|"
    for (i = 1; i <= nd; i++) { dep = D[i]; r = ""; ratios = ""
      for (j = 1; j <= nt; j++) { attention(md, dep, 0, T[j])
        tok = 1 / (dec[j] + blk * at); share = blk * at * tok
        r = r sprintf(" | %.3f | %.1f %%", tok, 100 * share)
        ratios = ratios (j > 1 ? " / " : "") sprintf("%.3f%s", aratio, amark)
        printf "attention,%s,decode@%d,%d,%d,1,%d,,,%.0f,%.4f,%s,%.6f,%.6f,%.6f,%s,%.4f,%s\n", md, dep, dep + 1, ahd[md], T[j],
               blk * abytes, aratio, amark, 1e3 * blk * ac, 1e3 * blk * ad, 1e3 * blk * at, (ac >= ad ? "compute" : "memory"), tok,
               acpm < 0 ? "" : sprintf("%.4f", acpm) > csv_out }
      printf "| %d | %.1f MB | %s | %s%s |\n", dep, blk * 4 * (dep + 1) * ahkv[md] * ahd[md] / 1e6, acpm < 0 ? "-" : sprintf("%.3f", acpm), ratios, r }
    print ""
    hdr = "| depth | attention cycles / MAC"; sep = "|---:|---:"
    for (j = 1; j <= nt; j++) { hdr = hdr sprintf(" | prefill of %d, %d thr., tokens/s | attention", prompt, T[j]); sep = sep "|---:|---:" }
    print hdr " |"; print sep "|"
    for (i = 1; i <= nd; i++) { dep = D[i]; r = ""
      for (j = 1; j <= nt; j++) { attention(md, dep, 1, T[j])
        tok = prompt / (pre[j] + blk * at); share = blk * at * tok / prompt
        r = r sprintf(" | %.1f | %.1f %%", tok, 100 * share)
        printf "attention,%s,prefill@%d,%d,%d,%d,%d,,,%.0f,%.4f,%s,%.6f,%.6f,%.6f,%s,%.4f,%s\n", md, dep, dep + prompt, ahd[md], prompt, T[j],
               blk * abytes, aratio, amark, 1e3 * blk * ac, 1e3 * blk * ad, 1e3 * blk * at, (ac >= ad ? "compute" : "memory"), tok,
               acpm < 0 ? "" : sprintf("%.4f", acpm) > csv_out }
      printf "| %d | %s%s |\n", dep, acpm < 0 ? "-" : sprintf("%.3f", acpm), r }
  }
  # Each engine'\'' decode and prefill tokens/s at depth 0 on T threads: the Linears (dec[],
  # pre[]), the library'\''s attention for llama.cpp, the engine'\''s own instructions on one thread.
  function engine_table(md,   e, j, blk, r, od, op, tok, names, lib_attn, E) {
    if (!(("torch", "d") in rest) && !(("llama", "d") in rest)) return
    blk = blocks[md]
    print ""
    printf "### %s at depth 0: each engine'\''s own work besides the Linears (at SCALAR_IPC = %s)\n", md, ipc
    print ""
    hdr = "| engine | own instructions a block, decode / prompt token"
    sep = "|---|---:"
    for (j = 1; j <= nt; j++) { hdr = hdr sprintf(" | decode %d thr., tokens/s | prefill of %d, tokens/s", T[j], prompt); sep = sep "|---:|---:" }
    print hdr " |"; print sep "|"
    names["torch"] = "PyTorch, gemm_rvv.torch.patch"; names["llama"] = "llama.cpp, the plugin"
    split("llama torch", E, " ")
    for (e = 1; e <= 2; e++) { if (!((E[e], "d") in rest)) continue
      r = sprintf("| %s | %.2f M / %.2f M", names[E[e]], rest[E[e], "d"] / 1e6, rest[E[e], "p"] / 1e6)
      for (j = 1; j <= nt; j++) {
        lib_attn = 0
        if (E[e] == "llama" && (md in ahd) && na) { attention(md, 0, 0, T[j]); lib_attn = blk * at }
        od = blk * rest[E[e], "d"] / (ipc * ghz * 1e9)
        tok = 1 / (dec[j] + lib_attn + od)
        r = r sprintf(" | %.3f (%.0f %% own)", tok, 100 * od * tok)
        lib_attn = 0
        if (E[e] == "llama" && (md in ahd) && na) { attention(md, 0, 1, T[j]); lib_attn = blk * at }
        op = blk * prompt * rest[E[e], "p"] / (ipc * ghz * 1e9)
        r = r sprintf(" | %.1f", prompt / (pre[j] + lib_attn + op))
        printf "engine,%s,%s,-,-,1,%d,,,,,,,,%.6f,,%.4f\n", md, E[e], T[j], 1e3 * od, tok > csv_out
        printf "engine,%s,%s,-,-,%d,%d,,,,,,,,%.6f,,%.4f\n", md, E[e], prompt, T[j], 1e3 * op,
               prompt / (pre[j] + lib_attn + op) > csv_out
      }
      print r " |" }
    print ""
    print "Own instructions: outside libgemm_rvv, per block (the counted model'\''s over its 2 blocks:"
    print "embedding, final norm, sampling and the interpreter'\''s fixed cost a token spread over"
    print "them), on one thread; PyTorch'\''s include its attention (scalar, at depth 0) and Python."
  }
  function ms(s) { return sprintf(s < 0.001 ? "%.3f" : s < 0.1 ? "%.2f" : "%.1f", 1e3 * s) }

  END {
    if (bad) exit 1
    cyc = vlen / dlen / units
    nt = split(threads, T, " ")
    nl = split(layers, L, "\n")
    for (i = 1; i <= nl; i++) if (L[i] ~ /^@attn\|/) { split(L[i], g, "|")
      ahq[g[2]] = g[3]; ahkv[g[2]] = g[4]; ahd[g[2]] = g[5] }
    for (i = 1; i <= nl; i++) if (L[i] != "" && L[i] !~ /^@attn\|/) { split(L[i], g, "|")
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
      printf "  M / R of R rows and one of the rest at its LMUL, under llvm-mca'\''s SpacemiT X60\n"
      printf "  model) at K1_GHZ; the vector work is shown, not used. Left out: what runs outside the\n"
      printf "  k-loops (arranging the activations, partial sums between K blocks, the outputs).\n"
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
    printf "- Not counted: norms, RoPE, activation functions, embeddings, writing the KV cache,\n"
    printf "  thread start and synchronisation; attention only in the tables at context depths. The\n"
    printf "  tokens/s below are upper bounds for an engine whose Linears run this way.\n"
    printf "- **Attention** (tables at context depths DEPTHS = %s, a %s KV cache: KV_CACHE), one\n", depths, toupper(kvc)
    printf "  gemm_rvv_attention call per block: a decoded token at n_kv = depth + 1, a prompt of PROMPT\n"
    printf "  at n_kv = depth + PROMPT under its causal mask. Compute: its live MACs (QK and PV,\n"
    printf "  2 n_kv D H_q a decoded token) x the counted cycles per live MAC (`make bench-count-attention`:\n"
    printf "  of issue 40'\''s shape, 9 query heads on 3 KV heads, at the nearest head dim and n_kv, decoding\n"
    printf "  or a prompt), scalar instructions at SCALAR_IPC = %s a cycle and vector work at the rate\n", ipc
    printf "  above, the larger; divided over min(T, query heads x rows) threads. DRAM: the KV cache\n"
    printf "  read (2 n_kv H_kv D x 2 bytes) x the cache model'\''s DRAM / KV bytes of a decoded token of\n"
    printf "  the model'\''s own heads (`make bench-dram-attention`, nearest n_kv; T threads: their rows,\n"
    printf "  else † the one-thread bytes at 128 KiB; none: § the KV bytes alone), at the same shared\n"
    printf "  DRAM_GBPS; a prompt: its KV bytes once (§). Each call the larger of its compute and DRAM.\n"
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
      depth_tables(md)
      engine_table(md)
    }
    if (used["?"] || used["§"]) {
      print ""
      print "**Some calls had no measurement of their M at all** (marks ? or §): run `make bench-count`"
      print "and `make bench-dram` for them."
    }
  }' "${files[@]}"

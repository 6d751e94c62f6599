# The k-loops of the compiled tiles, as llvm-mca input: reads `objdump -d --no-show-raw-insn`
# of one tiles object and writes, per tile function, each innermost loop holding the most MACs
# to DIR/NAME[.N].s, and one line per loop to stdout:
#   NAME.s FUNCTION ROWS LMUL COLUMNS K_PER_TRIP MACS_PER_TRIP PATH
# A loop is a backward branch and the instructions from its target to it, in address order,
# none of them a jump or a return (that is one path through it: a forward branch inside is
# not taken; a block the compiler placed after the function's end jumps back, not a loop). The vtype at its head
# is that of its last vsetvli, else of the last one before it, written as llvm-mca's
# LLVM-MCA-RISCV-LMUL/-SEW comments (llvm-mca follows a vsetvli inside the body itself).
# MACs: the tile's products (vfmacc, vfwmaccbf16; Q8_0: vwmul.vx and vwmacc.vx at SEW 8, its
# int32 sums being vwmacc.vx at SEW 16), each of VLEN * LMUL / SEW elements; a k of a trip is
# ROWS of them.
# Variables: dir (output folder), vlen.
function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
function lmul_of(s) { return s ~ /^mf/ ? 1 / substr(s, 3) : substr(s, 2) + 0 }
function is_product(m, sew) { return q8 ? m ~ /^vw(mul|macc)\.vx$/ && sew == 8 : m ~ /^vf(w)?macc/ }
# the SEW in effect at the instruction at index j: of the last vsetvli before it ("" if none)
function sew_at(j,   k) { for (k = j - 1; k >= 0; k--) if (mn[k] ~ /^vseti?vli$/) return substr(vtype(op[k]), 1, index(vtype(op[k]), " ") - 1); return "" }
# the vtype a vsetvli's operands set: "SEW LMUL" (e32 m4 -> "32 4")
function vtype(ops,   parts) { split(ops, parts, ","); return substr(parts[3], 2) " " parts[4] }
function flush(   i, j, k, n, best, inner, macs, lm, sew, vt, cols, rows, out, path, parts, seq) {
  if (fn == "") return
  n = 0
  for (i = 0; i < count; i++) {               # backward branches whose body holds products
    if (tgt[i] == "" || tgt[i] >= adr[i]) continue
    prod[i] = 0; through = 1
    for (j = 0; j < count; j++) {
      if (adr[j] < tgt[i] || adr[j] > adr[i]) continue
      if (is_product(mn[j], sew_at(j))) prod[i]++
      if (j != i && mn[j] ~ /^(j|jr|ret|tail)$/) through = 0
    }
    if (prod[i] > 0 && through) loop[n++] = i
  }
  best = 0
  for (k = 0; k < n; k++) {                   # innermost: no other such loop strictly inside
    i = loop[k]; inner[i] = 1
    for (j = 0; j < n; j++)
      if (j != k && tgt[loop[j]] >= tgt[i] && adr[loop[j]] <= adr[i] &&
          adr[loop[j]] - tgt[loop[j]] < adr[i] - tgt[i]) inner[i] = 0
    if (inner[i] && prod[i] > best) best = prod[i]
  }
  if (best == 0) { printf "loops.awk: %s has no loop with products\n", fn > "/dev/stderr"; fn = ""; exit 1 }
  split(fn, parts, "_")                       # gr_bf16_tile_rR_mL_VARIANT, gr_q8_0_tile_rR
  rows = substr(q8 ? parts[5] : parts[4], 2)
  seq = 0
  for (k = 0; k < n; k++) {
    i = loop[k]
    if (!inner[i] || prod[i] != best) continue
    vt = ""
    for (j = 0; j < count && adr[j] < tgt[i]; j++) if (mn[j] ~ /^vseti?vli$/) vt = vtype(op[j])
    for (j = 0; j < count; j++)
      if (adr[j] >= tgt[i] && adr[j] <= adr[i] && mn[j] ~ /^vseti?vli$/) vt = vtype(op[j])
    if (vt == "") { printf "loops.awk: %s: no vsetvli reaches the loop at %x\n", fn, tgt[i] > "/dev/stderr"; exit 1 }
    out = fn (seq ? "." seq : "") ".s"; seq++
    split(vt, parts, " ")
    printf "# %s: the loop from %x to %x (objdump of the compiled object)\n", fn, tgt[i], adr[i] > (dir "/" out)
    printf "# LLVM-MCA-RISCV-LMUL %s\n# LLVM-MCA-RISCV-SEW E%s\n.Lloop:\n", toupper(parts[2]), parts[1] > (dir "/" out)
    sew = parts[1]; lm = lmul_of(parts[2]); macs = 0; path = "-"
    for (j = 0; j < count; j++) {
      if (adr[j] < tgt[i] || adr[j] > adr[i]) continue
      if (mn[j] ~ /^vseti?vli$/) { split(vtype(op[j]), parts, " "); sew = parts[1]; lm = lmul_of(parts[2]) }
      if (is_product(mn[j], sew)) { macs += vlen * lm / sew; cols = vlen * lm / sew }
      if (q8 && mn[j] == "vle16.v") path = "scales-in-tile"   # the FP16 scales loaded
      if (q8 && mn[j] == "vse32.v") stored = 1                # and stored for the strip's tiles
      operands = op[j]
      if (dst[j] != "") operands = (dst[j] == tgt[i] ? ".Lloop" : ".Lout")
      if (brk[j] != "") operands = brk[j] operands
      printf "\t%s\t%s\n", mn[j], operands > (dir "/" out)
    }
    if (q8 && path == "-") path = "scales-widened"
    if (q8 && stored && path == "scales-in-tile") path = "scales-in-tile-stored"
    stored = 0
    close(dir "/" out)
    printf "%s %s %s %s %d %d %d %s\n", out, fn, rows, q8 ? 1 : substr(fn_parts5, 2), cols, best / rows, macs, path
  }
  fn = ""
}
/^[0-9a-f]+ <[^.][^>]*>:$/ {                    # a function (local labels start with .)
  flush(); name = $2; gsub(/[<>:]/, "", name); count = 0
  q8 = name ~ /^gr_q8_0_tile_r[0-9]+$/
  fn = (q8 || name ~ /^gr_bf16_tile_r[0-9]+_m[0-9]_/) ? name : ""
  if (fn != "" && !q8) { split(fn, fp, "_"); fn_parts5 = fp[5] }
  next }
fn != "" && /^ +[0-9a-f]+:\t/ {
  split($0, f, "\t"); a = f[1]; gsub(/[ :]/, "", a)
  adr[count] = hex(a); mn[count] = f[2]; o = f[3]; sub(/ *#.*/, "", o); op[count] = o
  tgt[count] = ""; dst[count] = ""; brk[count] = ""
  # a branch: its target address; the operands before it kept ("a6,")
  if (f[2] ~ /^(b[a-z]*|j)$/ && match(o, /[0-9a-f]+ <[^>]*>$/)) {
    tgt[count] = hex(substr(o, RSTART, index(substr(o, RSTART), " ") - 1)); dst[count] = tgt[count]
    brk[count] = substr(o, 1, RSTART - 1)
  }
  count++ }
END { flush() }

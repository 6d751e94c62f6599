#!/usr/bin/env bash
# shellcheck disable=SC2015  # "A && ok || fail": ok never fails
# tools/gguf-shapes on the test models of make_gguf_models.py (host): each model's layers are
# those gemm-rvv-shapes writes from the same config.json, gemm-rvv-gen takes the file and, with
# the gate gguf-shapes writes, plans every BF16 and Q8_0 Linear (--gate default: the library's
# gate) and the attention entry, a tied lm_head and a Q8_0 weight are said, model names cannot
# inject YAML, and bad input gets its exit status and message with -o leaving an existing file
# alone.
# Usage: PYTHON=... PYTHONPATH=... tests/llama/check-gguf-shapes.sh GGUF_SHAPES SHAPES_BIN GEN_BIN MODELS
set -u
tool=$1 shapes_bin=$2 gen_bin=$3 models=$4
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }
shapes() { "$python" "$tool" "$@"; }

# expect STATUS MESSAGE ARG...: gguf-shapes ARGs exits with STATUS, saying MESSAGE on stderr.
expect() {
  local status=$1 message=$2 out rc
  shift 2
  out=$(shapes "$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != "$status" ] || ! grep -qF -- "$message" <<<"$out"; then
    fail "gguf-shapes $*: exit $rc (expected $status), said: $out"
  else
    ok
  fi
}

# The layers (from the model: line on) match gemm-rvv-shapes' for the same model and options;
# comment lines in the list aside (a tied lm_head's names embed_tokens there, token_embd here).
for arch in llama qwen3 llama-gqa qwen2-tied; do
  for opts in "--batch 1" "--batch 1,4,16 --prefill 64,128"; do
    # shellcheck disable=SC2086
    if ! shapes $opts "$models/$arch.gguf" > "$tmp/gguf.yaml" ||
       ! "$shapes_bin" $opts "$models/$arch.config.json" > "$tmp/json.yaml"; then
      fail "$arch $opts: a tool failed"; continue
    fi
    if diff -u <(sed -n '/^model:/,$p' "$tmp/json.yaml" | grep -v '^  #') \
               <(sed -n '/^model:/,$p' "$tmp/gguf.yaml" | grep -v '^  #'); then
      ok
    else
      fail "$arch $opts: gguf-shapes and gemm-rvv-shapes list other layers"
    fi
  done
  # The generator takes the file and, with its gate, plans every (Linear, M): no fallback.
  shapes --batch 1 --prefill 64 -o "$tmp/$arch.yaml" "$models/$arch.gguf" &&
    "$gen_bin" -o "$tmp/gen-$arch" "$tmp/$arch.yaml" > "$tmp/gen.log" 2>&1 &&
    grep -q '"file"' "$tmp/gen-$arch/manifest.json" &&
    grep -q '"verdict": "kernel"' "$tmp/gen-$arch/manifest.json" &&
    grep -q '"verdict": "kernel", "plan": "attn_f16_d' "$tmp/gen-$arch/manifest.json" &&
    ! grep -q '"verdict": "fallback"' "$tmp/gen-$arch/manifest.json" && ok ||
    { fail "$arch: gemm-rvv-gen did not take the shapes file or left a Linear to the fallback:"
      cat "$tmp/gen.log"; grep '"fallback"' "$tmp/gen-$arch/manifest.json"; }
done

# The gate: written with the reason, and in the manifest; below the default gate, the GQA
# Llama's k and v (384 x 1152) and the Qwen2's k and v (128 x 896) are planned at M = 1.
engine_gate='gate: {min_n: 1, min_k: 1, max_m: 128, min_mnk: 1}'
default_gate='gate: {min_n: 1024, min_k: 1024, max_m: 128, min_mnk: 1000000}'
grep -qxF "$engine_gate" "$tmp/llama-gqa.yaml" &&
  grep -qF "# The gate: every 2-D BF16 or Q8_0 Linear gets a kernel (gguf-shapes --gate engine). The" "$tmp/llama-gqa.yaml" &&
  grep -qF "# engine's own BF16 path is scalar: ggml's MUL_MAT costs 12 instructions a multiply-" "$tmp/llama-gqa.yaml" &&
  grep -qF '"gate": {"min_n": 1, "min_k": 1, "max_m": 128, "min_mnk": 1}' "$tmp/gen-llama-gqa/manifest.json" &&
  grep -qF '{"name": "k_proj", "M": 1, "N": 384, "K": 1152, "weights": "bf16", "verdict": "kernel", "bucket": 1, "plan": "bf16_gemv_m1_n384_k1152"' "$tmp/gen-llama-gqa/manifest.json" &&
  grep -qF '{"name": "v_proj", "M": 1, "N": 128, "K": 896, "weights": "bf16", "verdict": "kernel", "bucket": 1, "plan": "bf16_gemv_m1_n128_k896"' "$tmp/gen-qwen2-tied/manifest.json" &&
  ok || fail "the gate is not written, or not what the generator used: $(grep -B7 '^gate' "$tmp/llama-gqa.yaml")"
# --gate default: the library's gate, said and kept in the command that regenerates the file;
# the narrow k and v go to the fallback, with the reason.
shapes --gate default --batch 1 -o "$tmp/gqa-default.yaml" "$models/llama-gqa.gguf" &&
  grep -qxF "$default_gate" "$tmp/gqa-default.yaml" && ! grep -qxF "$engine_gate" "$tmp/gqa-default.yaml" &&
  grep -qF "# The gate: the library's default, N >= 1024, K >= 1024, M*N*K >= 1000000" "$tmp/gqa-default.yaml" &&
  grep -qF -- "--batch 1 --gate default $models/llama-gqa.gguf" "$tmp/gqa-default.yaml" &&
  diff <(sed -n '/^model:/,$p' "$tmp/gqa-default.yaml") <(shapes --batch 1 "$models/llama-gqa.gguf" | sed -n '/^model:/,$p') &&
  "$gen_bin" --explain -o "$tmp/gen-gqa-default" "$tmp/gqa-default.yaml" > "$tmp/gen.log" 2>&1 &&
  grep -qE '^k_proj +1 +384 +1152 +bf16 +fallback +- +N=384 < 1024, M\*N\*K=442368 < 1000000$' "$tmp/gen.log" &&
  grep -qF '"name": "v_proj", "M": 1, "N": 384, "K": 1152, "weights": "bf16", "verdict": "fallback", "bucket": null, "plan": null, "row_blocks": null, "reason": "N=384 < 1024, M*N*K=442368 < 1000000"' "$tmp/gen-gqa-default/manifest.json" &&
  ok || { fail "--gate default: not the library's gate:"; cat "$tmp/gqa-default.yaml" "$tmp/gen.log"; }
expect 2 '--gate takes engine or default, not "none"' --gate none "$models/llama.gguf"
grep -q "^# tiny-qwen3-random: qwen3, hidden 1024, intermediate 2048, 2 layers,$" "$tmp/qwen3.yaml" &&
  grep -q "^# 16 query heads and 8 key/value heads of 128, vocabulary 1024.$" "$tmp/qwen3.yaml" &&
  grep -qF "#   gguf-shapes --model tiny-qwen3-random --batch 1 --prefill 64 $models/qwen3.gguf" "$tmp/qwen3.yaml" &&
  ok || fail "qwen3: the header comment is not as expected: $(head -4 "$tmp/qwen3.yaml")"

# Both models in one file: the Llama's layers, then Qwen3's other shapes under qwen3/ names.
shapes --batch 1 --prefill 64 -o "$tmp/both.yaml" "$models/llama.gguf" "$models/qwen3.gguf" &&
  diff <(sed -n '/^layers:/,/lm_head/p' "$tmp/both.yaml") <(sed -n '/^layers:/,/lm_head/p' "$tmp/llama.yaml") &&
  [ "$(grep -c 'name: qwen3/' "$tmp/both.yaml")" = 5 ] &&
  diff <(sed -n '/^attention:/,$p' "$tmp/both.yaml") - <<'EOF' &&
attention:
  - {name: attn, head_dim: 128, q_heads: 8, kv_heads: 4, kv: f16, n_q: [1, 64]}
  - {name: qwen3/attn, head_dim: 128, q_heads: 16, kv_heads: 8, kv: f16, n_q: [1, 64]}
EOF
  grep -q "name: qwen3/q_proj, N: 2048,    K: 1024,  M: \[1, 64\]}" "$tmp/both.yaml" &&
  grep -q "^model: tiny-llama-random + tiny-qwen3-random$" "$tmp/both.yaml" &&
  "$gen_bin" -o "$tmp/gen-both" "$tmp/both.yaml" > "$tmp/gen.log" 2>&1 && ok ||
  { fail "llama + qwen3: not the merged layers:"; cat "$tmp/both.yaml" "$tmp/gen.log"; }

# The one Linear the Llama's shapes do not hold: lm_head of the larger vocabulary.
shapes "$models/llama-noplan.gguf" > "$tmp/noplan.yaml" &&
  diff <(grep -v lm_head "$tmp/noplan.yaml" | sed -n '/^layers:/,$p') \
       <(shapes "$models/llama.gguf" | grep -v lm_head | sed -n '/^layers:/,$p') &&
  grep -q "name: lm_head,   N: 1280,    K: 1024,  M: 1}" "$tmp/noplan.yaml" && ok ||
  fail "llama-noplan: not the Llama's layers with lm_head 1280 x 1024"

# --weights: every Linear's tensor, whatever its type.
[ "$(shapes --weights "$models/llama-noplan.gguf" | wc -l)" = 15 ] &&
  shapes --weights "$models/llama-noplan.gguf" | grep -qP '^output\.weight\tBF16\t1280\t1024$' &&
  shapes --weights "$models/llama-q8_0.gguf" | grep -qP '^blk\.1\.ffn_down\.weight\tQ8_0\t1024\t2048$' &&
  shapes --weights "$models/qwen3-tied.gguf" | grep -qP "^token_embd\\.weight\\tBF16\\t512\\t256$" &&
  ! shapes --weights "$models/llama-noplan.gguf" | grep -q '^token_embd' && ok ||
  fail "--weights does not list the Linears' tensors"
# A tied model's lm_head is token_embd.weight (N = vocabulary, K = hidden): listed as a Linear
# and planned as the lm_head; there is no output.weight.
shapes --weights "$models/qwen2-tied.gguf" > "$tmp/tied-weights.txt" &&
  [ "$(head -1 "$tmp/tied-weights.txt")" = "$(printf 'token_embd.weight\tBF16\t1024\t896')" ] &&
  ! grep -q '^output\.weight' "$tmp/tied-weights.txt" && [ "$(wc -l < "$tmp/tied-weights.txt")" = 8 ] &&
  grep -qF "  # lm_head: tied to token_embd (no output.weight), packed from that matrix" "$tmp/qwen2-tied.yaml" &&
  grep -q "name: lm_head,   N: 1024,    K: 896,   M: 1}" "$tmp/qwen2-tied.yaml" &&
  grep -qF '{"name": "lm_head", "M": 1, "N": 1024, "K": 896, "weights": "bf16", "verdict": "kernel"' "$tmp/gen-qwen2-tied/manifest.json" && ok ||
  fail "qwen2-tied: token_embd.weight not listed, or not planned, as the lm_head: $(cat "$tmp/tied-weights.txt")"

# Tied: lm_head from token_embd, said in a comment; a Q8_0 output.weight is left out, and said.
shapes "$models/qwen3-tied.gguf" > "$tmp/tied.yaml" &&
  grep -qF "  # lm_head: tied to token_embd (no output.weight), packed from that matrix" "$tmp/tied.yaml" &&
  grep -q "name: lm_head,   N: 512,     K: 256,   M: 1}" "$tmp/tied.yaml" && ok ||
  fail "qwen3-tied: lm_head not listed from token_embd: $(cat "$tmp/tied.yaml")"
# A Q8_0 weight: listed with its format, beside the BF16 ones; a whole Q8_0 model, each Linear
# planned in Q8_0 by the generator.
shapes "$models/small-mixed.gguf" > "$tmp/mixed.yaml" &&
  grep -q "name: lm_head,   N: 512,     K: 256,   M: 1, weights: q8_0}" "$tmp/mixed.yaml" &&
  grep -q "name: down_proj, N: 256,     K: 512,   M: 1}" "$tmp/mixed.yaml" &&
  ! grep -q "Neither BF16 nor Q8_0" "$tmp/mixed.yaml" && ok ||
  fail "small-mixed: the Q8_0 lm_head is not listed as Q8_0: $(cat "$tmp/mixed.yaml")"
shapes --batch 1 --prefill 64 -o "$tmp/q8.yaml" "$models/llama-q8_0.gguf" &&
  [ "$(grep -c '^  - {name: .*, weights: q8_0}$' "$tmp/q8.yaml")" = 8 ] &&
  "$gen_bin" -o "$tmp/gen-q8" "$tmp/q8.yaml" > "$tmp/gen.log" 2>&1 &&
  [ "$(grep -c '"verdict": "kernel"' "$tmp/gen-q8/manifest.json")" -gt 0 ] &&
  ! grep -q '"verdict": "fallback"' "$tmp/gen-q8/manifest.json" &&
  grep -q '"weights": "q8_0"' "$tmp/gen-q8/manifest.json" && ok ||
  { fail "llama-q8_0: its 8 Linears are not listed in Q8_0 or not planned so:"
    cat "$tmp/q8.yaml" "$tmp/gen.log"; }

# Model names: quoted when not plain (the YAML reads back the same name), refused with a
# line break (it would end the comment lines), from --model as from general.name.
shapes --model 'a: b # "c" \ d' "$models/small-mixed.gguf" > "$tmp/quoted.yaml" &&
  [ "$("$python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["model"])' "$tmp/quoted.yaml")" = 'a: b # "c" \ d' ] &&
  "$gen_bin" -o "$tmp/gen-quoted" "$tmp/quoted.yaml" > "$tmp/gen.log" 2>&1 && ok ||
  fail "a quoted model name does not read back: $(grep model: "$tmp/quoted.yaml"; cat "$tmp/gen.log")"
expect 1 "general.name 'x\\nlayers: []' is not a name of 1 to 128 printable characters" "$models/small-badname.gguf"
shapes --model ok-name "$models/small-badname.gguf" > /dev/null && ok || fail "--model does not replace a bad general.name"
expect 1 "--model 'two\\nlines' is not a name" --model $'two\nlines' "$models/llama.gguf"

# Attention: the entry from the GGUF's head counts and key length, with the cache's type (f16
# unless --kv says), planned by the generator; the same model twice is one entry.
grep -qxF '  - {name: attn, head_dim: 128, q_heads: 16, kv_heads: 8, kv: f16, n_q: [1, 64]}' "$tmp/qwen3.yaml" &&
  shapes --kv bf16 --batch 1 -o "$tmp/kv.yaml" "$models/llama-gqa.gguf" &&
  grep -qxF '  - {name: attn, head_dim: 128, q_heads: 9, kv_heads: 3, kv: bf16, n_q: 1}' "$tmp/kv.yaml" &&
  grep -qF -- "--batch 1 --kv bf16 $models/llama-gqa.gguf" "$tmp/kv.yaml" &&
  "$gen_bin" -o "$tmp/gen-kv" "$tmp/kv.yaml" > "$tmp/gen.log" 2>&1 &&
  grep -qF '{"name": "attn_bf16_d128_h9_kv3_q1", "head_dim": 128, "q_heads": 9, "kv_heads": 3, "k": "bf16", "v": "bf16", "n_q": 1, "pairs": 3' "$tmp/gen-kv/manifest.json" &&
  [ "$(shapes "$models/qwen3.gguf" "$models/qwen3-tied.gguf" "$models/qwen3.gguf" | grep -c 'head_dim: 128, q_heads: 16, kv_heads: 8')" = 1 ] &&
  ok || { fail "attention: not the entry of the GGUF's heads:"; cat "$tmp/kv.yaml" "$tmp/gen.log"; }
expect 2 "--kv takes f16 or bf16, the KV cache's element type, not \"q8_0\"" --kv q8_0 "$models/llama.gguf"
# The shapes of attention the metadata can give (heads per layer, K and V heads apart, head
# dims the call does not take), on attention_shapes itself.
got=$("$python" - "$tool" <<'EOF'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("gguf_shapes", sys.argv[1])
spec = importlib.util.spec_from_loader("gguf_shapes", loader)
tool = importlib.util.module_from_spec(spec)
loader.exec_module(tool)
def meta(heads, kv_heads=None, head_dim=None, v_head_dim=None, hidden=1024):
    return {"heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "v_head_dim": v_head_dim,
            "hidden": hidden}
for m in (meta(16, 8, 128), meta(16), meta([8, 8, 0, 16], [2, 2, 0, 4], 64), meta(8, [2, 4, 2], 80),
          meta(8, 8, 100), meta(8, 8, 2048), meta(8, 8, 192, 128), meta(None), meta(6, 4, 64)):
    print(tool.attention_shapes(m))
EOF
)
diff <(echo "$got") - <<'EOF' && ok || fail "attention_shapes: $got"
([(128, 16, 8)], '')
([(64, 16, 16)], '')
([(64, 8, 2), (64, 16, 4)], '')
([(80, 8, 2), (80, 8, 4)], '')
([], 'head_dim 100 is not a multiple of 8 up to 1024, which gemm_rvv_attention takes')
([], 'head_dim 2048 is not a multiple of 8 up to 1024, which gemm_rvv_attention takes')
([], 'head_dim 192 of K and 128 of V differ, which gemm_rvv_attention does not take')
([], 'the GGUF gives no attention.head_count')
([], 'no layer has heads gemm_rvv_attention takes')
EOF

# Bad input.
printf 'GGUF' > "$tmp/magic-only.gguf"
head -c 3000 "$models/llama.gguf" > "$tmp/cut-header.gguf"
head -c -100 "$models/qwen3-tied.gguf" > "$tmp/cut-data.gguf"
expect 1 "README.md: not a GGUF file (it does not start with \"GGUF\")" README.md
expect 1 "$tmp/magic-only.gguf: a truncated or damaged GGUF file" "$tmp/magic-only.gguf"
expect 1 "$tmp/cut-header.gguf: a truncated or damaged GGUF file" "$tmp/cut-header.gguf"
expect 1 "$tmp/cut-data.gguf: a truncated or damaged GGUF file" "$tmp/cut-data.gguf"
expect 1 "$tmp/none.gguf: no such file" "$tmp/none.gguf"
expect 1 "$tmp: not a file" "$tmp"
expect 1 "no Linear has a 2-D BF16 or Q8_0 weight, so there is nothing for gemm_rvv to serve (its Linears' weights are F16)" "$models/llama-f16.gguf"
expect 2 "--batch takes increasing positive sizes" --batch 4,1 "$models/llama.gguf"
expect 2 "--batch takes increasing positive sizes" --batch 1,,4 "$models/llama.gguf"
expect 2 "--prefill takes increasing positive lengths" --prefill 0 "$models/llama.gguf"
expect 2 "unexpected argument \"--frobnicate\"" --frobnicate "$models/llama.gguf"
expect 2 "unexpected argument \"--batch\" (or its value is missing)" "$models/llama.gguf" --batch
expect 2 "no GGUF file given"

echo "keep me" > "$tmp/out.yaml"
expect 1 "no Linear has a 2-D BF16 or Q8_0 weight" -o "$tmp/out.yaml" "$models/llama-f16.gguf"
[ "$(cat "$tmp/out.yaml")" = "keep me" ] && [ ! -e "$tmp/out.yaml.tmp" ] && ok ||
  fail "-o overwrote a file or left a temporary one on bad input"
shapes -o "$tmp/out.yaml" "$models/llama.gguf" && grep -q "name: down_proj, N: 1024,    K: 2048,  M: 1}" "$tmp/out.yaml" &&
  ok || fail "-o did not write the shapes"

echo "gguf-shapes: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

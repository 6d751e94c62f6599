#!/usr/bin/env bash
# gemm-rvv-shapes on bad input: the exit status and message of each case, -o leaving an
# existing file as it was when the input is bad, the attention entry, and untrusted names (a
# config's "_name_or_path", the path) reading back through gemm-rvv-gen as they were, injecting
# nothing.
# Usage: tests/engine/check-shapes-tool.sh SHAPES_BIN GEN_BIN
set -u
bin=$1 gen=$2 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# expect STATUS MESSAGE ARG...: gemm-rvv-shapes ARGs exits with STATUS, saying MESSAGE on stderr.
expect() {
  local status=$1 message=$2 out rc
  shift 2
  out=$("$bin" "$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != "$status" ] || ! grep -qF -- "$message" <<<"$out"; then
    echo "FAILED: gemm-rvv-shapes $*: exit $rc (expected $status), said: $out"
    failed=$((failed + 1))
  fi
}

printf '{"architectures": ["GPT2LMHeadModel"], "hidden_size": 8}\n' > "$tmp/gpt2.json"
printf '{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,\n "num_hidden_layers": 1, "num_attention_heads": 6, "num_key_value_heads": 4, "vocab_size": 32}\n' > "$tmp/heads.json"
printf '{"architectures": ["LlamaForCausalLM"], "hidden_size": 64,,}\n' > "$tmp/syntax.json"
expect 1 "architecture \"GPT2LMHeadModel\" is not supported" "$tmp/gpt2.json"
expect 1 "\"num_attention_heads\" (6) must be a multiple of \"num_key_value_heads\" (4)" "$tmp/heads.json"
expect 1 "$tmp/syntax.json:1:59: string or '}' expected near ','" "$tmp/syntax.json"
expect 1 "unable to open $tmp/none.json" "$tmp/none.json"
expect 2 "--batch takes increasing positive sizes" --batch 4,1 models/llama.json
expect 2 "--prefill takes increasing positive lengths" --prefill 0 models/llama.json
expect 2 "unexpected argument \"--frobnicate\"" --frobnicate models/llama.json
expect 2 "no config.json given"
expect 2 "--kv takes f16 or bf16, the KV cache's element type" --kv q8_0 models/llama.json

# The attention entry: the config's heads and head dim, --kv's cache type (said in the command
# that regenerates the file), taken and planned by the generator; a head dim the call does not
# take is a comment instead, and the file still generates.
"$bin" --kv bf16 --batch 1,4 models/qwen2.5-0.5b.json > "$tmp/kv.yaml" &&
  grep -qxF '  - {name: attn, head_dim: 64, q_heads: 14, kv_heads: 2, kv: bf16, n_q: [1, 4]}' "$tmp/kv.yaml" &&
  grep -qF -- "--batch 1,4 --kv bf16 models/qwen2.5-0.5b.json" "$tmp/kv.yaml" &&
  "$gen" -o "$tmp/gen-kv" "$tmp/kv.yaml" > /dev/null &&
  grep -qF '"plan": "attn_bf16_d64_h14_kv2_q4", "reason": null}' "$tmp/gen-kv/manifest.json" ||
  { echo "FAILED: --kv bf16: not the attention entry: $(tail -3 "$tmp/kv.yaml")"; failed=$((failed + 1)); }
printf '{"architectures": ["LlamaForCausalLM"], "hidden_size": 48, "intermediate_size": 128,\n "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 32}\n' > "$tmp/d12.json"
"$bin" "$tmp/d12.json" > "$tmp/d12.yaml" && ! grep -q '^attention:' "$tmp/d12.yaml" &&
  [ "$(tail -1 "$tmp/d12.yaml")" = "# attention: head_dim 12 is not a multiple of 8 up to 1024, which gemm_rvv_attention takes" ] &&
  "$gen" -o "$tmp/gen-d12" "$tmp/d12.yaml" > /dev/null ||
  { echo "FAILED: head_dim 12: $(tail -2 "$tmp/d12.yaml")"; failed=$((failed + 1)); }

echo "keep me" > "$tmp/out.yaml"
expect 1 "is not supported" -o "$tmp/out.yaml" "$tmp/gpt2.json"
[ "$(cat "$tmp/out.yaml")" = "keep me" ] || { echo "FAILED: -o overwrote a file on bad input"; failed=$((failed + 1)); }
"$bin" -o "$tmp/out.yaml" models/llama.json && grep -q "N: 11008" "$tmp/out.yaml" ||
  { echo "FAILED: -o did not write the shapes"; failed=$((failed + 1)); }

# roundtrip NAME_JSON CONFIG_DIR: a config whose "_name_or_path" is the JSON string NAME_JSON,
# written to CONFIG_DIR/config.json; the shapes written from it must generate, with the model
# named exactly as given and the default gate (no key injected).
roundtrip() {
  local name=$1 dir=$2 got
  mkdir -p "$dir"
  printf '{"_name_or_path": %s, "architectures": ["LlamaForCausalLM"], "hidden_size": 64,\n "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 32}\n' \
    "$name" > "$dir/config.json"
  rm -rf "$tmp/gen"
  if ! "$bin" -o "$tmp/rt.yaml" "$dir" 2>"$tmp/rt.err" || ! "$gen" -o "$tmp/gen" "$tmp/rt.yaml" >/dev/null 2>>"$tmp/rt.err"; then
    echo "FAILED: _name_or_path $name: $(cat "$tmp/rt.err")"; failed=$((failed + 1)); return
  fi
  got=$(/usr/bin/python3 -c 'import json, sys
m = json.load(open(sys.argv[1])); want = json.loads(sys.argv[2]).rsplit("/", 1)[-1]
print("ok" if m["model"] == want and m["gate"]["max_m"] == 128 and m["target"]["vlen"] == 256 else "model %r, gate %r, vlen %r" % (m["model"], m["gate"], m["target"]["vlen"]))' \
    "$tmp/gen/manifest.json" "$name")
  [ "$got" = ok ] || { echo "FAILED: _name_or_path $name: $got"; failed=$((failed + 1)); }
}
roundtrip '"acme/tiny: v2 [test]"' "$tmp/m1"
roundtrip '"acme/x\ngate: {max_m: 1}\ntarget: {vlen: 128}"' "$tmp/m2"
roundtrip '"a\"b\\c # d\u0085e\u2028f\u2029g\ufeffh\u0007"' "$tmp/m3"
roundtrip '"- &x [*x]"' "$tmp/m4"
roundtrip '"plain"' "$tmp/dir with
gate: {max_m: 1}"
expect 2 "--model takes UTF-8 text" --model "$(printf 'bad\377')" models/llama.json

echo "gemm-rvv-shapes bad input: $failed failed"
[ "$failed" -eq 0 ]

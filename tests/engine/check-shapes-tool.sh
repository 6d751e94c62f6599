#!/usr/bin/env bash
# gemm-rvv-shapes on bad input: the exit status and message of each case, and -o leaving an
# existing file as it was when the input is bad.
# Usage: tests/engine/check-shapes-tool.sh SHAPES_BIN
set -u
bin=$1 tmp=$(mktemp -d)
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

echo "keep me" > "$tmp/out.yaml"
expect 1 "is not supported" -o "$tmp/out.yaml" "$tmp/gpt2.json"
[ "$(cat "$tmp/out.yaml")" = "keep me" ] || { echo "FAILED: -o overwrote a file on bad input"; failed=$((failed + 1)); }
"$bin" -o "$tmp/out.yaml" models/llama.json && grep -q "N: 11008" "$tmp/out.yaml" ||
  { echo "FAILED: -o did not write the shapes"; failed=$((failed + 1)); }

echo "gemm-rvv-shapes bad input: $failed failed"
[ "$failed" -eq 0 ]

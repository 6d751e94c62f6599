#!/usr/bin/env bash
# Bad model folders (made by make_models.py from one small valid model) must each stop the
# engine with exit status 1 and a message naming what is wrong, never a crash; the valid model
# they come from must run, so each failure is the defect's doing.
# Usage: tests/engine/check-errors.sh ENGINE BROKEN_DIR
set -u
engine=$1 dir=$2 run="$(dirname "$0")/../../tools/riscv64-run"
failed=0

# expect CASE STATUS MESSAGE [ARG]...: the engine on DIR/CASE with ARGs (default: a prompt
# and two steps) exits with STATUS and says MESSAGE.
expect() {
  local case=$1 status=$2 message=$3 out rc
  shift 3
  [ $# -gt 0 ] || set -- --prompt 1,2,3 --steps 2
  out=$("$run" --cpu vlen=256 "$engine" "$dir/$case" "$@" 2>&1)
  rc=$?
  if [ "$rc" != "$status" ]; then
    echo "FAILED: $case: exit status $rc, expected $status. It said:"; echo "$out" | sed 's/^/  /'
    failed=$((failed + 1))
  elif ! grep -qF -- "$message" <<<"$out"; then
    echo "FAILED: $case: the message lacks \"$message\". It said:"; echo "$out" | sed 's/^/  /'
    failed=$((failed + 1))
  else
    echo "ok: $case: $(grep -F -- "$message" <<<"$out" | head -1)"
  fi
}

expect small 0 "tokens: "
expect missing-tensor 1 "error: tensor model.layers.0.mlp.down_proj.weight is missing from"
expect wrong-dtype 1 "model.layers.0.self_attn.q_proj.weight in $dir/wrong-dtype/model.safetensors: dtype I32 is not supported"
expect wrong-shape 1 "error: tensor model.layers.0.self_attn.k_proj.weight: shape [64, 64], but config.json gives [32, 64]"
expect truncated 1 "error: tensor lm_head.weight: its data"
expect truncated 1 "the file is truncated"
expect truncated-header 1 "model.safetensors: truncated: the header says"
expect unknown-rope 1 "config.json: rope_scaling type \"yarn\" is not supported"
expect bad-config 1 "config.json: \"hidden_size\" must be a positive integer below 2^31, got \"64\""
expect no-such-folder 1 "no-such-folder/config.json"
expect small 2 "--steps takes" --prompt 1,2,3
expect small 1 "prompt token 32 is outside the vocabulary of 32" --prompt 1,32 --steps 2
echo "bad model folders: $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Instructions per prompt token and per decoded token of the tiny Llama (forward.py), patched
# and unpatched, counted by the instruction counter (measure/count/insn_count.c, all=on) under
# Debian 12's QEMU 7.2 at VLEN 256, one thread. Each figure is the difference of two runs that
# differ in one count only (the import, the model's construction and the warm-up cancel).
#   PYTHONPATH=PREFIX/lib/python TORCH_ROOT=DIR measure/torch/count.sh PLUGIN OUT.csv
set -euo pipefail

plugin=$(realpath "$1") out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
P=4 D=16   # prompts and decoded tokens in the longer runs

count() {  # count MODE PROMPTS DECODES: the instructions of one run
  local f="$work/$1-$2-$3.txt"
  GEMM_RVV_THREADS=1 qemu-riscv64 -L "$TORCH_ROOT" -cpu rv64,v=true,vext_spec=v1.0,vlen=256 \
    -U PYTHONDONTWRITEBYTECODE -plugin "$plugin,all=on,out=$f" "$TORCH_ROOT/usr/bin/python3" \
    "$here/forward.py" "$1" "$2" "$3" > /dev/null
  sed -n 's/^insns=\([0-9]*\) .*/\1/p' "$f"
}
echo "mode,per_prompt_token,per_decoded_token" > "$out"
for mode in unpatched patched; do
  base=$(count "$mode" 0 0) prompt=$(count "$mode" "$P" 0) decode=$(count "$mode" 0 "$D")
  echo "$mode,$(( (prompt - base) / (P * 8) )),$(( (decode - base) / D ))" >> "$out"
done
cat "$out"

#!/usr/bin/env bash
# The engine against the PyTorch reference, for each architecture in each configuration:
#   vlen=N          under QEMU at that vector length (kernels serve the shapes that have them),
#                   the KV cache in F16 (the engine's default);
#   vlen=N:disable  the same with GEMM_RVV_DISABLE=1 (every call on the scalar fallback);
#   vlen=N:bf16     the KV cache in BF16 (--kv-cache bf16); with :disable too, in either order.
# Each run must agree with the reference (tests/engine/reference.py), and all runs of one
# architecture and cache type must give the same tokens and bit-identical logits (the library
# promises the same bits from kernels and fallback at any VLEN). A reference given the wrong RoPE base must
# disagree with the first run: the comparison is seen able to fail. Runs with kernels must
# show kernel calls in the counter table; runs with GEMM_RVV_DISABLE=1 must show none. The bad
# model folders are checked first (check-errors.sh).
# Environment: PYTHON, PROMPT (ids, commas), STEPS, LOG_DIR, QEMU_SYSROOT (tools/riscv64-run).
# Usage: tests/engine/check-engine.sh ENGINE MODELS_DIR "ARCH..." "CONFIG..."
set -u
engine=$1 models=$2 archs=$3 configs=$4 here=$(dirname "$0")
LOG_DIR=${LOG_DIR:-build/engine-test/logs}
mkdir -p "$LOG_DIR"
failures=()

"$here/check-errors.sh" "$engine" "$models/broken" || failures+=("bad model folders")

# kernel_calls LOG: the sum of the counter table's kernel column.
kernel_calls() {
  awk 'f && NF == 6 { s += $4 } /^ *N +K +M<=/ { f = 1 } END { print s + 0 }' "$1"
}

for arch in $archs; do
  declare -A first=() first_tokens=()
  for cfg in $configs; do
    vlen=${cfg%%:*} vlen=${vlen#vlen=} tag="$arch@${cfg//[=:]/_}"
    log="$LOG_DIR/$tag.log" logits="$LOG_DIR/$tag.logits"
    echo "=== $arch on $cfg ==="
    start=$(date +%s)
    disable=0 cache=f16
    case ":${cfg#*:}:" in *:disable:*) disable=1 ;; esac
    case ":${cfg#*:}:" in *:bf16:*) cache=bf16 ;; esac
    GEMM_RVV_DISABLE=$disable "$here/../../tools/riscv64-run" --cpu "vlen=$vlen" "$engine" "$models/$arch" \
      --prompt "$PROMPT" --steps "$STEPS" --kv-cache $cache --logits "$logits" > "$log" 2> "$log.err"
    rc=$?
    cat "$log.err" "$log"
    echo "($(( $(date +%s) - start )) s)"
    if [ "$rc" != 0 ]; then failures+=("$tag: exit status $rc"); continue; fi
    tokens=$(sed -n 's/^tokens: //p' "$log" | tr ' ' ',')
    "$PYTHON" "$here/reference.py" "$models/$arch" --prompt "$PROMPT" --tokens "$tokens" \
      --logits "$logits" --label "$tag" --kv-cache $cache || failures+=("$tag: disagrees with the reference")
    calls=$(kernel_calls "$log")
    if [ "$disable" = 1 ] && [ "$calls" != 0 ]; then failures+=("$tag: $calls kernel calls with GEMM_RVV_DISABLE=1"); fi
    if [ "$disable" = 0 ] && [ "$calls" = 0 ]; then failures+=("$tag: no Linear ran on a kernel"); fi
    if [ -z "${first[$cache]:-}" ]; then
      first[$cache]=$tag first_tokens[$cache]=$tokens
      # The comparison must be able to fail: a reference with another RoPE base must disagree.
      if "$PYTHON" "$here/reference.py" "$models/$arch" --prompt "$PROMPT" --tokens "$tokens" \
           --logits "$logits" --label "$tag, reference with rope_theta 10000" --kv-cache $cache \
           --override rope_theta=10000 > "$log.wrong"; then
        failures+=("$tag: a reference with the wrong rope_theta agreed too")
      else
        echo "$tag: a reference with rope_theta 10000 disagrees, as it must: $(grep -m1 FAILED "$log.wrong")"
      fi
    elif [ "$tokens" != "${first_tokens[$cache]}" ] || ! cmp -s "$logits" "$LOG_DIR/${first[$cache]}.logits"; then
      failures+=("$tag: tokens or logits differ from ${first[$cache]}")
    else
      echo "$tag: tokens and logits bit-identical to ${first[$cache]}"
    fi
  done
done

echo
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "engine checks: ${#failures[@]} failed"
[ ${#failures[@]} -eq 0 ]

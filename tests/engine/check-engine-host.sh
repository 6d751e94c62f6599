#!/usr/bin/env bash
# The engine built for the host under AddressSanitizer + UBSan (make test-engine-host): model
# folders made here that are bad in ways a reader must survive (a FIFO where a file should be,
# a header larger than the format allows, a missing tensor) and bad arguments, each ending with
# its exit status and message, in bounded time, without a leak.
# Usage: tests/engine/check-engine-host.sh ENGINE
set -u
engine=$1 here=$(dirname "$0") tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1

# expect STATUS MESSAGE ARG...: the engine with ARGs exits with STATUS within 20 s, says
# MESSAGE and reports no leak.
expect() {
  local status=$1 message=$2 out rc
  shift 2
  out=$(timeout 20 "$engine" "$@" 2>&1)
  rc=$?
  if [ "$rc" != "$status" ] || ! grep -qF -- "$message" <<<"$out" || grep -q Sanitizer <<<"$out"; then
    echo "FAILED: gemm-rvv-engine $*: exit $rc (expected $status, 124 = timed out), said:"
    echo "$out" | sed 's/^/  /' | head -20
    failed=$((failed + 1))
  else
    echo "ok: $(grep -F -- "$message" <<<"$out" | head -1)"
  fi
}

# folder NAME: a model folder with the tiny Llama's config.json.
folder() { mkdir -p "$tmp/$1" && cp "$here/models/llama.json" "$tmp/$1/config.json"; }

# safetensors FILE HEADER_LENGTH HEADER [SIZE]: the 8-byte length, the header, then the file
# grown (sparse) to SIZE bytes.
safetensors() {
  python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<Q", int(sys.argv[1])) + sys.argv[2].encode())' \
    "$2" "$3" > "$1"
  [ $# -lt 4 ] || truncate -s "$4" "$1"
}

folder fifo && mkfifo "$tmp/fifo/model.safetensors"
expect 1 "fifo/model.safetensors: not a regular file" "$tmp/fifo" --prompt 1,2 --steps 2
folder fifo-config && rm "$tmp/fifo-config/config.json" && mkfifo "$tmp/fifo-config/config.json"
expect 1 "fifo-config/config.json: not a regular file" "$tmp/fifo-config" --prompt 1 --steps 1
folder fifo-index && mkfifo "$tmp/fifo-index/model.safetensors.index.json"
expect 1 "model.safetensors.index.json: not a regular file" "$tmp/fifo-index" --prompt 1 --steps 1
folder huge-header && safetensors "$tmp/huge-header/model.safetensors" 100000001 '{}' 100000100
expect 1 "the header says 100000001 bytes, more than the 100000000 the safetensors format allows" \
  "$tmp/huge-header" --prompt 1 --steps 1
folder empty-header && safetensors "$tmp/empty-header/model.safetensors" 2 '{}'
expect 1 "is missing from $tmp/empty-header/model.safetensors" "$tmp/empty-header" --prompt 1 --steps 1

# The prompt is freed on every way out.
expect 2 "--steps takes" "$tmp/empty-header" --prompt 1,2,3 --steps 0
expect 2 "--prompt takes token ids" "$tmp/empty-header" --prompt 1,x --steps 1
expect 2 "--kv-cache takes f16 or bf16" "$tmp/empty-header" --prompt 1 --steps 1 --kv-cache q8_0
expect 1 "prompt token 2000000 is outside the vocabulary" "$tmp/empty-header" --prompt 1,2000000 --steps 1
expect 1 "unable to open $tmp/none/config.json" "$tmp/none" --prompt 1 --steps 1

echo "engine on the host: $failed failed"
[ "$failed" -eq 0 ]

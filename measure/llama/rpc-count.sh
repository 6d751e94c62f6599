#!/usr/bin/env bash
# A ggml-rpc-server's work per token, -d CPU against -d GEMM_RVV: the server runs under Debian
# 12's QEMU 7.2 (VLEN 256, one thread) with measure/count/insn_count.c counting every
# instruction it executes; its client, Debian's llama-bench --rpc 127.0.0.1:PORT -ngl 99 (the
# whole model on the server) under sid's QEMU, runs under strace, which sums the bytes of its
# sendto/recvfrom calls (every socket it has is the RPC one). Per token, as
# measure/llama/llama-count.sh does: a run with two repetitions minus one with one, over the
# repetition's TOKENS tokens (pp: a prompt of TOKENS tokens in one batch, per prompt token;
# tg: TOKENS tokens decoded one by one). Each run has a fresh server. Peak memory: the
# server's VmHWM (the QEMU process: QEMU and its translated code included) after the run with
# two repetitions, and its VmRSS before any client.
#
# Usage: measure/llama/rpc-count.sh COUNT_PLUGIN SHIMS GGML_ROOT MODEL OUT_DIR GGML_PLUGIN
#   SHIMS: the riscv64 .so files to preload into the server, colon-separated
#   (measure/llama/hwprobe_shim.c: ggml loads its RVV CPU variant; term_exit_shim.c: SIGTERM
#   ends it with exit, so the counts are written).
# Environment: QEMU (qemu-riscv64 7.2), SID_QEMU (the client's), TOKENS (16), PORT (the
# server's, on 127.0.0.1), DEVICES ("CPU GEMM_RVV").
# Writes OUT_DIR/rpc-count.csv and prints the table.
set -euo pipefail
count_plugin=$1 shims=$2 root=$3 model=$4 out=$5 ggml_plugin=$6
QEMU=${QEMU:-qemu-riscv64}
: "${SID_QEMU:?}"
# the server's port below Linux's ephemeral ports (32768 on), which connections take
TOKENS=${TOKENS:-16} PORT=${PORT:-$((20000 + ($$ * 11) % 12000))}
server_bin=$root/usr/libexec/riscv64-linux-gnu/llama/bin/ggml-rpc-server
mkdir -p "$out"
server=""
trap '[ -z "$server" ] || kill -9 "$server" 2>/dev/null' EXIT
listening() { ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q .; }
while listening; do PORT=$((PORT + 1)); done

# run DEVICE TAG BENCH_ARGS...: a counted server, one llama-bench on it; prints
# "insns vwork_eighths bytes hwm_kib start_rss_kib".
run() {
  local dev=$1 tag=$2 env_args=()
  shift 2
  [ "$dev" = GEMM_RVV ] && env_args=(-E GGML_BACKEND_PATH="$(realpath "$ggml_plugin")" -E GEMM_RVV_THREADS=1)
  rm -f "$out/$tag.count"
  # SIGPIPE ignored: ggml-rpc-server dies of it when a client leaves at the wrong moment.
  (trap '' PIPE; exec "$QEMU" -cpu rv64,v=true,vlen=256 -E LD_PRELOAD="$shims" "${env_args[@]}" \
    -plugin "$count_plugin,all=on,out=$out/$tag.count" -L "$root" "$server_bin" \
    -H 127.0.0.1 -p "$PORT" -d "$dev" -t 1) > "$out/$tag.server.log" 2>&1 &
  server=$!
  for _ in $(seq 300); do listening && break; sleep 0.2; done
  listening || { echo "error: the server does not listen ($out/$tag.server.log)" >&2; exit 1; }
  local rss0 hwm
  rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$server/status")
  timeout -s KILL 1200 strace -f -qq -e trace=sendto,recvfrom -e signal=none -o "$out/$tag.strace" \
    "$SID_QEMU" -cpu rv64,v=true,vlen=256 -L "$root" "$root/usr/bin/llama-bench" -m "$model" \
    --rpc "127.0.0.1:$PORT" -ngl 99 -t 1 -o csv "$@" > "$out/$tag.log" 2>&1 ||
    { echo "error: llama-bench failed ($out/$tag.log):" >&2; tail -5 "$out/$tag.log" >&2; exit 1; }
  hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$server/status")
  kill -TERM "$server"
  for _ in $(seq 100); do [ -s "$out/$tag.count" ] && break; sleep 0.2; done
  wait "$server" 2>/dev/null || true
  server=""
  [ -s "$out/$tag.count" ] || { echo "error: no counts from the server ($out/$tag.server.log)" >&2; exit 1; }
  local c bytes
  c=$(tr '\n' ' ' < "$out/$tag.count")
  bytes=$(awk '/(sendto|recvfrom)\(/ { n = $NF; if (n ~ /^[0-9]+$/) s += n } END { print s + 0 }' "$out/$tag.strace")
  echo "$(sed -n 's/.*\binsns=\([0-9]*\).*/\1/p' <<<"$c") $(sed -n 's/.*\bvwork_eighths=\([0-9]*\).*/\1/p' <<<"$c") $bytes $hwm $rss0"
}

echo "device,test,tokens,server_insns_per_token,server_vwork_per_token,socket_bytes_per_token,server_peak_kib,server_idle_kib" \
  > "$out/rpc-count.csv"
read -r -a devices <<< "${DEVICES:-CPU GEMM_RVV}"
for dev in "${devices[@]}"; do
  for test in pp tg; do
    if [ "$test" = pp ]; then sizes=(-p "$TOKENS" -n 0); else sizes=(-p 0 -n "$TOKENS"); fi
    read -r i1 v1 b1 _ _ < <(run "$dev" "$dev-$test-r1" "${sizes[@]}" -r 1)
    read -r i2 v2 b2 h2 r0 < <(run "$dev" "$dev-$test-r2" "${sizes[@]}" -r 2)
    awk -v d="$dev" -v t="$test" -v n="$TOKENS" -v i1="$i1" -v i2="$i2" -v v1="$v1" -v v2="$v2" \
        -v b1="$b1" -v b2="$b2" -v h="$h2" -v r="$r0" 'BEGIN {
      printf "%s,%s,%d,%.0f,%.0f,%.0f,%d,%d\n", d, t, n, (i2 - i1) / n, (v2 - v1) / 8 / n, (b2 - b1) / n, h, r }' \
      >> "$out/rpc-count.csv"
  done
done
column -s, -t "$out/rpc-count.csv"
echo "($model, the whole model on one server; $(du -k "$model" | cut -f1) KiB of GGUF)"

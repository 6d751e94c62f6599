#!/usr/bin/env bash
# llama.cpp's RPC backend with the plugin (issue 33): two sid ggml-rpc-server processes under
# QEMU with `-d GEMM_RVV` on 127.0.0.1, and Debian's llama-perplexity as their client
# (`--rpc P1,P2 -ngl 99`), on the test model MODELS/CASE.gguf. Checks, in this order:
#   1. local runs without the plugin (no --rpc): the reference perplexities, one with ggml's
#      unfused attention (-fa off) for the clients whose attention the plugin computes, and
#      one as the clients run (-fa auto: flash attention) for the mixed server's, whose CPU
#      device computes it: ggml's CPU flash attention sums V in FP16, the plugin in FP32, and
#      at CTX 32 (16 positions scored) that alone moves the perplexity of the GQA Llama
#      1.8e-3 (1662.30 against 1659.33 unfused; the plugin 1659.44);
#   2. a client killed while it loads the model (it kills itself once DIE_AFTER_SENT bytes
#      of the weights have gone to the servers: DIE_SHIM, preloaded), and
#   3. a client killed during its first graph (the servers stopped a moment into its
#      perplexity pass, so that it cannot end before the kill; then resumed):
#      after each both servers are still running and take the next client;
#   4. a client that runs to the end: its perplexity equals the unfused reference (relative
#      difference at most MAX_REL_DIFF), and the servers' logs together name, for each BF16 Linear whose
#      (N, K) the plugin's library has plans for (LIB_MANIFEST), the plan that served it;
#   4b. attention: llama.cpp kept flash attention on for client 4 (-fa auto: the layers are on
#      the RPC devices, the op too), and the servers' logs name the FLASH_ATTN_EXT the plugin
#      computed; at a context of FA_CTX, for each -fa of FA_MODES, a client over both servers
#      and a local run without the plugin give the same perplexity (MAX_REL_DIFF), and with
#      -fa off the servers' logs name llama.cpp's unfused chain the plugin computed;
#   5. with SECOND=1: a second client that runs to the end on the same servers: the same perplexity as the
#      first, to the last digit, and the same logits (llama-perplexity's --kl-divergence-base
#      file of each, compared byte for byte);
#   6. the servers are still running, and each one's resident memory once the last client
#      has gone is within RSS_SLACK_MIB of what it was after the one killed in a graph
#      (QEMU's own translated code grows it on the first graph: that is not compared);
#   7. with MIXED=1: a third server with both devices, `-d CPU,GEMM_RVV`, and a client over
#      its two (`-ts 1,1`: the block on its CPU device, the lm_head on GEMM_RVV): its
#      perplexity equals the flash-attention reference (MAX_REL_DIFF), GEMM_RVV served the
#      lm_head, and the server still runs after it.
# Every process it starts is killed when it ends (trap), and every wait is bounded.
#
# Usage: tests/llama/check-rpc.sh MODELS CASE
# Environment:
#   QEMU, QEMU_CPU    sid's qemu-riscv64 and its -cpu value; GGML_ROOT: sid's riscv64 root (-L)
#   PLUGIN            the plugin's .so (the servers' GGML_BACKEND_PATH)
#   LIB_MANIFEST      manifest.json of the library the plugin was built with (its plans)
#   GGUF_SHAPES       the command that runs tools/gguf-shapes (it lists the model's weights)
#   CTX, THREADS      llama-perplexity's -c (also -b) and the servers' and client's -t
#   PORT              the first server's port (the second's is PORT + 1); default: one from
#                     this process's id in 20000-31999 (below Linux's ephemeral ports, which
#                     the clients' connections take) that no socket uses
#   RUN_TIMEOUT       seconds any one client may run (default 600)
#   KILL_CASE         the model of the clients killed (2, 3): MODELS/KILL_CASE.gguf, one
#                     of more than DIE_AFTER_SENT bytes of weights (default CASE)
#   DIE_SHIM          tests/llama/die_after_sent.c built for the target, preloaded into client 2
#   DIE_AFTER_SENT    the bytes client 2 sends before it dies (default 4 MiB)
#   FA_MODES, FA_CTX  case 4b's -fa values (default "auto on off"; empty: none) and -c
#                     (default 256)
#   MIXED             1: also case 7 (default 0)
#   SECOND            1: also case 5 (default 1)
#   LOG_DIR           where the logs go
set -u
[ $# -eq 2 ] || { echo "usage: $0 MODELS CASE" >&2; exit 2; }
models=$1 case=$2
: "${QEMU:?}" "${GGML_ROOT:?}" "${PLUGIN:?}" "${LIB_MANIFEST:?}" "${GGUF_SHAPES:?}" "${DIE_SHIM:?}"
DIE_AFTER_SENT=${DIE_AFTER_SENT:-4194304}
QEMU_CPU=${QEMU_CPU:-rv64,v=true,vlen=256}
FA_MODES=${FA_MODES-auto on off} FA_CTX=${FA_CTX:-256}
CTX=${CTX:-64} THREADS=${THREADS:-1} RUN_TIMEOUT=${RUN_TIMEOUT:-600} MIXED=${MIXED:-0} SECOND=${SECOND:-1}
MAX_REL_DIFF=${MAX_REL_DIFF:-1e-3} RSS_SLACK_MIB=${RSS_SLACK_MIB:-16}
LOG_DIR=${LOG_DIR:-build/llama/logs-rpc}
SERVER=$GGML_ROOT/usr/libexec/riscv64-linux-gnu/llama/bin/ggml-rpc-server
model=$models/$case.gguf
kill_model=$models/${KILL_CASE:-$case}.gguf
mkdir -p "$LOG_DIR"
rm -f "$LOG_DIR"/*.log
failed=0 passed=0
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
ok() { passed=$((passed + 1)); }
for f in "$PLUGIN" "$LIB_MANIFEST" "$model" "$kill_model" "$SERVER" "$DIE_SHIM"; do
  [ -f "$f" ] || { echo "error: no $f" >&2; exit 2; }
done

# Every process started here, killed at the end whatever happens; each one also has a
# watchdog that kills it after its time limit (should this script itself be killed).
pids=() watchdogs=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${watchdogs[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
born() { cut -d' ' -f22 "/proc/$1/stat" 2>/dev/null; }
# start LIMIT LOG CMD...: CMD in the background (its own process: $pid), killed after LIMIT s.
start() {
  local limit=$1 log=$2 b; shift 2
  "$@" > "$log" 2>&1 &
  pid=$!
  pids+=("$pid")
  b=$(born "$pid")
  (
    sleep "$limit" & s=$!
    trap 'kill $s 2>/dev/null; wait $s; exit 0' TERM
    wait "$s"
    [ -n "$b" ] && [ "$(born "$pid")" = "$b" ] && kill -9 "$pid"
  ) > /dev/null 2>&1 &
  watchdogs+=($!)
}

listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
# A port a server can bind: no socket on it, listening or not (a connection's end in
# TIME_WAIT there makes the bind fail).
taken() { ss -Htan "sport = :$1" 2>/dev/null | grep -q .; }
if [ -z "${PORT:-}" ]; then
  PORT=$((20000 + ($$ * 7) % 12000))
  while taken "$PORT" || taken $((PORT + 1)) || taken $((PORT + 2)); do PORT=$((PORT + 3)); done
fi
ports=("$PORT" $((PORT + 1)))
rpc=127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}

# client LOG [ARGS...]: llama-perplexity on the model (client_model's) in the background, with
# QEMU's options client_qemu (-E VAR=VALUE: the client's environment); sets $client.
client_model=$model client_qemu=()
client() {
  local log=$1; shift
  start "$RUN_TIMEOUT" "$log" "$QEMU" "${client_qemu[@]}" -cpu "$QEMU_CPU" -L "$GGML_ROOT" \
    "$GGML_ROOT/usr/bin/llama-perplexity" -m "$client_model" -f "$models/text.txt" -c "$CTX" -b "$CTX" \
    --chunks 1 -t "$THREADS" -v "$@"
  client=$pid
}
ppl() { sed -n 's/.*Final estimate: PPL = \([0-9.e+-]*\) .*/\1/p' "$1"; }
# wait_for LOG REGEX SECONDS PID: until LOG has a line matching REGEX (0), PID ends or the
# time is up (1).
wait_for() {
  local end=$((SECONDS + $3))
  while [ "$SECONDS" -lt "$end" ]; do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || { grep -qE "$2" "$1" 2>/dev/null; return; }
    sleep 0.1
  done
  return 1
}
# settled: until each server has closed every connection it accepted (bounded).
settled() {
  local i end=$((SECONDS + RUN_TIMEOUT))
  for i in 0 1; do
    while [ "$SECONDS" -lt "$end" ] &&
          [ "$(grep -c 'Client connection closed' "$LOG_DIR/server$i.log")" -lt \
            "$(grep -c 'Accepted client connection' "$LOG_DIR/server$i.log")" ]; do
      sleep 0.5
    done
  done
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
servers_up() {
  local i bad=0
  for i in 0 1; do
    kill -0 "${server[$i]}" 2>/dev/null && continue
    wait "${server[$i]}"
    fail "$1: the server on port ${ports[$i]} is gone (exit status $?):"
    tail -5 "$LOG_DIR/server$i.log"; bad=1
  done
  [ "$bad" = 0 ] && ok
  return "$bad"
}
# start_server INDEX PORT DEVICES: a server with the plugin on 127.0.0.1:PORT serving DEVICES
# (-d), its log $LOG_DIR/serverINDEX.log; sets server[INDEX] and waits until it listens.
#
# ggml-rpc-server 0.27 writes to its sockets without MSG_NOSIGNAL and leaves SIGPIPE as it
# finds it: a client killed while the server is busy leaves connections queued, the server
# answers one after the client is gone and the signal kills it (exit status 141). Started with
# SIGPIPE ignored (as systemd starts services), it gets EPIPE and serves the next client; QEMU
# gives the program the dispositions it was started with.
ignoring_sigpipe() { trap '' PIPE; exec "$@"; }
start_server() {
  local i=$1 port=$2 devices=$3 end
  start $((4 * RUN_TIMEOUT)) "$LOG_DIR/server$i.log" ignoring_sigpipe env GGML_BACKEND_PATH="$PLUGIN" "$QEMU" \
    -cpu "$QEMU_CPU" -L "$GGML_ROOT" "$SERVER" -H 127.0.0.1 -p "$port" -d "$devices" \
    -t "$THREADS"
  server[i]=$pid
  end=$((SECONDS + 60))
  until listening "$port" || [ "$SECONDS" -ge "$end" ] || ! kill -0 "${server[$i]}" 2>/dev/null; do
    sleep 0.2
  done
  listening "$port" || { fail "the server on port $port (-d $devices) does not listen ($LOG_DIR/server$i.log):"; tail -5 "$LOG_DIR/server$i.log"; exit 1; }
}
# rel_diff A B: |A - B| / B; within MAX_REL_DIFF A B: whether it is at most MAX_REL_DIFF.
rel_diff() { awk -v a="$1" -v b="$2" 'BEGIN { d = (a - b) / b; printf "%.2e", d < 0 ? -d : d }'; }
within() { awk -v r="$1" -v m="$MAX_REL_DIFF" 'BEGIN { exit !(r <= m) }'; }

# 1. The references: the model on the client's CPU, no plugin, no servers; attention unfused
# (the plugin's precision) and as the clients run it (flash attention, ggml's on a CPU device).
client "$LOG_DIR/local-unfused.log" -fa off
wait "$client"
ref_unfused=$(ppl "$LOG_DIR/local-unfused.log")
client "$LOG_DIR/local.log"
wait "$client"
ref=$(ppl "$LOG_DIR/local.log")
for log in local-unfused local; do
  [ -n "$(ppl "$LOG_DIR/$log.log")" ] ||
    { fail "no perplexity from the local run ($LOG_DIR/$log.log)"; tail -5 "$LOG_DIR/$log.log"; exit 1; }
done
echo "$case: perplexity $ref_unfused on the client's CPU alone with attention unfused, $ref with flash attention"

# The two servers, with the plugin, on 127.0.0.1 only.
server=()
for i in 0 1; do start_server "$i" "${ports[$i]}" GEMM_RVV; done
rss0=("$(rss_kib "${server[0]}")" "$(rss_kib "${server[1]}")")
echo "$case: two servers -d GEMM_RVV on $rpc (resident: ${rss0[0]} and ${rss0[1]} KiB)"

# 2. A client killed while loading: it kills itself (SIGKILL) once DIE_AFTER_SENT bytes have
# gone through send(), part of the way through the weights (llama.cpp first sizes the model
# with load_mode = none, then loads it: "model buffer size" lines with the servers' shares,
# then the weights cross). The kill landed if its log has those lines and no context after.
client_model=$kill_model
client_qemu=(-E "LD_PRELOAD=$DIE_SHIM" -E "DIE_AFTER_SENT=$DIE_AFTER_SENT")
client "$LOG_DIR/killed-loading.log" --rpc "$rpc" -ngl 99 -ts 1,1
client_qemu=()
wait "$client" 2>/dev/null
status=$?
loaded=$(sed -n '/load_mode = mmap/,$p' "$LOG_DIR/killed-loading.log")
if [ "$status" = 137 ] && grep -qE 'RPC[0-9]\[.*model buffer size = +[0-9]*[1-9]' <<< "$loaded" &&
   ! grep -q 'llama_context: constructing' <<< "$loaded"; then
  echo "$case: a client killed while loading the weights onto the servers (after $DIE_AFTER_SENT bytes)"; ok
else
  fail "the client to kill while loading did not die there (exit $status; $LOG_DIR/killed-loading.log)"
fi
settled
servers_up "after a client killed while loading"
rss1=("$(rss_kib "${server[0]}")" "$(rss_kib "${server[1]}")")

# 3. A client killed during a graph: a moment into its perplexity pass (the graph has gone
# to the servers; the pass takes seconds) the servers are stopped, so that the client cannot
# get its results before the kill, then resumed once it is gone.
client "$LOG_DIR/killed-graph.log" --rpc "$rpc" -ngl 99 -ts 1,1
if wait_for "$LOG_DIR/killed-graph.log" 'perplexity: calculating perplexity' 300 "$client"; then
  sleep 0.3
  kill -STOP "${server[0]}" "${server[1]}"
  if kill -0 "$client" 2>/dev/null && [ -z "$(ppl "$LOG_DIR/killed-graph.log")" ]; then
    kill -9 "$client"; wait "$client" 2>/dev/null
    kill -CONT "${server[0]}" "${server[1]}"
    echo "$case: a client killed during its first graph"
  else
    kill -CONT "${server[0]}" "${server[1]}"
    wait "$client" 2>/dev/null
    fail "the client to kill during a graph ended first ($LOG_DIR/killed-graph.log)"
  fi
else
  kill -9 "$client" 2>/dev/null; wait "$client" 2>/dev/null
  fail "the client to kill during a graph never started computing ($LOG_DIR/killed-graph.log)"
fi
sleep 1
servers_up "after a client killed during a graph"
# A server works on a graph it was given until its end, then notices the client is gone.
settled
rss2=("$(rss_kib "${server[0]}")" "$(rss_kib "${server[1]}")")

client_model=$model
# 4. The next client runs to the end: the same perplexity, every planned BF16 Linear served.
# Its logits (the log-probabilities llama-perplexity saves for --kl-divergence) go to a file.
rm -f "$LOG_DIR"/rpc*.logits
client "$LOG_DIR/rpc.log" --rpc "$rpc" -ngl 99 -ts 1,1 --kl-divergence-base "$LOG_DIR/rpc.logits"
start=$SECONDS
wait "$client"
with=$(ppl "$LOG_DIR/rpc.log")
if [ -z "$with" ]; then
  fail "no perplexity over RPC ($LOG_DIR/rpc.log):"; tail -5 "$LOG_DIR/rpc.log"
else
  rel=$(rel_diff "$with" "$ref_unfused")
  echo "$case: perplexity $with over RPC with two GEMM_RVV servers ($((SECONDS - start)) s; relative difference $rel to the unfused reference)"
  if within "$rel"; then ok; else
    fail "the perplexities differ by $rel, more than $MAX_REL_DIFF"
  fi
fi
grep -E 'RPC[0-9]\[.*model buffer size' "$LOG_DIR/rpc.log" | sed 's/^[0-9.]* . /  client: /'

planned=$(sed -n 's/.*"name": "bf16_[^"]*", "N": \([0-9]*\), "K": \([0-9]*\),.*/\1 \2/p' "$LIB_MANIFEST" | sort -u)
expected=0 served=0
while IFS=$'\t' read -r name type n k; do
  if [ "$type" != BF16 ] || ! grep -qx "$n $k" <<<"$planned"; then continue; fi
  expected=$((expected + 1))
  re="GEMM_RVV: ${name//./\\.} \\(N = $n, K = $k\\) M = [0-9]+: plan M <= [0-9]+ serves\$"
  where=""
  for i in 0 1; do grep -qE "$re" "$LOG_DIR/server$i.log" && where="$where ${ports[$i]}"; done
  if [ -n "$where" ]; then served=$((served + 1)); else
    echo "  $name ($n x $k) has a plan but no server's log says one served it"
  fi
done < <($GGUF_SHAPES --weights "$model")
if [ "$expected" -gt 0 ] && [ "$served" = "$expected" ]; then
  ok; echo "$case: the servers served $served of $expected BF16 Linears with plans"
else
  fail "the servers served $served of $expected BF16 Linears with plans (logs: $LOG_DIR/server0.log, server1.log)"
fi

# 4b. Attention at FA_CTX with each -fa mode, over RPC against a local run without the plugin.
for mode in $FA_MODES; do
  settled
  client "$LOG_DIR/local-fa-$mode.log" -c "$FA_CTX" -b "$FA_CTX" -fa "$mode"
  wait "$client"
  client "$LOG_DIR/rpc-fa-$mode.log" --rpc "$rpc" -ngl 99 -ts 1,1 -c "$FA_CTX" -b "$FA_CTX" -fa "$mode"
  wait "$client"
  local_ppl=$(ppl "$LOG_DIR/local-fa-$mode.log") with=$(ppl "$LOG_DIR/rpc-fa-$mode.log")
  if [ -z "$local_ppl" ] || [ -z "$with" ]; then
    fail "-fa $mode -c $FA_CTX: no perplexity locally ($local_ppl) or over RPC ($with) ($LOG_DIR/rpc-fa-$mode.log)"
    tail -3 "$LOG_DIR/rpc-fa-$mode.log"
    continue
  fi
  rel=$(rel_diff "$with" "$local_ppl")
  echo "$case -fa $mode -c $FA_CTX: perplexity $local_ppl locally without the plugin, $with over RPC (relative difference $rel)"
  if within "$rel"; then ok; else fail "-fa $mode: the perplexities differ by $rel, more than $MAX_REL_DIFF"; fi
done
# The plugin logs each kind once per server process.
attn_served() { cat "$LOG_DIR/server0.log" "$LOG_DIR/server1.log" | grep -c "GEMM_RVV: .* ($1): attention D = " || true; }
if grep -q 'resolve_fused_ops: Flash Attention enabled' "$LOG_DIR/rpc.log" &&
   [ "$(attn_served FLASH_ATTN_EXT)" -gt 0 ]; then ok; else
  fail "-fa auto over RPC: flash attention not enabled ($LOG_DIR/rpc.log), or no server's log names a FLASH_ATTN_EXT the plugin computed"
fi
if grep -q off <<< "$FA_MODES"; then
  if [ "$(attn_served 'attention without FLASH_ATTN_EXT')" -gt 0 ]; then ok; else
    fail "-fa off over RPC: no server's log names an unfused attention the plugin computed"
  fi
fi
echo "$case: attention on the servers' plugin: FLASH_ATTN_EXT named in $(attn_served FLASH_ATTN_EXT) server log(s), the unfused chain in $(attn_served 'attention without FLASH_ATTN_EXT')"

# 5. With SECOND=1: a second client on the same servers, after the first: the same perplexity
# line, the same value of each chunk, and the same logits, bit for bit.
if [ "$SECOND" = 1 ]; then
  settled
  client "$LOG_DIR/rpc2.log" --rpc "$rpc" -ngl 99 -ts 1,1 --kl-divergence-base "$LOG_DIR/rpc2.logits"
  start=$SECONDS
  wait "$client"
  final() { grep 'Final estimate: PPL = ' "$1" | sed 's/^[0-9.]* . //'; }
  chunks() { grep -oE '\[[0-9]+\][0-9]+\.[0-9]+' "$1" | tr '\n' ' '; }
  second=$(final "$LOG_DIR/rpc2.log") first=$(final "$LOG_DIR/rpc.log")
  if [ -z "$second" ] || [ -z "$first" ]; then
    fail "no perplexity from the first or the second client ($LOG_DIR/rpc.log, rpc2.log)"
  elif [ "$second" != "$first" ] || [ "$(chunks "$LOG_DIR/rpc2.log")" != "$(chunks "$LOG_DIR/rpc.log")" ]; then
    fail "the second client's perplexity differs from the first's: '$second' against '$first' ($LOG_DIR/rpc2.log, rpc.log)"
  elif [ -z "$(chunks "$LOG_DIR/rpc.log")" ]; then
    fail "no chunk's perplexity in $LOG_DIR/rpc.log"
  else
    ok; echo "$case: a second client on the same servers: the same perplexity, $second, chunks $(chunks "$LOG_DIR/rpc2.log")($((SECONDS - start)) s)"
  fi
  if [ ! -s "$LOG_DIR/rpc.logits" ] || [ ! -s "$LOG_DIR/rpc2.logits" ]; then
    fail "no saved logits from the first or the second client ($LOG_DIR/rpc.logits, rpc2.logits)"
  elif cmp -s "$LOG_DIR/rpc.logits" "$LOG_DIR/rpc2.logits"; then
    ok; echo "$case: the two clients' logits are the same, $(stat -c %s "$LOG_DIR/rpc.logits") bytes (llama-perplexity --kl-divergence-base)"
  else
    fail "the two clients' logits differ: $(cmp "$LOG_DIR/rpc.logits" "$LOG_DIR/rpc2.logits" 2>&1 | head -1)"
  fi
fi

# 6. Still serving, and the clients' memory given back.
settled
if servers_up "after the last client"; then
  for i in 0 1; do
    rss=$(rss_kib "${server[$i]}")
    cpu=$(awk -v t="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15) / t }' "/proc/${server[$i]}/stat")
    echo "$case: server on port ${ports[$i]}: $cpu s of CPU for the $((SECOND + 3)) clients"
    echo "$case: server on port ${ports[$i]}: resident ${rss0[$i]} KiB before the clients, ${rss1[$i]} after the one killed loading, ${rss2[$i]} after the one killed in a graph, $rss after the last $((SECOND + 1))"
    if [ -n "$rss" ] && [ "$rss" -le $((rss2[i] + RSS_SLACK_MIB * 1024)) ]; then ok; else
      fail "the server on port ${ports[$i]} kept $((rss - rss2[i])) KiB more resident after the last client, over $RSS_SLACK_MIB MiB"
    fi
  done
fi

# 7. Both devices on one server: the client splits the model between its CPU device and its
# GEMM_RVV device (the issue's server aborted when the lm_head's share reached GEMM_RVV).
if [ "$MIXED" = 1 ]; then
  port3=$((PORT + 2))
  while taken "$port3"; do port3=$((port3 + 1)); done
  start_server 2 "$port3" CPU,GEMM_RVV
  client "$LOG_DIR/mixed.log" --rpc "127.0.0.1:$port3" -ngl 99 -ts 1,1
  start=$SECONDS
  wait "$client"
  mixed=$(ppl "$LOG_DIR/mixed.log")
  if [ -z "$mixed" ]; then
    fail "no perplexity from the -d CPU,GEMM_RVV server ($LOG_DIR/mixed.log, server2.log):"; tail -5 "$LOG_DIR/mixed.log"
  else
    rel=$(rel_diff "$mixed" "$ref")
    echo "$case: perplexity $mixed over one server -d CPU,GEMM_RVV ($((SECONDS - start)) s; relative difference $rel)"
    if within "$rel"; then ok; else fail "-d CPU,GEMM_RVV: the perplexities differ by $rel, more than $MAX_REL_DIFF"; fi
  fi
  grep -E 'RPC[0-9]*\[.*model buffer size' "$LOG_DIR/mixed.log" | sed 's/^[0-9.]* . /  client: /'
  # The lm_head (output.weight, or token_embd.weight in a tied model) on GEMM_RVV, served.
  if grep -qE 'GEMM_RVV: (output|token_embd)\.weight \(N = [0-9]+, K = [0-9]+\) M = [0-9]+: plan M <= [0-9]+ serves$' "$LOG_DIR/server2.log"; then
    ok; echo "$case: -d CPU,GEMM_RVV: $(grep -cE 'GEMM_RVV: .* serves$' "$LOG_DIR/server2.log") plan lines on the server, the lm_head's among them"
  else
    fail "-d CPU,GEMM_RVV: no plan served the lm_head ($LOG_DIR/server2.log)"
  fi
  settled_one() { local end=$((SECONDS + 60)); while [ "$SECONDS" -lt "$end" ] &&
    [ "$(grep -c 'Client connection closed' "$1")" -lt "$(grep -c 'Accepted client connection' "$1")" ]; do sleep 0.5; done; }
  settled_one "$LOG_DIR/server2.log"
  if kill -0 "${server[2]}" 2>/dev/null; then ok; else
    wait "${server[2]}"; fail "the -d CPU,GEMM_RVV server is gone (exit status $?; $LOG_DIR/server2.log)"
  fi
fi

if grep -l 'GGML_ASSERT\|Unsuccessful graph\|asked to run' "$LOG_DIR"/server*.log; then
  fail "a server's log reports an error"
fi

echo "rpc: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

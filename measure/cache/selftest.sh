#!/usr/bin/env bash
# Checks the cache model (measure/cache/cache_model.c) on programs whose DRAM traffic is known by hand:
#   measure/cache/selftest.sh PLUGIN SELFTEST_PROGRAM
# Model: L1D 32 KiB 8-way (64 sets), L2 512 KiB 16-way (512 sets) and 128 KiB 16-way (128 sets),
# 64-byte lines, LRU, write-back, write-allocate, cold at the start. Each case must move its
# expected bytes and at most SLACK more: the case's own stack, loop state and the one global it
# writes (a few lines; counted, since the region counts everything).
set -euo pipefail
plugin=$1 program=$2
SLACK=1024
MIB=$((1 << 20)) KIB=1024
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case  expected at 512 KiB  expected at 128 KiB  why
CASES=(
  "stream-once    $((4 * MIB))  $((4 * MIB))  4 MiB read once: every line filled once"
  "stream-twice   $((8 * MIB))  $((8 * MIB))  4 MiB twice: LRU has evicted the start before the second pass"
  "reuse-16k      $((16 * KIB)) $((16 * KIB)) 16 KiB read 100 times: it stays in the L1"
  "reuse-256k     $((256 * KIB)) $((4 * 256 * KIB)) 256 KiB read 4 times: fits 512 KiB, cycles through 128 KiB"
  "conflict       $((64 * 64))  $((6400 * 64)) 64 lines 8 KiB apart, 100 passes: 4 sets x 16 ways of a 512 KiB L2 hold them; one set of 128 KiB holds 16, so LRU misses all 6400"
  "vector-stream  $((4 * MIB))  $((4 * MIB))  4 MiB read once with vle32 (QEMU reports each element)"
  "vector-strided $((4 * MIB))  $((4 * MIB))  vlse32 one element per 64 bytes of 4 MiB: one fill per line"
  "vector-copy    $((12 * MIB)) $((12 * MIB)) 4 MiB copied with vle32/vse32: read 4, fill the target 4 (write-allocate), write it back 4"
)

failed=0
for c in "${CASES[@]}"; do
  read -r name want512 want128 why <<< "$c"
  qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256 \
    -plugin "$plugin,l1=32K,l1_ways=8,l2=512K,l2=128K,l2_ways=16,out=$tmp/$name" \
    "$program" "$name"
  for l2 in 512 128; do
    want=$([ $l2 = 512 ] && echo "$want512" || echo "$want128")
    got=$(sed -n "s/^l2=$((l2 * 1024)) .*dram_bytes=//p" "$tmp/$name")
    if [ -n "$got" ] && [ "$got" -ge "$want" ] && [ "$got" -le $((want + SLACK)) ]; then
      verdict=ok
    else
      verdict=FAIL failed=1
    fi
    printf '%-4s %-14s L2 %3d KiB: %9s bytes, expected %9d (+%d): %s\n' \
      "$verdict" "$name" "$l2" "${got:-none}" "$want" "$SLACK" "$why"
  done
done
# Several cores (l2_cores=C: one L1 per vCPU, one L2 of each size per C consecutive vCPUs). The
# program's main thread is vCPU 0, its three workers 1 to 3, started before the region; each
# case moves a 64 KiB buffer in two phases between barriers. 64 KiB fits either L2, so both
# sizes expect the same bytes. MT_SLACK: each thread's stack, TLS and the barrier, 4.5 to
# 10 KiB in all (it varies with the order the threads meet the barriers: the last one in wakes
# the others); every wrong model of these cases is 64 KiB or more away. BUSY: the vCPUs that must have made at least 8192 accesses (64 KiB in
# 8-byte loads or stores), so a case that ran on other vCPUs than planned fails.
MT_SLACK=12288
# case  plugin arguments  expected bytes  busy vCPUs  why (lockstep=256: the threads kept
# within 256 accesses of each other, as bench-dram runs them; it must change no count here)
MT_CASES=(
  "mt-read-1cluster  l2_cores=2 $((64 * KIB))  0,1 two cores of one cluster read 64 KiB: one fill per line"
  "mt-read-2clusters l2_cores=2 $((128 * KIB)) 1,2 vCPUs 1 and 2 in two clusters read 64 KiB: each cluster fills every line"
  "mt-read-2clusters l2_cores=4 $((64 * KIB))  1,2 the same vCPUs in one cluster of 4: one fill per line"
  "mt-write-read     l2_cores=2 $((128 * KIB)) 1,2 vCPU 2 writes 64 KiB (filled), vCPU 1 in the other cluster reads it: the owner writes each dirty line back once and hands it over (no second fill)"
  "mt-write-write    l2_cores=2 $((128 * KIB)) 1,2 vCPU 2 writes 64 KiB, then vCPU 1 in the other cluster: each dirty line moves to the new writer, filled once, written back once at the end"
  "mt-write-read     l2_cores=2,lockstep=256 $((128 * KIB)) 1,2 the same, the threads in lockstep"
)
# In lockstep two threads of one cluster streaming 96 KiB each, twice, share the L2 at the
# same time: 192 KiB cycles through 128 KiB (every access of the second pass misses: 384 KiB)
# and fits 512 KiB (192 KiB). Had one thread run before the other, 128 KiB would hold each
# stream alone (192 KiB). Without lockstep the host's scheduling decides: not checked.
# case  plugin arguments  expected at 512 KiB  at 128 KiB  busy vCPUs  why
MT_STREAM_CASES=(
  "mt-stream l2_cores=2,lockstep=256 $((192 * KIB)) $((384 * KIB)) 0,1 two streams of 96 KiB, twice, in lockstep"
)
# check_mt NAME ARGS WANT_512 WANT_128 BUSY WHY: one several-thread case run with the plugin's
# ARGS, its DRAM bytes at each L2 within MT_SLACK over the expected, on the expected vCPUs.
check_mt() {
  local name=$1 args=$2 want512=$3 want128=$4 busy=$5 why=$6 out ran l2 want got verdict
  out=$tmp/$name-${args//[,=]/-}
  qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256 \
    -plugin "$plugin,l1=32K,l1_ways=8,l2=512K,l2=128K,l2_ways=16,$args,out=$out" \
    "$program" "$name"
  ran=$(awk '/^vcpu=/ { split($1, v, "="); split($3, a, "="); if (a[2] >= 8192) printf "%s%s", n++ ? "," : "", v[2] }' "$out")
  for l2 in 512 128; do
    want=$([ "$l2" = 512 ] && echo "$want512" || echo "$want128")
    got=$(sed -n "s/^l2=$((l2 * 1024)) .*dram_bytes=//p" "$out")
    if [ -n "$got" ] && [ "$got" -ge "$want" ] && [ "$got" -le $((want + MT_SLACK)) ] &&
       [ "$ran" = "$busy" ] && grep -q '^regions=1 .* foreign=0$' "$out"; then
      verdict=ok
    else
      verdict=FAIL failed=1
    fi
    printf '%-4s %-17s %s, L2 %3d KiB: %7s bytes, expected %7d (+%d), busy vCPUs %s (expected %s): %s\n' \
      "$verdict" "$name" "$args" "$l2" "${got:-none}" "$want" "$MT_SLACK" "${ran:-none}" "$busy" "$why"
  done
}
for c in "${MT_CASES[@]}"; do
  read -r name args want busy why <<< "$c"
  check_mt "$name" "$args" "$want" "$want" "$busy" "$why"
done
for c in "${MT_STREAM_CASES[@]}"; do
  read -r name args want512 want128 busy why <<< "$c"
  check_mt "$name" "$args" "$want512" "$want128" "$busy" "$why"
done
# Without l2_cores the model is one core's: the workers' accesses are foreign, not modelled.
qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256 \
  -plugin "$plugin,l2=512K,out=$tmp/one-core" "$program" mt-read-2clusters
foreign=$(sed -n 's/^regions=1 .* foreign=//p' "$tmp/one-core")
got=$(sed -n 's/^l2=524288 .*dram_bytes=//p' "$tmp/one-core")
if [ "${foreign:-0}" -ge 16384 ] && [ -n "$got" ] && [ "$got" -le "$MT_SLACK" ]; then verdict=ok
else verdict=FAIL failed=1; fi
printf '%-4s %-17s one core: %s foreign accesses (expected 16384 or more), %s bytes (expected at most %d)\n' \
  "$verdict" mt-read-2clusters "${foreign:-none}" "${got:-none}" "$MT_SLACK"

# The traffic map (regions=): the copy's source and target, each a 4 MiB range of its own.
qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256 \
  -plugin "$plugin,l2=512K,out=$tmp/copy.counts,regions=$tmp/copy.map" "$program" vector-copy
for want in "fills=65536 writebacks=0 (the source: read)" \
            "fills=65536 writebacks=65536 (the target: filled, written back)"; do
  if grep -q "^0x[0-9a-f]* 0x[0-9a-f]* 4096 l2=524288 ${want%% (*}$" "$tmp/copy.map"; then
    verdict=ok
  else
    verdict=FAIL failed=1
  fi
  printf '%-4s regions map: a 4096 KiB range with %s\n' "$verdict" "$want"
done

[ $failed -eq 0 ] && echo "cache model self-test: all cases passed" ||
  { echo "cache model self-test: FAILED" >&2; exit 1; }

#!/usr/bin/env bash
# The DRAM traffic of a call does not depend on where the caller's buffers sit: each case
# traced (measure/replay/driver_replay.c: the shipped runtime/driver.c and plan_call.c run on
# the host, their loads and stores through the host cache model) with X, W and Y malloc'd and 2 or 34 bytes past a page, and with X at another
# offset than W and Y, moves at most BOUND times the bytes of the same call on 64-byte aligned
# buffers. Small shapes, the blockings the
# generator gives their full-size cousins; seconds on the host. Run by make test-placement:
#   [PLACEMENTS=quick] measure/replay/placement-check.sh DRIVER_REPLAY [BOUND]
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 DRIVER_REPLAY [BOUND]" >&2; exit 2; }
replay=$1 bound=${2:-1.02}
# The placements against aligned buffers; PLACEMENTS=quick: three of them (malloc's, one past a
# page, X at another offset than W and Y), as make test runs it.
placements=(malloc page+2 page+34 "malloc x_at=aligned" "page+34 x_at=page+2")
[ "${PLACEMENTS:-all}" = quick ] && placements=(malloc page+34 "page+34 x_at=page+2")
cases=(
  "1 4096 4096 strips 2048 4096 plain 512"
  "1 4096 4096 strips 512 4096 packed 128"
  "4 1024 4096 strips 128 256 plain 128"
  "16 1024 4096 strips 64 384 packed 128"
  "16 1024 4096 strips 64 384 plain 128"
  "128 1024 4096 strips 128 384 packed 512"
  "128 2048 4096 strips 128 768 plain 512" # wide enough to copy X, as the full-size call does
  # The cores of a cluster at once (the blockings of 4 and 8 threads: one copy of X, rounds;
  # column blocks of 64 put a line two blocks share in every fourth line of a row of Y).
  "128 2048 4096 tiles 128 64 packed 512 threads=4"
  "128 2048 4096 tiles 128 128 plain 512 threads=8"
)
bytes() { "$replay" "$@" | sed -n 's/^ratio=[0-9.]* dram_bytes=\([0-9]*\) .*/\1/p'; }
# A figure is a positive whole number of bytes: an empty or unparsable one (the replay's
# output changed, or it printed nothing) fails the check instead of reading as 0 bytes.
figure() {
  [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ] ||
    { echo "placement-check: no DRAM figure for \"$2\" (got \"$1\")" >&2; exit 1; }
}
failed=0 checked=0
for c in "${cases[@]}"; do
  b=$bound
  # shellcheck disable=SC2086
  aligned=$(bytes $c aligned)
  figure "$aligned" "$c, aligned"
  for placement in "${placements[@]}"; do
    # shellcheck disable=SC2086
    moved=$(bytes $c $placement)
    figure "$moved" "$c, $placement"
    verdict=$(awk -v a="$aligned" -v m="$moved" -v b="$b" 'BEGIN { printf "%.4f %s", m / a, m <= b * a ? "ok" : "FAIL" }')
    echo "M N K order KC NC weights L2_KB = $c, $placement: ${verdict% *} x the aligned bytes: ${verdict#* }"
    checked=$((checked + 1))
    [ "${verdict#* }" = ok ] || failed=$((failed + 1))
  done
done
echo "placement-check: $checked cases, $failed above $bound x the aligned traffic"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Checks that objects built for the base ISA hold no vector instruction: the runtime must run
# on a core without V (where any vector instruction is SIGILL), so only generated kernel
# objects may have them, and the runtime calls those only after it has found V.
# An object objdump cannot read (missing, unreadable, not an object) fails the check, and so
# does a list of no objects.
# Usage: tools/check-no-vector.sh OBJDUMP OBJECT...
set -u
[ $# -ge 1 ] || { echo "usage: $0 OBJDUMP OBJECT..." >&2; exit 2; }
objdump=$1; shift
[ $# -ge 1 ] || { echo "no-vector: no objects given: nothing checked" >&2; exit 1; }
clean=0 dirty=0 unread=0
err=$(mktemp); trap 'rm -f "$err"' EXIT
for obj in "$@"; do
  # objdump exits 0 on some unreadable inputs; it always says so on stderr.
  if ! dis=$("$objdump" -d "$obj" 2>"$err") || [ -s "$err" ] || ! grep -q 'file format' <<<"$dis"; then
    unread=$((unread + 1)); echo "UNREADABLE: $obj: $(head -1 "$err" | grep . || echo "objdump finds no object file in it")"; continue; fi
  # Vector instructions: v* mnemonics (vsetvli, vle32.v, vfmacc.vf, ...) and the vector CSR.
  hits=$(grep -cE $'\t''(v[a-z0-9]+(\.[a-z0-9]+)*|csrr[a-z]*\s+[a-z0-9]+,\s*vlenb)\s' <<<"$dis" || true)
  if [ "$hits" -eq 0 ]; then clean=$((clean + 1)); else
    dirty=$((dirty + 1)); echo "VECTOR CODE: $obj: $hits vector instructions"
    grep -E $'\t''v[a-z0-9]+(\.[a-z0-9]+)*\s' <<<"$dis" | head -3; fi
done
echo "base-ISA objects without vector instructions:"
echo "no-vector: $clean passed, $((dirty + unread)) failed ($unread unreadable)"
[ "$dirty" -eq 0 ] && [ "$unread" -eq 0 ]

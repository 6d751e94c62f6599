#!/usr/bin/env bash
# Checks compiled kernels for vector register spills: whole-register stores and loads
# (vs1r.v .. vs8r.v, vl1re*.v .. vl8re*.v), which the kernels never use on purpose, so any
# that appear were put there by the register allocator.
# An object objdump cannot read (missing, unreadable, not an object) fails the check, and so
# does a list of no objects: a check that looked at nothing has not passed.
# Usage: tools/check-spills.sh OBJDUMP OBJECT...
set -u
[ $# -ge 1 ] || { echo "usage: $0 OBJDUMP OBJECT..." >&2; exit 2; }
objdump=$1; shift
[ $# -ge 1 ] || { echo "spills: no objects given: nothing checked" >&2; exit 1; }
clean=0 spilled=0 unread=0
err=$(mktemp); trap 'rm -f "$err"' EXIT
for obj in "$@"; do
  # objdump exits 0 on some unreadable inputs; it always says so on stderr.
  if ! dis=$("$objdump" -d "$obj" 2>"$err") || [ -s "$err" ] || ! grep -q 'file format' <<<"$dis"; then
    unread=$((unread + 1)); echo "UNREADABLE: $obj: $(head -1 "$err" | grep . || echo "objdump finds no object file in it")"; continue; fi
  hits=$(grep -cE '\s(vs[1248]r\.v|vl[1248]re(8|16|32|64)\.v)\s' <<<"$dis" || true)
  if [ "$hits" -eq 0 ]; then clean=$((clean + 1)); else
    spilled=$((spilled + 1)); echo "SPILLS: $obj: $hits whole-register loads/stores"; fi
done
echo "kernel objects without vector spills:"
echo "spills: $clean passed, $((spilled + unread)) failed ($unread unreadable)"
[ "$spilled" -eq 0 ] && [ "$unread" -eq 0 ]

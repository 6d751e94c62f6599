#!/usr/bin/env bash
# Checks compiled kernels for vector register spills: whole-register stores and loads
# (vs1r.v .. vs8r.v, vl1re*.v .. vl8re*.v), which the kernels never use on purpose, so any
# that appear were put there by the register allocator.
# Usage: tools/check-spills.sh OBJDUMP OBJECT...
set -u
objdump=$1; shift
clean=0 spilled=0
for obj in "$@"; do
  hits=$("$objdump" -d "$obj" | grep -cE '\s(vs[1248]r\.v|vl[1248]re(8|16|32|64)\.v)\s' || true)
  if [ "$hits" -eq 0 ]; then clean=$((clean + 1)); else
    spilled=$((spilled + 1)); echo "SPILLS: $obj: $hits whole-register loads/stores"; fi
done
echo "kernel objects without vector spills:"
echo "spills: $clean passed, $spilled failed"
[ "$spilled" -eq 0 ]

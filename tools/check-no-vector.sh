#!/usr/bin/env bash
# Checks that objects built for the base ISA hold no vector instruction: the runtime must run
# on a core without V (where any vector instruction is SIGILL), so only generated kernel
# objects may have them, and the runtime calls those only after it has found V.
# Usage: tools/check-no-vector.sh OBJDUMP OBJECT...
set -u
objdump=$1; shift
clean=0 dirty=0
for obj in "$@"; do
  # Vector instructions: v* mnemonics (vsetvli, vle32.v, vfmacc.vf, ...) and the vector CSR.
  hits=$("$objdump" -d "$obj" | grep -cE $'\t''(v[a-z0-9]+(\.[a-z0-9]+)*|csrr[a-z]*\s+[a-z0-9]+,\s*vlenb)\s' || true)
  if [ "$hits" -eq 0 ]; then clean=$((clean + 1)); else
    dirty=$((dirty + 1)); echo "VECTOR CODE: $obj: $hits vector instructions"
    "$objdump" -d "$obj" | grep -E $'\t''v[a-z0-9]+(\.[a-z0-9]+)*\s' | head -3; fi
done
echo "base-ISA objects without vector instructions:"
echo "no-vector: $clean passed, $dirty failed"
[ "$dirty" -eq 0 ]

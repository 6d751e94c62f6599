#!/usr/bin/env bash
# Runs the README's commands the way a newcomer types them: every ```sh block that follows a
# line "<!-- make test runs this block -->", as written, in the project's root, with HOME set
# to a scratch folder under $BUILD (the blocks install and build there). Fails when a command
# fails, when no block is marked, or when gemm-rvv-bench ran under QEMU without saying that its
# figures are emulated. MARK=TEXT runs the blocks after "<!-- TEXT -->" instead (make
# test-torch runs those of "make test-torch runs this block", which need PyTorch's root).
#   BUILD=build NATIVE= [MARK=TEXT] tools/test-readme.sh README.md
set -euo pipefail

readme=${1:?usage: $0 README.md}
mark="<!-- ${MARK:-make test runs this block} -->"
scratch=$(pwd)/${BUILD:-build}/readme-home${MARK:+-${MARK// /-}}
rm -rf "$scratch"
mkdir -p "$scratch"

awk -v mark="$mark" '$0 == mark { armed = 1; next }
     armed && /^```sh/ { inside = 1; next }
     inside && /^```/ { inside = 0; armed = 0; print ""; next }
     inside { print }' "$readme" > "$scratch/commands.sh"
blocks=$(grep -cxF "$mark" "$readme" || true)
[ "$blocks" -gt 0 ] || { echo "test-readme: error: no block of $readme is marked" >&2; exit 1; }

echo "=== the commands of $blocks blocks of $readme (HOME=$scratch) ==="
HOME=$scratch bash -e -o pipefail -v "$scratch/commands.sh" 2>&1 | tee "$scratch/log"

if grep -q 'gemm-rvv-bench' "$scratch/commands.sh" && [ "${NATIVE:-}" != 1 ] &&
   ! grep -q '^EMULATED: ' "$scratch/log"; then
  echo "test-readme: error: gemm-rvv-bench ran under QEMU but did not say it was emulated" >&2
  exit 1
fi
echo "README commands: $blocks blocks passed"

#!/usr/bin/env bash
# The Python package's tests (make test-torch): the package's refusals of a missing library and
# of one of another version, then the op's tests (test_op.py) and the model's (test_model.py)
# side by side, each under tools/torch-python with the installed package on PYTHONPATH.
#   PYTHONPATH=PREFIX/lib/python OTHER_VERSION=other.so [LOG_DIR=DIR] tests/torch/run.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
python=$here/../../tools/torch-python
log_dir=$(realpath -m "${LOG_DIR:-$(mktemp -d)}")
mkdir -p "$log_dir"

# refuses WHAT LIBRARY WORDS: importing the package with GEMM_RVV_LIBRARY=LIBRARY must fail
# with gemm_rvv.LibraryError saying WORDS.
refuses() {
  local what=$1 library=$2 words=$3 out
  out=$(GEMM_RVV_LIBRARY=$library "$python" -c '
try:
    import gemm_rvv
except ImportError as e:
    print(type(e).__name__, e)
else:
    print("imported")' 2>&1)
  if [[ "$out" != "LibraryError gemm_rvv: "*"$words"* ]]; then
    echo "FAILED: $what: expected a LibraryError saying \"$words\", got: $out"; return 1
  fi
  echo "ok     $what: $out"
}
refuses "a missing library" /nonexistent/libgemm_rvv.so.0 \
  "cannot load the library /nonexistent/libgemm_rvv.so.0"
refuses "another version" "$OTHER_VERSION" "is version 0.0.1, this package is"

cd "$here"
pids=()
for t in test_op test_model; do
  "$python" "$t.py" > "$log_dir/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
  t=$([ "$i" = 0 ] && echo test_op || echo test_model)
  if wait "${pids[$i]}"; then echo "=== $t: passed"; else echo "=== $t: FAILED"; status=1; fi
  grep -E '^(ok|FAILED|[0-9]+ passed)|max \||graphs:' "$log_dir/$t.log" | sed 's/^/  /'
  [ "$status" = 0 ] || tail -30 "$log_dir/$t.log"
done
exit $status

#!/usr/bin/env bash
# tools/setup-deps.sh ggml: a package sid does not have is named in the error, and nothing is
# left behind (neither DIR/ggml.tmp nor DIR/ggml). Runs install_ggml in a bash of its own on a private folder, against the system's
# Debian archive (sid's riscv64 package lists: a few seconds), with one list replaced.
# Usage: tests/setup-deps/test_ggml_fetch.sh
# shellcheck disable=SC2016  # the code in single quotes runs in a bash of its own
set -u
cd "$(dirname "$0")/../.." || exit 1
command -v apt-get >/dev/null || { tools/report-skip test-setup-deps "ggml fetch test: no apt-get here"; exit 0; }
archive=$(tools/setup-deps.sh archive)
[ -n "$archive" ] || { tools/report-skip test-setup-deps "ggml fetch test: the apt sources name no Debian archive"; exit 0; }
scratch=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$scratch"' EXIT
failed=0
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }

for list in GGML_PACKAGES; do
  dir=$scratch/$list
  rc=0
  bash -c "source tools/setup-deps.sh; $list=(libggml0 no-such-package-gemm-rvv); install_ggml \"\$1\"" \
    _ "$dir" 2> "$dir.log" || rc=$?
  if grep -qE "Could not resolve|Temporary failure resolving|Could not connect|Network is unreachable" "$dir.log"; then
    tools/report-skip test-setup-deps "ggml fetch test: ${archive% *} cannot be reached from here"; exit 0
  fi
  [ "$rc" -ne 0 ] || fail "$list: a missing package gave exit status 0"
  grep -q "no package no-such-package-gemm-rvv in suite 'sid'" "$dir.log" ||
    { fail "$list: the error does not name the missing package"; sed 's/^/    | /' "$dir.log"; }
  for left in "$dir/ggml.tmp" "$dir/ggml"; do
    [ ! -e "$left" ] || fail "$list: left behind: $left"
  done
done
[ "$failed" -eq 0 ] || exit 1
echo "ggml fetch errors: 1 case passed"

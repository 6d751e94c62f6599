#!/usr/bin/env bash
# The toolchain fetch takes the Debian archive from the apt sources: each folder in sources/
# holds a sources.list and/or parts/ (as /etc/apt/sources.list.d) and the "URI SUITE" expected
# (an empty file: no Debian archive there).
# Usage: tests/setup-deps/test_archive.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
command -v apt-get >/dev/null || { tools/report-skip test-setup-deps "archive test: no apt-get here"; exit 0; }
passed=0 failed=0
for case in tests/setup-deps/sources/*/; do
  name=$(basename "$case")
  expected=$(cat "$case/expected")
  got=$(tools/setup-deps.sh archive "$case/sources.list" "$case/parts")
  if [ "$got" = "$expected" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAILED: $name: expected '$expected', got '$got'"; fi
done
echo "Debian archive from apt sources: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

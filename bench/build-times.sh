#!/usr/bin/env bash
# Wall time of `make gen` plus the library build, from nothing, for a shapes file, and the
# number of kernels it produced: "SHAPES,seconds,kernels" on stdout.
#   bench/build-times.sh SHAPES...
set -euo pipefail
for shapes in "$@"; do
  dir=${BUILD:-build}/bench/build-$(basename "$shapes" .yaml)
  rm -rf "$dir"
  start=$(date +%s.%N)
  make --no-print-directory -s lib SHAPES="$shapes" BUILD="$dir" > /dev/null
  end=$(date +%s.%N)
  kernels=$(grep -c '"file"' "$dir/gen/manifest.json")
  echo "$shapes,$(echo "$end - $start" | bc),$kernels"
done

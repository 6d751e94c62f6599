#!/usr/bin/env bash
# Wall time of `make gen` plus the library build, from nothing, for each shapes file, and the
# number of kernels it produced: "SHAPES,seconds,kernels" on stdout. Run by
# `make bench-build-times`:
#   measure/build-times.sh WORK_DIR SHAPES...
# Each file is built in WORK_DIR/NAME (NAME: the file's name without .yaml).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 WORK_DIR SHAPES..." >&2; exit 2; }
work=$1
shift
for shapes in "$@"; do
  dir=$work/$(basename "$shapes" .yaml)
  rm -rf "$dir"
  start=$(date +%s.%N)
  make --no-print-directory -s lib SHAPES="$shapes" BUILD="$dir" > /dev/null
  end=$(date +%s.%N)
  kernels=$(grep -c '"file"' "$dir/gen/manifest.json")
  echo "$shapes,$(echo "$end - $start" | bc),$kernels"
done

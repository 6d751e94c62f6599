#!/usr/bin/env bash
# Instructions per prompt token and per decoded token of transformers models in PyTorch
# (forward.py: the tiny Llama, a Qwen2-shaped model), patched and unpatched, counted by the
# instruction counter (measure/count/insn_count.c, all=on) under Debian 12's QEMU 7.2 at VLEN
# 256, one thread. Each figure is the difference of two runs that differ in one count only
# (the import, the model's construction and the warm-up cancel); each run's instructions are
# also binned by the file they run in (libgemm_rvv.so: the Linears when patched).
#   PYTHONPATH=PREFIX/lib/python TORCH_ROOT=DIR measure/torch/count.sh PLUGIN OUT.csv [MODEL...]
# Writes OUT.csv (model,mode,per_prompt_token,per_decoded_token,library_prompt,library_decoded)
# and OUT-files.csv (model,mode,test,file,instructions per token; files above 1 %).
set -euo pipefail

plugin=$(realpath "$1") out=$2
shift 2
models=("${@:-llama}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The files where a token's instructions go, one bin each (a file's whole text): PyTorch's,
# the BLAS, numpy's core, the C and C++ runtimes, the interpreter and the installed library
# (the counter tells at most 64 files apart).
bins=$work/bins.txt
lib=$(sed -n 's/^LIBRARY = "\(.*\)"$/\1/p' "${PYTHONPATH%%:*}/gemm_rvv/_installed.py")
[ -n "$lib" ] || { echo "count.sh: no installed gemm_rvv package on PYTHONPATH" >&2; exit 1; }
{ find "$TORCH_ROOT" -type f -name '*.so*' \( -name 'libtorch*' -o -name 'libc10*' -o -name 'libblas*' \
    -o -name 'libopenblas*' -o -name 'libsleef*' -o -name 'libgomp*' -o -name 'libstdc++*' \
    -o -name 'libc.so.6' -o -name 'libm.so.6' -o -name 'ld-linux*' -o -name 'libgcc_s*' \
    -o -name '_multiarray_umath*' -o -name 'libz.so*' \)
  echo "$TORCH_ROOT/usr/bin/python3.14"; echo "$lib"; } |
  while read -r f; do b=$(basename "$f"); echo "$b 0 ffffffffff $b"; done | sort -u > "$bins"
libname=$(basename "$lib")

count() {  # count MODEL MODE PROMPTS DECODES: a run's counts file
  local f="$work/$1-$2-$3-$4.txt"
  GEMM_RVV_THREADS=1 qemu-riscv64 -L "$TORCH_ROOT" -cpu rv64,v=true,vext_spec=v1.0,vlen=256 \
    -U PYTHONDONTWRITEBYTECODE -plugin "$plugin,all=on,bins=$bins,out=$f" \
    "$TORCH_ROOT/usr/bin/python3" "$here/forward.py" "$1" "$2" "$3" "$4" > /dev/null
  echo "$f"
}
insns() { sed -n 's/^insns=\([0-9]*\) .*/\1/p' "$1"; }
get() { awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' "$2"; }  # get KEY PER_FILE
# per FILE_A FILE_B DIVISOR: (B - A) / DIVISOR for the whole run and for every bin, as
# "file count" lines ("all" first).
per() {
  echo "all $(( ($(insns "$2") - $(insns "$1")) / $3 ))"
  awk -v d="$3" '$1 == "bin" { c[$2] += (FILENAME == ARGV[2] ? 1 : -1) * $3 }
    END { for (b in c) printf "%s %.0f\n", b, c[b] / d }' "$1" "$2" | sort -k2,2nr
}
echo "model,mode,per_prompt_token,per_decoded_token,library_prompt,library_decoded" > "$out"
echo "model,mode,test,file,per_token" > "${out%.csv}-files.csv"
for model in "${models[@]}"; do
  # The Qwen2-shaped model is 100 times the Llama's work a token: fewer tokens do.
  if [ "$model" = llama ]; then P=4 D=16; else P=1 D=4; fi
  for mode in unpatched patched; do
    base=$(count "$model" "$mode" 0 0) prompt=$(count "$model" "$mode" "$P" 0)
    decode=$(count "$model" "$mode" 0 "$D")
    per "$base" "$prompt" $((P * 8)) > "$work/pp" && per "$base" "$decode" "$D" > "$work/tg"
    echo "$model,$mode,$(get all "$work/pp"),$(get all "$work/tg"),$(get "$libname" "$work/pp"),$(get "$libname" "$work/tg")" >> "$out"
    for t in pp tg; do
      awk -v m="$model" -v mode="$mode" -v t="$t" '$1 == "all" { all = $2; next }
        all && $2 >= all / 100 { printf "%s,%s,%s,%s,%s\n", m, mode, t, $1, $2 }' "$work/$t" \
        >> "${out%.csv}-files.csv"
    done
  done
done
column -s, -t "$out"
column -s, -t "${out%.csv}-files.csv"

#!/bin/sh
# Instructions (callgrind Ir) per KEM keygen, encaps and decaps, each KEM in its own valgrind run
# of `pqot bench crypto --alg ALG --iterations N` with collection only inside its bench_op_*
# functions (which include drawing the randomness from the OS CSPRNG):
#   bench/callgrind/kem_ops.sh [BUILD_DIR] [N] [ALG,ALG,...]
# Defaults: build 50, and each comparison contender beside ML-KEM at its security level
# (docs/crypto.md, "Comparison contenders").
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-50}
algs=${3:-ML-KEM-512,LightSaber,NTRU-HPS-2048-509,ML-KEM-768,Saber,NTRU-HPS-2048-677,NTRU-HRSS-701,ML-KEM-1024,FireSaber,NTRU-HPS-4096-821}
command -v valgrind >/dev/null || { echo "kem_ops.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
[ -x "$build/bin/pqot" ] || { echo "kem_ops.sh: $build/bin/pqot is missing (make build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-20s %12s %12s %12s %14s\n' "KEM ($n exchanges)" keygen encaps decaps "exchange"
for alg in $(echo "$algs" | tr ',' ' '); do
  valgrind --tool=callgrind --compress-strings=no --toggle-collect='*bench_op_*' \
      --callgrind-out-file="$work/cg.out" "$build/bin/pqot" bench crypto --alg "$alg" \
      --iterations "$n" >"$work/bench.txt" 2>"$work/valgrind.log" ||
    { echo "kem_ops.sh: valgrind failed for $alg:" >&2; cat "$work/valgrind.log" >&2; exit 1; }
  callgrind_annotate --inclusive=yes "$work/cg.out" >"$work/annotate.txt"
  op_ir() { grep "bench_op_$1" "$work/annotate.txt" | head -n 1 | awk '{gsub(",", "", $1); print $1}'; }
  keygen=$(op_ir keygen)
  encaps=$(op_ir encaps)
  decaps=$(op_ir decaps)
  printf '%-20s %12d %12d %12d %14d\n' "$alg" $((keygen / n)) $((encaps / n)) $((decaps / n)) \
      $(((keygen + encaps + decaps) / n))
done

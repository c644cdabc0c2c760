#!/bin/sh
# Instructions (callgrind Ir) of ML-DSA keygen + deterministic sign + verify, averaged over N fixed
# (seed, message) pairs, the split by operation, and Ir per signing attempt:
#   bench/callgrind/mldsa_ops.sh [BUILD_DIR] [N] [ALG]      (defaults: build 100 ML-DSA-65)
# It runs `pqot bench sig --alg ALG --iterations N` (docs/cli.md: cycle i uses seed i and message
# i) with collection only inside its bench_op_* functions. Signing attempts are counted as the
# calls of SampleInBall (one per attempt, and one per verification).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-100}
alg=${3:-ML-DSA-65}
command -v valgrind >/dev/null || { echo "mldsa_ops.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
[ -x "$build/bin/pqot" ] || { echo "mldsa_ops.sh: $build/bin/pqot is missing (make build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
valgrind --tool=callgrind --compress-strings=no --toggle-collect='*bench_op_*' \
    --callgrind-out-file="$work/cg.out" "$build/bin/pqot" bench sig --alg "$alg" --iterations "$n" \
    >"$work/bench.txt" 2>"$work/valgrind.log"
total=$(sed -n 's/^summary: //p' "$work/cg.out")
callgrind_annotate --inclusive=yes "$work/cg.out" >"$work/annotate.txt"
op_ir() { grep "bench_op_sig_$1" "$work/annotate.txt" | head -n 1 | awk '{gsub(",", "", $1); print $1}'; }
# Calls are recorded under the caller (cfn= then calls=); count those whose callee is SampleInBall
# (names are written out in full: --compress-strings=no).
calls=$(awk '/^cfn=/ {callee = $0} /^calls=/ {if (callee ~ /sample_in_ball/) {split($0, a, "[= ]"); c += a[2]}}
             END {print c + 0}' "$work/cg.out")
attempts=$((calls - n))
keygen=$(op_ir keygen)
sign=$(op_ir sign)
verify=$(op_ir verify)
echo "$alg, $n rounds (keygen + deterministic sign + verify), callgrind Ir"
echo "per round (collected / $n): $((total / n))"
echo "keygen: $((keygen / n))  sign: $((sign / n))  verify: $((verify / n))"
echo "signing attempts: $attempts ($(awk "BEGIN {printf \"%.2f\", $attempts / $n}") per signature), sign Ir per attempt: $((sign / attempts))"

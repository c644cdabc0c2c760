#!/bin/sh
# Instructions (callgrind Ir) of ML-DSA-65 keygen + deterministic sign + verify, averaged over N
# fixed (xi, message) pairs (bench/callgrind/mldsa_ops.cpp), and the split by operation.
#   bench/callgrind/mldsa_ops.sh [BUILD_DIR] [N]     (defaults: build 100)
# Needs build/lib/libpqot_crypto.a (cmake --build BUILD_DIR --target pqot_crypto) and valgrind.
# Signing attempts are counted as the calls of SampleInBall (one per attempt) minus the one per
# verification.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -std=c++20 -O2 -I "$root/include" "$root/bench/callgrind/mldsa_ops.cpp" \
    "$build/lib/libpqot_crypto.a" -lcrypto -o "$work/mldsa_ops"
valgrind --tool=callgrind --compress-strings=no --callgrind-out-file="$work/cg.out" "$work/mldsa_ops" "$n" \
    2>"$work/valgrind.log"
total=$(sed -n 's/^summary: //p' "$work/cg.out")
callgrind_annotate --inclusive=yes "$work/cg.out" >"$work/annotate.txt"
op_ir() { grep "bench_op_$1" "$work/annotate.txt" | head -n 1 | awk '{gsub(",", "", $1); print $1}'; }
# Calls are recorded under the caller (cfn= then calls=); count those whose callee is SampleInBall
# (names are written out in full: --compress-strings=no).
calls=$(awk '/^cfn=/ {callee = $0} /^calls=/ {if (callee ~ /sample_in_ball/) {split($0, a, "[= ]"); c += a[2]}}
             END {print c + 0}' "$work/cg.out")
attempts=$((calls - n))
keygen=$(op_ir keygen)
sign=$(op_ir sign)
verify=$(op_ir verify)
echo "ML-DSA-65, $n rounds (keygen_internal + sign_deterministic + verify), callgrind Ir"
echo "per round (whole program / $n): $((total / n))"
echo "keygen: $((keygen / n))  sign: $((sign / n))  verify: $((verify / n))"
echo "signing attempts: $attempts ($(awk "BEGIN {printf \"%.2f\", $attempts / $n}") per signature), sign Ir per attempt: $((sign / attempts))"

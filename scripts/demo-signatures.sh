#!/usr/bin/env bash
# The crypto core's chapter of `make demo` (also `make demo-signatures` alone): a C2 server's
# ML-DSA-65 key signs a command for a device, the device verifies it with the C2's public key file,
# and a command changed on the way, or signed by someone else, is refused. Then the hybrid and the
# original SRUP's RSA-2048, side by side (docs/crypto.md, "Signatures"; docs/cli.md, "pqot sig").
set -euo pipefail
cd "$(dirname "$0")/.."
PQOT=build/bin/pqot
work=$(mktemp -d /tmp/pqot-demo-sig.XXXXXX)
trap 'rm -rf "$work"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

step "S1. the C2 server's signing key: ML-DSA-65 (FIPS 204), as PKCS#8 / SPKI PEM files"
"$PQOT" sig keygen --alg ML-DSA-65 --out-dir "$work"
head -n 2 "$work/public.pem"
echo "... ($(wc -c <"$work/public.pem") bytes; the private key file holds only the 32-byte seed:" \
     "$(wc -c <"$work/private.pem") bytes, mode $(stat -c %a "$work/private.pem"))"

step "S2. the C2 signs a command for device 00a1, bound to that device by the context"
cmd=$(hex "open valve 7")
ctx=$(hex "srup-pq device 00a1")
sig=$("$PQOT" sig sign --alg ML-DSA-65 --sk "@$work/private.pem" --msg "$cmd" --ctx "$ctx" | sed 's/^sig=//')
echo "signature: ${sig:0:64}... ($(( ${#sig} / 2 )) bytes)"

step "S3. the device verifies it with the C2's public key"
"$PQOT" sig verify --alg ML-DSA-65 --pk "@$work/public.pem" --msg "$cmd" --ctx "$ctx" --sig "$sig"

step "S4. what an attacker tries: a changed command, another device, another key"
set +e
"$PQOT" sig verify --alg ML-DSA-65 --pk "@$work/public.pem" --msg "$(hex "open valve 8")" --ctx "$ctx" --sig "$sig"
echo "  changed command: exit $?"
"$PQOT" sig verify --alg ML-DSA-65 --pk "@$work/public.pem" --msg "$cmd" --ctx "$(hex "srup-pq device 00b2")" --sig "$sig"
echo "  replayed to device 00b2: exit $?"
mkdir "$work/mallory"
"$PQOT" sig keygen --alg ML-DSA-65 --out-dir "$work/mallory" >/dev/null
forged=$("$PQOT" sig sign --alg ML-DSA-65 --sk "@$work/mallory/private.pem" --msg "$cmd" --ctx "$ctx" | sed 's/^sig=//')
"$PQOT" sig verify --alg ML-DSA-65 --pk "@$work/public.pem" --msg "$cmd" --ctx "$ctx" --sig "$forged"
echo "  signed by another key: exit $?"
set -e

step "S5. keygen, sign and verify of the post-quantum schemes, the hybrid, and the original SRUP's RSA-2048"
for alg in ML-DSA-65 ML-DSA-65+Ed25519 Ed25519 RSA-2048-PKCS1; do
  "$PQOT" bench sig --alg "$alg" --rounds 3 | grep -E " (keygen|sign|verify) "
done
echo
echo "chapter finished: commands signed with ML-DSA-65, refused when changed, moved or forged."

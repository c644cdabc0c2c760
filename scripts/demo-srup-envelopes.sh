#!/usr/bin/env bash
# SRUP-PQ's envelopes, offline: a chapter of `make demo` (also `make demo-srup-envelopes` alone;
# SRUP-PQ over MQTT follows in scripts/demo-srup.sh). A C2 server and a device get
# identities, the C2 seals a command to the device, the device opens it once and refuses the same
# envelope again (also after a restart: the replay window is in SQLite), refuses it for another
# device or topic, and an original SRUP envelope is verified beside it for comparison
# (docs/srup-pq.md, docs/srup-tool.md).
set -euo pipefail
cd "$(dirname "$0")/.."
SRUP=build/bin/srup
work=$(mktemp -d /tmp/pqot-demo-srup.XXXXXX)
trap 'rm -rf "$work"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
topic=srup/d/00000000000000a1/cmd

step "R1. identities: the C2 (00..c2) and a device (00..a1), ML-DSA-65 signatures and ML-KEM-768"
"$SRUP" keygen --id 00000000000000c2 --out "$work/c2"
"$SRUP" keygen --id 00000000000000a1 --out "$work/dev" >/dev/null
"$SRUP" keygen --id 00000000000000a2 --out "$work/dev2" >/dev/null
echo "the device enrols $work/c2/identity.pub; the C2 enrols the device's (ID, suite, public keys)"

step "R2. the C2 seals 'action 7, argument 2.5' to the device, bound to its topic"
"$SRUP" seal --from "$work/c2" --to "$work/dev/identity.pub" --topic "$topic" \
  --type action --action 7 --arg 2.5 --arg-type float32 >"$work/cmd.bin"
"$SRUP" inspect <"$work/cmd.bin" | grep -E '^(type|mode|sequence|bytes|kem_ciphertext_bytes|signature_bytes|body_bytes|verified)='
echo "(what the broker sees: the header, and a body encrypted to the device alone)"

step "R3. the device opens it: signature, recipient, topic, lifetime, decryption, replay window"
"$SRUP" open --as "$work/dev" --peer "$work/c2/identity.pub" --topic "$topic" --state "$work/dev/state.db" <"$work/cmd.bin" \
  | grep -E '^(type|sender|sequence|body\.)'

step "R4. what an attacker tries with the same envelope"
set +e
"$SRUP" open --as "$work/dev" --peer "$work/c2/identity.pub" --topic "$topic" --state "$work/dev/state.db" <"$work/cmd.bin"
echo "  replayed to the device (a new process: the window is on disk): exit $?"
"$SRUP" open --as "$work/dev2" --peer "$work/c2/identity.pub" --topic "$topic" --state "$work/dev2/state.db" <"$work/cmd.bin"
echo "  replayed to another device: exit $?"
"$SRUP" open --as "$work/dev" --peer "$work/c2/identity.pub" --topic srup/d/00000000000000a1/other --state "$work/dev/state.db" <"$work/cmd.bin"
echo "  moved to another topic: exit $?"
set -e

step "R5. the original SRUP (version 5, RSA-2048, nothing encrypted): one of its own envelopes"
"$SRUP" legacy-verify --pub tests/data/srup-original/c2.pub <tests/data/srup-original/action.bin 2>&1
echo "($(wc -c <tests/data/srup-original/action.bin) bytes, readable by the broker, valid for any device it is replayed to)"

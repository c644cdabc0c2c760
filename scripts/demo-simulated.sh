#!/usr/bin/env bash
# `make demo-simulated`: SRMCP end to end on a simulated plant (memory nodes and signals).
#  1. a test PKI (pqot pki init) if there is none yet;
#  2. srmcpd serving the example plant (examples/srmcp/plant.toml, ~60 nodes, simulated signals);
#  3. the srmcp client: discover, read, write and read back, subscribe, ping, with latencies;
#  4. the server stopped cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin
PKI=build/demo-pki
CONFIG=examples/srmcp/plant.toml
log=$(mktemp /tmp/srmcpd-demo.XXXXXX.log)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid"; wait "$server_pid" || true; fi
  rm -f "$log"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. test PKI in $PKI"
if [ -f "$PKI/ca.crt" ] && [ -f "$PKI/client1.key" ]; then
  echo "(already there: $(ls "$PKI" | tr '\n' ' '))"
else
  "$BIN/pqot" pki init --dir "$PKI" --clients 2 --client-role 2=operator
fi

step "2. srmcpd on the example plant ($CONFIG)"
"$BIN/srmcpd" --check-config --config "$CONFIG"
"$BIN/srmcpd" --config "$CONFIG" --listen 127.0.0.1:0 --log-level info >"$log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*srmcpd listening on [0-9.]*:\([0-9]*\).*/\1/p' "$log" | head -n1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$log"; echo "srmcpd did not start" >&2; exit 1; }
  sleep 0.05
done
[ -n "$port" ] || { cat "$log"; echo "srmcpd did not report its port" >&2; exit 1; }
sed -n '1p' "$log"

SRMCP=("$BIN/srmcp" --server "127.0.0.1:$port" --ca "$PKI/ca.crt" --cert "$PKI/client1.crt" --key "$PKI/client1.key")

step "3a. discover (top two levels)"
"${SRMCP[@]}" discover --depth 1

step "3b. read live values (simulated signals change between reads)"
"${SRMCP[@]}" read plant.line1.oven.temp plant.line1.oven.setpoint plant.line1.press.pressure \
  plant.line2.robot.cycles plant.utilities.energy.power plant.line1.recipe plant.alarms.config

step "3c. write the oven set-point, then read it back"
new=$(awk 'BEGIN { srand(); printf "%.1f", 170 + rand() * 20 }')
"${SRMCP[@]}" write "plant.line1.oven.setpoint=$new"
"${SRMCP[@]}" read plant.line1.oven.setpoint

step "3d. a write the plant refuses: a read-only sensor, and a wrong type"
set +e
"${SRMCP[@]}" write plant.line1.oven.temp=20 plant.line1.oven.setpoint='"hot"'
echo "exit code: $? (3 = the server answered with an error status)"
set -e

step "3e. subscribe to a changing value (3 notifications, sampled every 200 ms)"
"${SRMCP[@]}" subscribe plant.line1.press.pressure --count 3 --interval 200

step "3f. ping over ML-KEM-768 and X-Wing sessions"
"${SRMCP[@]}" ping --count 3
"${SRMCP[@]}" --kem X-Wing ping --count 3

step "4. stop srmcpd (SIGTERM)"
kill "$server_pid"
wait "$server_pid" || true
server_pid=""
tail -n 2 "$log"
echo
echo "demo finished: every step above ran against a real srmcpd over TLS 1.3 with a post-quantum inner layer."

#!/usr/bin/env bash
# `make demo`: the plant story (docs/srmcpd-modbus.md).
#  1. a test PKI (pqot pki init) if there is none yet;
#  2. pqot-modbus-sim plays a legacy PLC with an energy meter: plain Modbus TCP, no security;
#  3. srmcpd fronts it as a gateway (examples/gateway/plant-gateway.toml): everything that leaves
#     the cell is SRMCP over mutual TLS 1.3 with an ML-KEM inner key exchange;
#  4. the srmcp client discovers the PLC's nodes, reads live values, writes a set-point that the
#     PLC then holds, subscribes to a changing value, and sees a device fault stay on its nodes;
#  5. the gateway's metrics, then everything stops cleanly;
#  S. the crypto core's chapter (scripts/demo-signatures.sh, also `make demo-signatures` alone):
#     commands signed with ML-DSA-65, refused when changed, moved or forged.
#  R. SRUP-PQ's envelopes (scripts/demo-srup-envelopes.sh, also `make demo-srup-envelopes`): a
#     command sealed by a C2 to one device, opened once, refused when replayed (also after a
#     restart), redirected or moved; the original SRUP's envelope beside it.
#  Q. SRUP-PQ over MQTT (scripts/demo-srup.sh, also `make demo-srup` alone): mosquitto with TLS 1.3
#     and registration, srup-c2, two meters joining (simple, human code), telemetry to a monitor,
#     an action and an update, refused clients, a replayed command, a C2 restart.
#  T. TRIP (scripts/demo-trip.sh, also `make demo-trip` alone; root): a legacy UDP flow over three
#     secured paths through relays and delayed links, one path flooded, two relays lost, nothing lost.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin
PKI=build/demo-pki
TEMPLATE=examples/gateway/plant-gateway.toml
work=$(mktemp -d /tmp/pqot-demo.XXXXXX)
sim_pid=""
gw_pid=""
cleanup() {
  for pid in "$gw_pid" "$sim_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Waits for a pattern in a log file and prints its first capture group.
wait_for() {
  local file=$1 pattern=$2 pid=$3 value=""
  for _ in $(seq 1 200); do
    value=$(sed -n "s/$pattern/\1/p" "$file" | head -n1)
    [ -n "$value" ] && { echo "$value"; return 0; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$file" >&2
  return 1
}

step "1. test PKI in $PKI"
if [ -f "$PKI/ca.crt" ] && [ -f "$PKI/client1.key" ]; then
  echo "(already there: $(ls "$PKI" | tr '\n' ' '))"
else
  "$BIN/pqot" pki init --dir "$PKI" --clients 2 --client-role 2=operator
fi

step "2. a legacy PLC: pqot-modbus-sim (Modbus TCP, no authentication, no encryption)"
"$BIN/pqot-modbus-sim" --listen 127.0.0.1:0 --port-file "$work/sim.port" --fault exception --fault-start off \
  >"$work/sim.out" 2>"$work/sim.log" &
sim_pid=$!
for _ in $(seq 1 200); do [ -s "$work/sim.port" ] && break; sleep 0.05; done
sim_port=$(cat "$work/sim.port")
echo "PLC listening on 127.0.0.1:$sim_port (register map: docs/modbus-sim.md)"

step "3. srmcpd as the gateway in front of it ($TEMPLATE)"
sed "s/^port = 1502$/port = $sim_port/" "$TEMPLATE" >"$work/gateway.toml"
"$BIN/srmcpd" --check-config --config "$work/gateway.toml"
"$BIN/srmcpd" --config "$work/gateway.toml" --listen 127.0.0.1:0 --metrics 127.0.0.1:0 \
  --ca "$PKI/ca.crt" --cert "$PKI/server.crt" --key "$PKI/server.key" >"$work/gw.log" 2>&1 &
gw_pid=$!
port=$(wait_for "$work/gw.log" '.*srmcpd listening on [0-9.]*:\([0-9]*\).*' "$gw_pid")
metrics_port=$(wait_for "$work/gw.log" '.*metrics on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*' "$gw_pid")
grep -E "listening|metrics on|connected" "$work/gw.log" | sed 's/^[^ ]* //'

SRMCP=("$BIN/srmcp" --server "127.0.0.1:$port" --ca "$PKI/ca.crt" --cert "$PKI/client1.crt" --key "$PKI/client1.key")

step "4a. discover what the gateway offers (the PLC's points, named and typed)"
"${SRMCP[@]}" discover --depth 2

step "4b. read live values from the PLC and its energy meter, twice"
ids=(cell1.oven.temp cell1.oven.setpoint cell1.conveyor.running cell1.batch cell1.name cell1.meter.power_total
     cell1.meter.energy)
"${SRMCP[@]}" read "${ids[@]}"
sleep 1
"${SRMCP[@]}" read "${ids[@]}"

step "4c. write the oven set-point; the PLC holds it, and the oven temperature follows"
new=$(awk 'BEGIN { srand(); printf "%.1f", 190 + rand() * 20 }')
"${SRMCP[@]}" write "cell1.oven.setpoint=$new"
sleep 2
"${SRMCP[@]}" read cell1.oven.setpoint cell1.oven.temp

step "4d. subscribe to the oven temperature (polled every 100 ms by the gateway; 5 notifications)"
"${SRMCP[@]}" subscribe cell1.oven.temp --count 5 --interval 200

step "4e. the PLC develops a fault (it answers every request with Modbus exception 4)"
kill -USR1 "$sim_pid"
sleep 0.3
set +e
"${SRMCP[@]}" read cell1.oven.setpoint cell1.batch cell1.meter.energy
echo "exit code: $? (3 = a node reported an error status; DEVICE_EXCEPTION is 18, docs/srmcp.md §11)"
echo "(cell1.meter.energy is polled every 500 ms: it shows the last good poll until the next poll fails)"
set -e
kill -USR1 "$sim_pid"
sleep 0.6
echo "fault cleared:"
"${SRMCP[@]}" read cell1.oven.setpoint cell1.batch

step "5. the gateway's metrics (Prometheus, GET /metrics on 127.0.0.1:$metrics_port; excerpt)"
exec 3<>"/dev/tcp/127.0.0.1/$metrics_port"
printf 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n' >&3
grep -E '^(pqot_srmcp_sessions_total|pqot_srmcp_requests_total\{type="(read|write)"\}|pqot_modbus_device_up|pqot_modbus_transactions_total|pqot_modbus_errors_total\{device="plc1",kind="exception"\}|pqot_srmcp_request_duration_seconds_count)' <&3 || true
exec 3<&-

step "6. stop srmcpd and the PLC (SIGTERM)"
kill "$gw_pid"
wait "$gw_pid" || true
gw_pid=""
tail -n 1 "$work/gw.log"
kill "$sim_pid"
wait "$sim_pid" || true
sim_pid=""
echo
echo "demo finished: a legacy Modbus PLC, reached only through srmcpd: TLS 1.3 with an ML-KEM inner layer."

scripts/demo-signatures.sh
scripts/demo-srup-envelopes.sh
scripts/demo-srup.sh
if [ "$(id -u)" -eq 0 ]; then
  scripts/demo-trip.sh
else
  printf '\n\033[1m== T. TRIP: skipped, it needs root (network namespaces); run sudo make demo-trip\033[0m\n'
fi

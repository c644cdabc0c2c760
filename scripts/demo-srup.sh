#!/usr/bin/env bash
# SRUP-PQ over MQTT, the chapter of `make demo` (also `make demo-srup` alone; docs/srup-mqtt.md,
# docs/srup-operations.md). Everything runs in a temporary directory on free loopback ports:
#  Q1. a broker CA, the C2's identity and broker certificate; `srup broker-config` writes the
#      mosquitto configuration (TLS 1.3, client certificates, dynsec with the C2 as its admin);
#  Q2. mosquitto and srup-c2 start;
#  Q3. two energy meters and a telemetry monitor make their keys and are enrolled by the operator;
#  Q4. meter a1 joins at once (simple), meter a2 shows a one-time code that the operator types;
#  Q5. telemetry flows, sealed end to end, to `srup monitor`;
#  Q6. the C2 sends an action and an update (a wrong digest refused, the right one applied);
#  Q7. clients the broker refuses: no certificate, a CA-signed certificate nobody registered;
#  Q8. a captured command replayed at once (not run twice) and moved to another meter (refused);
#  Q9. the C2 stops and starts again, and carries on;
#  Q10. the captured command replayed after its lifetime: refused;
#  Q11. the C2's metrics, a registry backup; everything stops (also on failure or Ctrl-C: the trap below).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PQOT_BIN_DIR:-build/bin}  # the Release build (make build)
work=$(mktemp -d /tmp/pqot-demo-srup.XXXXXX)
chmod 0700 "$work"
pids=()
cleanup() {
  local rc=$? pid f
  if [ "$rc" -ne 0 ]; then
    for f in "$work"/broker/mosquitto.log "$work"/c2/c2.log "$work"/dev-*/device.log "$work"/monitor.err; do
      [ -f "$f" ] && { echo "--- last lines of $f" >&2; tail -n 15 "$f" >&2; }
    done
  fi
  # The agents first, the broker last; then any job a signal interrupted before it was recorded.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  done
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${PQOT_DEMO_KEEP:-}" ]; then echo "(kept $work: logs, configurations, state)"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
note() { printf '   %s\n' "$*"; }
# Log lines without their timestamp, cut to a readable width.
show() { sed -E 's/^\[?[0-9]{4}-[0-9-]+[T ][0-9:.]+\]? ?//' | cut -c1-150 | sed 's/^/   | /'; }
# wait_until WHAT SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds, or fails naming WHAT.
wait_until() {
  local what=$1 limit=$2
  shift 2
  for _ in $(seq 1 $((limit * 10))); do
    "$@" && return 0
    sleep 0.1
  done
  echo "demo-srup: timed out waiting for $what" >&2
  return 1
}
# A TCP port nobody listens on (the broker start retries with another one if it was taken meanwhile).
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
in_log() { grep -q -- "$2" "$1" 2>/dev/null; }
broker_up_or_gone() { port_open "$port" || ! kill -0 "$broker_pid" 2>/dev/null; }

C2_ID=00000000000000c2
A1=00000000000000a1
A2=00000000000000a2
MON=00000000000000e1
SRUP="$BIN/srup"
MOSQUITTO=$(command -v mosquitto || echo /usr/sbin/mosquitto)  # Debian's, in /usr/sbin
C2CTL=("$SRUP" c2 --socket "$work/c2/control.sock")

step "Q1. keys and certificates; the broker's configuration (srup broker-config)"
"$BIN/pqot" pki init --dir "$work/pki" --clients 1 >/dev/null
note "broker CA and server certificate: $work/pki (pqot pki init; client1.crt is CA-signed but registered nowhere)"
"$SRUP" keygen --id "$C2_ID" --out "$work/c2" | grep -E '^(id|suite)=' | sed 's/^/   C2 /'
"$BIN/pqot" pki csr --key "$work/c2/broker.key" --out "$work/c2/broker.csr" --cn "c2-$C2_ID" >/dev/null
"$BIN/pqot" pki issue --ca-dir "$work/pki" --csr "$work/c2/broker.csr" --cn "c2-$C2_ID" --days 30 \
  --out "$work/c2/broker.crt" | grep -E '^not_after=' | sed "s/^/   C2 broker certificate CN=c2-$C2_ID, /"
for attempt in 1 2 3 4 5; do
  port=$(free_port)
  "$SRUP" broker-config --dir "$work/broker" --port "$port" --ca "$work/pki/ca.crt" --cert "$work/pki/server.crt" \
    --key "$work/pki/server.key" --admin "c2-$C2_ID" --force >"$work/broker-config.out"
  if [ "$attempt" = 1 ]; then sed 's/^/   /' "$work/broker-config.out"; fi

  if [ "$attempt" = 1 ]; then
    step "Q2. the broker (mosquitto: TLS 1.3 only, client certificates required, no anonymous access) and srup-c2"
  fi
  "$MOSQUITTO" -c "$work/broker/mosquitto.conf" >"$work/broker/stdout" 2>&1 &
  broker_pid=$!
  pids+=("$broker_pid")
  wait_until "the broker" 10 broker_up_or_gone
  kill -0 "$broker_pid" 2>/dev/null && break
  if ! grep -q "Address already in use" "$work/broker/mosquitto.log" 2>/dev/null || [ "$attempt" = 5 ]; then
    cat "$work/broker/mosquitto.log" "$work/broker/stdout" >&2
    exit 1
  fi
done
note "mosquitto listening on localhost:$port"
grep -E "mosquitto version|Opening ipv4 listen socket|Loading plugin" "$work/broker/mosquitto.log" | cut -d' ' -f2- | sed 's/^/   | /'

metrics_port=$(free_port)
cat >"$work/c2/c2.toml" <<EOF
# The C2 of this demo (docs/srup-c2.md, "Configuration").
[c2]
state_dir = "$work/c2"

[broker]
host = "localhost"
port = $port
ca = "$work/pki/ca.crt"
cert = "$work/c2/broker.crt"
key = "$work/c2/broker.key"
reconnect_min_ms = 200
reconnect_max_ms = 2000

[enrolment]
ca_cert = "$work/pki/ca.crt"
ca_key = "$work/pki/ca.key"
cert_days = 30

[commands]
# Commands stay valid (and are retried) this long; short here, so that Q8 can show a captured
# command expire. Production: the defaults (60 s, 1 hour).
lifetime_ms = 15000
expire_after_s = 15
retry_initial_ms = 1000
retry_max_ms = 4000

[metrics]
listen = "127.0.0.1:$metrics_port"
EOF
"$BIN/srup-c2" --config "$work/c2/c2.toml" --check-config | sed "s|$work/||g; s/^/   /"
c2_connects() {
  local n
  n=$(grep -c "connected to the broker" "$work/c2/c2.log" 2>/dev/null || true)
  echo "${n:-0}"
}
c2_connected() { [ "$(c2_connects)" -gt "$c2_connects_before" ]; }
start_c2() {
  c2_connects_before=$(c2_connects)
  "$BIN/srup-c2" --config "$work/c2/c2.toml" >>"$work/c2/c2.log" 2>&1 &
  c2_pid=$!
  pids+=("$c2_pid")
  wait_until "srup-c2's broker connection" 20 c2_connected
  wait_until "srup-c2's control socket" 20 test -S "$work/c2/control.sock"
}
start_c2
show <"$work/c2/c2.log"

step "Q3. two meters and a monitor make their keys; the operator enrols them (srup c2 enrol)"
note "on each device: its SRUP-PQ identity (srup keygen) and a broker key and certificate request (pqot pki csr)"
for dev in "$A1" "$A2"; do
  d="$work/dev-$dev"
  "$SRUP" keygen --id "$dev" --out "$d" >/dev/null
  "$BIN/pqot" pki csr --key "$d/broker.key" --out "$d/broker.csr" --cn "dev-$dev" >/dev/null
done
"$SRUP" keygen --id "$MON" --out "$work/mon" >/dev/null
"$BIN/pqot" pki csr --key "$work/mon/broker.key" --out "$work/mon/broker.csr" --cn "mon-$MON" >/dev/null
note "at the C2: the operator enrols what the devices carried over (identity.pub, broker.csr)"
"${C2CTL[@]}" enrol --pub "$work/dev-$A1/identity.pub" --csr "$work/dev-$A1/broker.csr" --type meter \
  --join simple --out "$work/dev-$A1/bundle" | sed 's/^/   /'
"${C2CTL[@]}" enrol --pub "$work/dev-$A2/identity.pub" --csr "$work/dev-$A2/broker.csr" --type meter \
  --join human --out "$work/dev-$A2/bundle" | sed 's/^/   /'
"${C2CTL[@]}" enrol-monitor --pub "$work/mon/identity.pub" --csr "$work/mon/broker.csr" --out "$work/mon/bundle" \
  | sed 's/^/   /'
for dev in "$A1" "$A2"; do "${C2CTL[@]}" authorize "$MON" "$dev" >/dev/null; done
note "monitor $MON may read both meters (srup c2 authorize): the broker's ACLs and the meters' reader sets"
note "the C2 registered each at the broker (dynsec commands, from the broker's log):"
grep -E "dynsec: .*\| (createClient|addRoleACL \| rolename=mon-)" "$work/broker/mosquitto.log" | head -n 4 \
  | sed -E 's/^[0-9]+: dynsec: [^|]*\| //; s/ \| priority=0 \| allow=true//' | sed 's/^/   | /'
"${C2CTL[@]}" devices | sed 's/^/   /'

# Each meter: a 1-phase model reading every second, action 7 logs its argument, updates are
# applied by a small script (the device's configured apply command), file:// URLs only from
# $work/firmware.
mkdir -p "$work/firmware"
for dev in "$A1" "$A2"; do
  d="$work/dev-$dev"
  mkdir -p "$d/installed"
  cat >"$d/apply-update.sh" <<EOF
#!/bin/sh
# The device's apply command: installs the checked update file it is given.
cp "\$1" "$d/installed/firmware.bin" && echo "installed \$(wc -c <"\$1") bytes"
EOF
  chmod 0755 "$d/apply-update.sh"
  cat >"$d/device.toml" <<EOF
[device]
state_dir = "$d"
type = "meter"

[c2]
public_identity = "$d/bundle/c2.pub"

[broker]
host = "localhost"
port = $port
ca = "$d/bundle/ca.crt"
cert = "$d/bundle/broker.crt"
key = "$d/broker.key"
reconnect_min_ms = 200
reconnect_max_ms = 2000

[join]
mode = "$([ "$dev" = "$A1" ] && echo simple || echo human)"

[[action]]
id = 7
builtin = "log"

[update]
apply_program = "$d/apply-update.sh"
allowed_file_root = "$work/firmware"

[telemetry]
enabled = true
interval_ms = 1000
phases = 1
seed = $((16#${dev: -2}))
EOF
  "$BIN/srup-device" --config "$d/device.toml" --check-config | sed "s|$work/||g; s/^/   /"
done

step "Q4. the monitor connects; the meters start and join"
# The monitor's persistent session first, with its subscriptions: the broker keeps them, and queues
# what arrives for them, whenever the monitor itself connects (the meters send their telemetry key
# to each reader when they join, possibly before `srup monitor` is up).
mosquitto_sub -V mqttv5 -h localhost -p "$port" --cafile "$work/mon/bundle/ca.crt" --cert "$work/mon/bundle/broker.crt" \
  --key "$work/mon/broker.key" -i "mon-$MON" -c -x 3600 -q 1 -t "srup/$A1/tm" -t "srup/$A1/tk/$MON" \
  -t "srup/$A2/tm" -t "srup/$A2/tk/$MON" -E
note "monitor $MON's broker session holds its subscriptions (granted: it is authorized for both meters)"
"$SRUP" monitor --state "$work/mon" --device-pub "$work/dev-$A1/identity.pub" --device-pub "$work/dev-$A2/identity.pub" \
  --host localhost --port "$port" --ca "$work/mon/bundle/ca.crt" --cert "$work/mon/bundle/broker.crt" \
  --key "$work/mon/broker.key" >"$work/monitor.out" 2>"$work/monitor.err" &
mon_pid=$!
pids+=("$mon_pid")
for dev in "$A1" "$A2"; do
  "$BIN/srup-device" --config "$work/dev-$dev/device.toml" >"$work/dev-$dev/device.log" 2>&1 &
  pids+=("$!")
done
wait_until "meter $A1 to join" 30 in_log "$work/dev-$A1/device.log" "membership: joined"
note "meter $A1 (simple join): its signed Join Request was enough"
grep -E "started|connected to the broker|membership" "$work/dev-$A1/device.log" | show
wait_until "meter $A2's join code" 30 test -s "$work/dev-$A2/join-code"
note "meter $A2 (human join): the C2 sent it a one-time code, which it shows on its display (its code file):"
note "    [ $(cat "$work/dev-$A2/join-code") ]"
note "the operator reads it there and types it at the C2:"
echo "   \$ srup c2 join-code $A2 '$(cat "$work/dev-$A2/join-code")'"
"${C2CTL[@]}" join-code "$A2" "$(cat "$work/dev-$A2/join-code")" | sed 's/^/   /'
wait_until "meter $A2 to join" 30 in_log "$work/dev-$A2/device.log" "membership: joined"
grep -E "JOIN CODE|membership" "$work/dev-$A2/device.log" | show
"${C2CTL[@]}" devices | sed 's/^/   /'

step "Q5. telemetry: each meter seals every reading once for its readers (the C2 and the monitor)"
both_read() { grep -q "^$A1 " "$work/monitor.out" 2>/dev/null && grep -q "^$A2 " "$work/monitor.out" 2>/dev/null; }
wait_until "readings of both meters at the monitor" 30 both_read
sleep 3
note "srup monitor (authorized reader): verifies, decrypts and prints each reading (first lines, cut):"
head -n 6 "$work/monitor.out" | cut -c1-140 | sed 's/^/   | /'
note "what the broker carries on srup/$A1/tm is ciphertext only: it holds no telemetry key"

step "Q6. commands: an action, then an update (a wrong digest refused, the right one applied)"
# Capture the action's envelope as it crosses the broker, with the C2's own broker certificate
# (which may read srup/#): a persistent session subscribed now receives it later. Q8 replays it.
CAPTURE=(mosquitto_sub -V mqttv5 -h localhost -p "$port" --cafile "$work/pki/ca.crt" --cert "$work/c2/broker.crt"
         --key "$work/c2/broker.key" -i "c2-$C2_ID-capture" -t "srup/$A1/c2" -q 1)
"${CAPTURE[@]}" -c -x 600 -E
echo "   \$ srup c2 action $A1 7 --arg 'relay 2 on' --wait 10"
"${C2CTL[@]}" action "$A1" 7 --arg "relay 2 on" --wait 10 | sed 's/^/   /'
captured_at=$(date +%s)
"${CAPTURE[@]}" -c -x 600 -C 1 -N -W 10 >"$work/captured.bin"
"${CAPTURE[@]}" -E   # a clean start ends that session
grep -E "action log" "$work/dev-$A1/device.log" | show
note "the device ran it once and answered ACTION_SUCCESS; the C2 matched the answer by its token"

head -c 65536 /dev/urandom >"$work/firmware/meter-fw-2.1.bin"
digest=$(sha256sum "$work/firmware/meter-fw-2.1.bin" | cut -d' ' -f1)
wrong=$(printf '%064d' 0)
url="file://$work/firmware/meter-fw-2.1.bin"
note "firmware meter-fw-2.1.bin, SHA-256 $digest"
echo "   \$ srup c2 update $A1 $url --sha256 $wrong   (a wrong digest)"
"${C2CTL[@]}" update "$A1" "$url" --sha256 "$wrong" --wait 10 | sed 's/^/   /'
note "the device downloaded it, found another digest, deleted the file and did not apply it"
echo "   \$ srup c2 update $A1 $url --sha256 $digest"
out=$("${C2CTL[@]}" update "$A1" "$url" --sha256 "$digest" --wait 10)
echo "$out" | sed 's/^/   /'
token=$(echo "$out" | sed -n 's/^token \([0-9a-f]*\):.*/\1/p')
note "downloaded and checked (UPDATE_SUCCESS): the C2 now sends Update Activate with the same token"
applied() { "${C2CTL[@]}" command "$token" | grep -q ACTIVATE_SUCCESS; }
wait_until "the update to be applied" 30 applied
"${C2CTL[@]}" command "$token" | sed 's/^/   /'
note "the device's apply command ran on the checked file: $(cmp -s "$work/firmware/meter-fw-2.1.bin" \
  "$work/dev-$A1/installed/firmware.bin" && echo "installed firmware.bin is identical")"

step "Q7. clients the broker refuses"
MQ=(-h localhost -p "$port" --cafile "$work/pki/ca.crt" -V mqttv5 -q 1)
set +e
echo "   \$ mosquitto_sub -t 'srup/#'      (no client certificate)"
mosquitto_sub "${MQ[@]}" -i intruder -t 'srup/#' -C 1 -W 5 2>&1 | sed 's/^/   | /'
note "exit ${PIPESTATUS[0]}: the broker ends the TLS handshake (it requires a certificate of its CA)"
echo "   \$ mosquitto_sub --cert client1.crt -t srup/$A1/tm   (signed by the broker's CA, registered nowhere)"
mosquitto_sub "${MQ[@]}" --cert "$work/pki/client1.crt" --key "$work/pki/client1.key" -i client1 \
  -t "srup/$A1/tm" -C 1 -W 5 2>&1 | sed 's/^/   | /'
echo "   \$ mosquitto_pub --cert client1.crt -t srup/$A1/c2 -m 'open the breaker'"
mosquitto_pub "${MQ[@]}" --cert "$work/pki/client1.crt" --key "$work/pki/client1.key" -i client1 \
  -t "srup/$A1/c2" -m 'open the breaker' 2>&1 | sed 's/^/   | /'
set -e
note "a valid certificate connects, but nobody registered client1: SUBACK and PUBACK 0x87, nothing"
note "delivered (and had it been, meter $A1 obeys only envelopes signed by its C2). The broker's log:"
grep -E "certificate|client1|intruder" "$work/broker/mosquitto.log" | cut -d' ' -f2- | tail -n 6 | sed 's/^/   | /'

step "Q8. a captured command replayed (by someone holding the C2's broker certificate, not its key)"
note "captured in Q6: $(wc -c <"$work/captured.bin") bytes on srup/$A1/c2 (sealed to meter $A1, signed by the C2)"
mosquitto_pub "${MQ[@]}" --cert "$work/c2/broker.crt" --key "$work/c2/broker.key" -i "c2-$C2_ID-replay" \
  -t "srup/$A1/c2" -f "$work/captured.bin"
wait_until "the C2 to see the answer again" 10 in_log "$work/c2/c2.log" "refused from $A1: REPLAY"
note "the same bytes again at once: meter $A1's journal knows the command, so it is not run again"
note "('action log' lines in its log: $(grep -c "action log" "$work/dev-$A1/device.log")); the stored answer goes out again, and the C2,"
note "which has it already, drops that copy as a replay:"
grep -E "refused from $A1: REPLAY" "$work/c2/c2.log" | show
mosquitto_pub "${MQ[@]}" --cert "$work/c2/broker.crt" --key "$work/c2/broker.key" -i "c2-$C2_ID-replay" \
  -t "srup/$A2/c2" -f "$work/captured.bin"
wait_until "meter $A2's refusal" 10 in_log "$work/dev-$A2/device.log" "refused"
note "moved to meter $A2's topic: refused (the envelope names its topic and its recipient):"
grep -E "refused" "$work/dev-$A2/device.log" | show

step "Q9. the C2 stops and starts again, and carries on"
kill -TERM "$c2_pid"
wait "$c2_pid" || true
tail -n 1 "$work/c2/c2.log" | show
set +e
"${C2CTL[@]}" status >/dev/null 2>&1
note "while it is down: srup c2 exits $? (cannot reach the daemon); the meters keep measuring:"
set -e
before=$(grep -c "^$A1 " "$work/monitor.out" || true)
sleep 2
note "   the monitor took $(($(grep -c "^$A1 " "$work/monitor.out") - before)) more readings of $A1 in 2 s without the C2"
start_c2
grep -E "started|connected to the broker" "$work/c2/c2.log" | tail -n 2 | show
note "its registry, outbox, counters and replay windows are in SQLite: nothing to re-enrol, nobody re-joins"
"${C2CTL[@]}" devices | sed 's/^/   /'
echo "   \$ srup c2 action $A2 7 --arg 'after the restart' --wait 10"
"${C2CTL[@]}" action "$A2" 7 --arg "after the restart" --wait 10 | sed 's/^/   /'
grep -E "action log" "$work/dev-$A2/device.log" | show

left=$((captured_at + 16 - $(date +%s)))
if [ "$left" -gt 0 ]; then sleep "$left"; fi
step "Q10. the captured command once more, now that its 15-second lifetime is over"
mosquitto_pub "${MQ[@]}" --cert "$work/c2/broker.crt" --key "$work/c2/broker.key" -i "c2-$C2_ID-replay" \
  -t "srup/$A1/c2" -f "$work/captured.bin"
wait_until "meter $A1's refusal" 10 in_log "$work/dev-$A1/device.log" "refused: EXPIRED"
grep -E "refused" "$work/dev-$A1/device.log" | show
note "refused at the lifetime check, before the journal is asked: 'action log' lines in meter $A1's log: still $(grep -c "action log" "$work/dev-$A1/device.log")"

step "Q11. the C2's metrics (Prometheus, GET /metrics on 127.0.0.1:$metrics_port; excerpt), a backup, then everything stops"
exec 3<>"/dev/tcp/127.0.0.1/$metrics_port"
printf 'GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
grep -E '^srup_c2_(messages_received_total|refusals_total|devices\{state="joined"\}|devices_online|outbox_depth|telemetry_readings_total|command_round_trip_seconds_count)' <&3 \
  | sed 's/^/   /' || true
exec 3<&-
note "(counters since the C2's restart)"
if grep -q "DECRYPT_FAILED" "$work/c2/c2.log"; then
  note "DECRYPT_FAILED: readings that reached the restarted C2 before it held the meters' telemetry keys"
  note "again (it keeps them in memory only): it reads a meter again from its next key epoch (a new reader"
  note "set, or docs/srup-mqtt.md 4.6's periodic key resend). The monitor, which did not restart, read on."
fi
echo "   \$ srup c2 backup registry-backup.db      (a consistent copy of the registry while the C2 runs)"
"${C2CTL[@]}" backup "$work/registry-backup.db" | sed "s|$work/||; s/^/   /"
kill -INT "$mon_pid"
wait "$mon_pid" || true
note "the monitor's summary: $(cat "$work/monitor.err")"
for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
  pid=${pids[i]}
  if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; fi
done
note "$(tail -n 1 "$work/dev-$A1/device.log" | cut -d' ' -f3-) / $(tail -n 1 "$work/c2/c2.log" | cut -d' ' -f3-)"
echo
echo "SRUP-PQ chapter finished: a broker that admits registered identities only, a C2 and two meters"
echo "speaking signed and sealed post-quantum envelopes end to end, and a monitor reading their telemetry."

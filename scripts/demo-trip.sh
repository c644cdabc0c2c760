#!/usr/bin/env bash
# TRIP, the chapter of `make demo` (also `make demo-trip` alone; docs/trip.md, docs/tripd.md).
# Root is needed: the hosts are network namespaces made here and removed at the end.
#
#   sender ─ reflector ═╤═ 12 ms ═ relay r1 ─ 5 Mbit/s ─╤═ filter ─ receiver
#    (namespace src)     ╞═ 17 ms ═ relay r2 ───────────╡   (namespace dst)
#                        ╘═ 22 ms ═ relay r3 ───────────╛
#
#  T1. a test PKI whose certificates carry the role `trip`;
#  T2. the namespaces, linkem links of 12, 17 and 22 ms, and a 5 Mbit/s tbf on r1's link;
#  T3. the filter, three relays and the reflector start (tripd each), and their paths come up;
#  T4. an R-GOOSE-like sender (162 bytes every 10 ms) and a receiver counting what arrives, live;
#  T5. an attacker floods the fastest path: the receiver loses nothing, the path stops winning;
#  T6. a second relay is killed during the flood: one path is left, still nothing lost;
#  T7. the flood ends, the relay comes back, its path is re-established;
#  T8. the filter's metrics; everything stops (also on failure or Ctrl-C: the trap below).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PQOT_BIN_DIR:-build/bin}  # the Release build (make build)
if [ "$(id -u)" -ne 0 ]; then
  echo "demo-trip: needs root (it makes network namespaces, TUN devices and a tbf qdisc)" >&2
  exit 1
fi
work=$(mktemp -d /tmp/pqot-demo-trip.XXXXXX)
ns=tdemo-$$
namespaces=("$ns-src" "$ns-dst" "$ns-r1" "$ns-r2" "$ns-r3" "$ns-atk")
pids=()
cleanup() {
  local rc=$? pid n
  if [ "$rc" -ne 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- last lines of $f" >&2; tail -n 10 "$f" >&2; }; done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  pkill -f "tail -n \+2 -f $work/receiver.out" 2>/dev/null || true
  wait 2>/dev/null || true
  # Whatever still runs in a namespace (started but not yet recorded when a step failed) goes too,
  # or the namespace would live on unnamed.
  for n in "${namespaces[@]}"; do
    ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$n" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Namespaces left by a run that was killed (its pid gone) are swept first.
for n in $(ip netns list | awk '{ print $1 }' | grep '^tdemo-[0-9]*-' || true); do
  owner=${n#tdemo-}
  owner=${owner%%-*}
  if ! kill -0 "$owner" 2>/dev/null; then
    ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$n" 2>/dev/null || true
  fi
done

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
note() { printf '   %s\n' "$*"; }
show() { sed -E 's/^[0-9]{4}-[0-9-]+T[0-9:.]+ //' | cut -c1-150 | sed 's/^/   | /'; }
wait_until() {
  local what=$1 limit=$2
  shift 2
  for _ in $(seq 1 $((limit * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "demo-trip: timed out waiting for $what" >&2
  return 1
}
# A program in namespace $ns-NAME, in the background: `ip netns exec` execs it, so $! is its pid.
# (Not through a shell function: `f &` forks a subshell, and $! would be the subshell's.)
paths_up() { "$BIN/trip" status --socket "$work/reflector.sock" --json | grep -o '"up":true' | wc -l | grep -qx "$1"; }
status() { "$BIN/trip" status --socket "$work/$1.sock" | sed 's/^/   /'; }

step "T1. a test PKI in $work/pki: the reflector is client1, the filter the server, both with role trip"
"$BIN/pqot" pki init --dir "$work/pki" --clients 1 --client-role 1=trip --server-role trip | tail -n 1 | show

step "T2. six hosts (network namespaces) and their links"
for n in "${namespaces[@]}"; do ip netns add "$n"; ip -n "$n" link set lo up; done
delays=(12 17 22)
for i in 1 2 3; do
  "$BIN/linkem" --ns-a "$ns-src" --addr-a "10.77.$i.1/24" --ns-b "$ns-r$i" --addr-b "10.77.$i.2/24" \
    --delay-ms "${delays[i - 1]}" --dev "lk$i" >"$work/linkem$i.out" 2>"$work/linkem$i.log" &
  pids+=($!)
  wait_until "linkem $i" 10 grep -qx "linkem ready" "$work/linkem$i.out"
  ip -n "$ns-r$i" link add tva type veth peer name "tv$i" netns "$ns-dst"
  ip -n "$ns-r$i" addr add "10.78.$i.1/24" dev tva
  ip -n "$ns-dst" addr add "10.78.$i.2/24" dev "tv$i"
  ip -n "$ns-r$i" link set tva up
  ip -n "$ns-dst" link set "tv$i" up
  note "path p$i: reflector 10.77.$i.1 ── ${delays[i - 1]} ms (linkem) ── relay r$i ── veth ── filter 10.78.$i.2"
done
tc -n "$ns-r1" qdisc add dev tva root tbf rate 5mbit burst 16kb latency 200ms
note "r1's link to the filter is limited to 5 Mbit/s (tbf; at most 200 ms queued)"
ip -n "$ns-atk" link add ta0 type veth peer name tk0 netns "$ns-r1"
ip -n "$ns-atk" addr add 10.79.1.2/24 dev ta0
ip -n "$ns-r1" addr add 10.79.1.1/24 dev tk0
ip -n "$ns-atk" link set ta0 up
ip -n "$ns-r1" link set tk0 up
ip -n "$ns-atk" route add 10.78.1.0/24 via 10.79.1.1
ip netns exec "$ns-r1" sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
note "an attacker (10.79.1.2) sits on path p1's route, behind relay r1"

step "T3. tripd: the filter, three relays, the reflector"
pki=$work/pki
{
  printf '[identity]\nca = "%s/ca.crt"\ncert = "%s/server.crt"\nkey = "%s/server.key"\n' "$pki" "$pki" "$pki"
  for i in 1 2 3; do printf '[[path]]\nname = "p%s"\nnumber = %s\nlisten = "10.78.%s.2:4500"\npeers = ["client1"]\n' $i $i $i; done
  printf '[[flow]]\nid = 1\nname = "goose-feeder"\ndeliver = "127.0.0.1:10200"\n'
  printf '[metrics]\nlisten = "127.0.0.1:9472"\n[status]\nsocket = "%s/filter.sock"\n' "$work"
} >"$work/filter.toml"
{
  printf '[identity]\nca = "%s/ca.crt"\ncert = "%s/client1.crt"\nkey = "%s/client1.key"\n' "$pki" "$pki" "$pki"
  printf '[limits]\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n'
  for i in 1 2 3; do printf '[[path]]\nname = "p%s"\nnumber = %s\nconnect = "10.77.%s.2:4500"\nserver_name = "localhost"\n' $i $i $i; done
  printf '[[flow]]\nid = 1\nname = "goose-feeder"\nreflect = "127.0.0.1:10102"\n'
  printf '[status]\nsocket = "%s/reflector.sock"\n' "$work"
} >"$work/reflector.toml"
for i in 1 2 3; do
  printf '[[relay]]\nname = "r%s"\nlisten = "10.77.%s.2:4500"\nforward = "10.78.%s.2:4500"\n' $i $i $i >"$work/relay$i.toml"
done
"$BIN/tripd" --check-config --config "$work/filter.toml" | show
start_tripd() {  # NAMESPACE CONFIG
  ip netns exec "$ns-$1" "$BIN/tripd" --config "$work/$2.toml" 2>"$work/$2.log" &
  pids+=($!)
  eval "pid_$2=$!"
  wait_until "tripd $2" 10 grep -q "tripd started" "$work/$2.log"
}
start_tripd dst filter
for i in 1 2 3; do start_tripd "r$i" "relay$i"; done
start_tripd src reflector
wait_until "three paths up" 30 paths_up 3
grep -hE "relay r1:|started|session .* up" "$work/relay1.log" "$work/reflector.log" | show
status reflector

step "T4. a legacy sender (162 bytes every 10 ms) to the reflector, and the receiver behind the filter"
ip netns exec "$ns-dst" node scripts/lib/trip-traffic.mjs receive --listen 127.0.0.1:10200 >"$work/receiver.out" 2>&1 &
pids+=($!)
wait_until "the receiver" 10 grep -q "receiving on" "$work/receiver.out"
ip netns exec "$ns-src" node scripts/lib/trip-traffic.mjs send --to 127.0.0.1:10102 &
sender_pid=$!
pids+=("$sender_pid")
tail -n +2 -f "$work/receiver.out" | sed -u 's/^/   receiver: /' &
sleep 3.2
note "the filter: each datagram comes over three paths; the first copy is delivered (WON), the others are duplicates"
status filter

step "T5. the attacker floods path p1 (about 19 Mbit/s of UDP into its 5 Mbit/s link)"
ip netns exec "$ns-atk" node scripts/lib/trip-traffic.mjs flood --to 10.78.1.2:9 --rate 2000 --size 1200 &
flood_pid=$!
pids+=("$flood_pid")
sleep 4.2
status filter
tc -s -n "$ns-r1" qdisc show dev tva | grep -o "dropped [0-9]*" | sed 's/^/   r1 link: tbf /'

step "T6. relay r2 is killed during the flood: p3 alone carries the flow"
kill -9 "$pid_relay2"
wait "$pid_relay2" 2>/dev/null || true
sleep 3.2
status reflector

step "T7. the flood ends and r2 comes back"
kill "$flood_pid"
start_tripd r2 relay2
wait_until "three paths up again" 30 paths_up 3
sleep 2.2
pkill -f "tail -n \+2 -f $work/receiver.out" || true
status filter

step "T8. the sender stops; the filter's metrics (excerpt), and the end"
kill "$sender_pid"
sleep 1.2  # the receiver's next report counts the last datagrams
ip netns exec "$ns-dst" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9472; printf "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" >&3; cat <&3' |
  grep -E '^trip_(path_(won|duplicates|sessions)_total|flow_(delivered|duplicates)_total)' | sed 's/^/   /'
last=$(tail -n 1 "$work/receiver.out")
note "receiver, last report: $last"
case "$last" in
  *"missing 0, duplicates 0, foreign 0") note "every datagram the reflector took was delivered exactly once" ;;
  *) echo "demo-trip: the receiver lost or duplicated datagrams: $last" >&2; exit 1 ;;
esac
echo
echo "TRIP demo finished: a legacy UDP flow over three post-quantum secured paths (mutual TLS 1.3 + ML-KEM-768,"
echo "AES-256-GCM datagrams), first copy wins, through a flood and a lost relay, nothing lost."

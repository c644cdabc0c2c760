#!/usr/bin/env bash
# bench.linkem_selftest: two fresh network namespaces joined by linkem, measured with linkem-probe.
#   1. bad arguments and a missing namespace fail with one clear line;
#   2. delay 5 ms each way: median UDP RTT within [10, 13] ms, nothing lost, device gone after stop;
#   3. loss 0.2 A to B only (--loss 0.2 --b2a-loss 0): 1000 probes, delivered fraction in [0.70, 0.90];
#   4. rate 8 Mbit/s, 5 ms each way: 1 MB over TCP arrives intact in [0.95, 2.0] s.
# The bands are wide statistical checks of the emulator, not timings of product code.
# With --measure it runs no checks and prints median and p99 RTT for a veth pair and for linkem
# at one-way delays 0, 0.1 and 10 ms (the figures in README.md), passing any further arguments
# to linkem (e.g. --realtime 10).
# Usage: selftest.sh LINKEM PROBE [--measure [LINKEM-OPTION...]]
set -euo pipefail

linkem=$1
probe=$2
mode=${3:-check}

# 77: ctest's SKIP_RETURN_CODE for this test, so that it shows as skipped rather than passed.
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: bench.linkem_selftest needs root (network namespaces, TUN); skipped"
  exit 77
fi

ns_a=lkst-a-$$
ns_b=lkst-b-$$
tmp=$(mktemp -d)
linkem_pid=
server_pid=

cleanup() {
  for pid in $linkem_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for ns in "$ns_a" "$ns_b"; do ip netns del "$ns" 2>/dev/null || true; done
  ip link del lkst-v-$$ 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "linkem selftest: FAIL: $*" >&2
  for f in "$tmp"/linkem.err "$tmp"/server.err; do [ -s "$f" ] && sed 's/^/  | /' "$f" >&2; done
  exit 1
}

# field LINE KEY: the value of KEY=value in a probe's result line.
field() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
# within VALUE LO HI: LO <= VALUE <= HI, in floating point.
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }
# counter FILE DIRECTION KEY: a counter from linkem's --stats-json.
counter() { grep -o "\"$2\": {[^}]*}" "$1" | grep -o "\"$3\": [0-9]*" | awk '{ print $2 }'; }

# wait_line FILE LINE PID: until FILE holds LINE (5 s), or the process died.
wait_line() {
  for _ in $(seq 100); do
    grep -qx "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

start_linkem() {
  : >"$tmp/linkem.out"
  "$linkem" --ns-a "$ns_a" --addr-a 10.201.0.1/24 --ns-b "$ns_b" --addr-b 10.201.0.2/24 \
    --stats-json "$tmp/stats.json" "$@" >"$tmp/linkem.out" 2>"$tmp/linkem.err" &
  linkem_pid=$!
  wait_line "$tmp/linkem.out" "linkem ready" "$linkem_pid" || fail "linkem $* did not get ready"
}

stop_linkem() {
  kill -TERM "$linkem_pid"
  local rc=0
  wait "$linkem_pid" || rc=$?
  linkem_pid=
  [ "$rc" -eq 0 ] || fail "linkem exited with $rc on SIGTERM"
  [ -s "$tmp/stats.json" ] || fail "no --stats-json written"
}

start_server() {  # in namespace $1; keeps serving across linkem restarts (bound to 0.0.0.0)
  ip netns exec "$1" "$probe" serve --port 7777 >"$tmp/server.out" 2>"$tmp/server.err" &
  server_pid=$!
  wait_line "$tmp/server.out" "probe ready" "$server_pid" || fail "linkem-probe serve did not start"
}

udp() { ip netns exec "$ns_a" "$probe" udp --host "$1" --port 7777 "${@:2}"; }

ip netns add "$ns_a"
ip netns add "$ns_b"

if [ "$mode" = "--measure" ]; then
  report() {
    printf '%-24s median %8.1f us  p99 %8.1f us  min %8.1f us\n' "$1" "$(field "$2" median_us)" \
      "$(field "$2" p99_us)" "$(field "$2" min_us)"
  }
  # Baseline: a veth pair between the two namespaces.
  ip link add lkst-v-$$ type veth peer name lkst-w-$$
  ip link set lkst-v-$$ netns "$ns_a"
  ip link set lkst-w-$$ netns "$ns_b"
  ip -n "$ns_a" addr add 10.202.0.1/24 dev lkst-v-$$
  ip -n "$ns_b" addr add 10.202.0.2/24 dev lkst-w-$$
  for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
  ip -n "$ns_a" link set lkst-v-$$ up
  ip -n "$ns_b" link set lkst-w-$$ up
  start_server "$ns_b"
  sleep 1  # veth carrier and IPv6 DAD settle
  report "veth (no emulator)" "$(udp 10.202.0.2 --count 2000 --interval-ms 2)"
  for delay in 0 0.1 10; do
    start_linkem --delay-ms "$delay" "${@:4}"
    report "linkem delay $delay ms" "$(udp 10.201.0.2 --count 2000 --interval-ms 2)"
    stop_linkem
  done
  exit 0
fi

# 1. Errors: one line, non-zero exit.
for bad in "10.201.0.2/24 --loss 2" "10.201.0.2/24 --delay-ms -1" "10.201.0.2/24 --delay-ms nan" \
    "10.201.0.2" "10.202.0.2/24" "10.201.0.1/24" "10.201.0.2/24 --bogus"; do
  # shellcheck disable=SC2086  # word splitting of $bad is the point
  if "$linkem" --ns-a "$ns_a" --addr-a 10.201.0.1/24 --ns-b "$ns_b" --addr-b $bad \
      >"$tmp/out" 2>"$tmp/err"; then
    fail "linkem accepted --addr-b $bad"
  fi
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "linkem --addr-b $bad: not one line: $(cat "$tmp/err")"
done
if "$linkem" --ns-a lkst-none-$$ --addr-a 10.201.0.1/24 --ns-b "$ns_b" --addr-b 10.201.0.2/24 \
    >"$tmp/out" 2>"$tmp/err"; then
  fail "linkem accepted a missing namespace"
fi
grep -q "not found" "$tmp/err" || fail "missing namespace: $(cat "$tmp/err")"
ip -n "$ns_b" link show lk0 >/dev/null 2>&1 && fail "a failed start left lk0 behind"

start_server "$ns_b"

# 2. Delay.
start_linkem --delay-ms 5
res=$(udp 10.201.0.2 --count 200 --interval-ms 5 --wait-ms 500)
echo "delay 5 ms each way: $res"
[ "$(field "$res" received)" = 200 ] || fail "probes lost without loss: $res"
within "$(field "$res" median_us)" 10000 13000 || fail "median RTT not in [10, 13] ms: $res"
ip -n "$ns_a" link show lk0 >/dev/null || fail "no lk0 in $ns_a while linkem runs"
stop_linkem
[ "$(counter "$tmp/stats.json" a2b packets)" -ge 200 ] || fail "stats: $(cat "$tmp/stats.json")"
ip -n "$ns_a" link show lk0 >/dev/null 2>&1 && fail "lk0 still in $ns_a after linkem stopped"

# 3. Loss, one direction only.
start_linkem --delay-ms 1 --loss 0.2 --b2a-loss 0 --seed 7
res=$(udp 10.201.0.2 --count 1000 --interval-ms 1 --wait-ms 500)
echo "loss 0.2 A to B: $res"
within "$(field "$res" fraction)" 0.70 0.90 || fail "delivered fraction not in [0.70, 0.90]: $res"
stop_linkem
[ "$(counter "$tmp/stats.json" a2b dropped_loss)" -gt 0 ] || fail "stats: $(cat "$tmp/stats.json")"
[ "$(counter "$tmp/stats.json" b2a dropped_loss)" -eq 0 ] || fail "b2a lost: $(cat "$tmp/stats.json")"

# 4. Rate, over TCP.
start_linkem --delay-ms 5 --rate-mbit 8
res=$(ip netns exec "$ns_a" "$probe" tcp --host 10.201.0.2 --port 7777 --bytes 1000000) ||
  fail "TCP transfer failed: $res"
echo "rate 8 Mbit/s, 1 MB over TCP: $res"
within "$(field "$res" seconds)" 0.95 2.0 || fail "1 MB at 8 Mbit/s not in [0.95, 2.0] s: $res"
stop_linkem

echo "linkem selftest: PASS"

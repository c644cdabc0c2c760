#!/bin/sh
# Instructions (callgrind Ir) per SRMCP request, server and client, for a READ of ten int64 nodes
# and a WRITE of one (the benchmark's requests, bench/README.md), on loopback:
#   bench/callgrind/srmcp_requests.sh [BUILD_DIR] [N] [ENCODING]
# srmcpd (bench/config/srmcpd-bench.toml) and srmcp-bench each run under callgrind twice: with N
# reads and then with 2N reads (and as many writes, in a third pair of runs, with 0 reads beyond
# the few the client always makes). The difference between the two runs divided by N is the cost
# of one request, free of start-up, connect and shutdown. Defaults: build, 2000, compact.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-2000}
encoding=${3:-compact}
command -v valgrind >/dev/null || { echo "srmcp_requests.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
for p in srmcpd srmcp-bench pqot; do
  [ -x "$build/bin/$p" ] || { echo "srmcp_requests.sh: $build/bin/$p is missing (make build)" >&2; exit 1; }
done
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$build/bin/pqot" pki init --dir "$work/pki" --clients 1 --server-name 127.0.0.1 >/dev/null
port=$((20000 + $$ % 5000))

# Total Ir of a callgrind output file.
total_ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}'; }

# One measurement: srmcpd and srmcp-bench under callgrind, READS reads and WRITES writes.
# Prints "server_ir client_ir".
run() {
  reads=$1 writes=$2 tag=$3
  valgrind --tool=callgrind --callgrind-out-file="$work/server.$tag" "$build/bin/srmcpd" \
      --config "$root/bench/config/srmcpd-bench.toml" --listen "127.0.0.1:$port" \
      --ca "$work/pki/ca.crt" --cert "$work/pki/server.crt" --key "$work/pki/server.key" \
      --log-level warn >"$work/server.$tag.log" 2>&1 &
  server_pid=$!
  # Ready once it accepts TLS (it is slow to start under valgrind).
  i=0
  until "$build/bin/srmcp-bench" latency --port "$port" --ca "$work/pki/ca.crt" --cert "$work/pki/client1.crt" \
      --key "$work/pki/client1.key" --n 1 --connects 0 --warmup 0 --links 0 >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 120 ] || { echo "srmcp_requests.sh: srmcpd did not start:" >&2; cat "$work/server.$tag.log" >&2; exit 1; }
    sleep 0.5
  done
  # The readiness probe above is in the server's count; it is the same in every run, so the
  # difference of two runs does not see it.
  valgrind --tool=callgrind --callgrind-out-file="$work/client.$tag" "$build/bin/srmcp-bench" latency \
      --port "$port" --ca "$work/pki/ca.crt" --cert "$work/pki/client1.crt" --key "$work/pki/client1.key" \
      --n "$reads" --writes "$writes" --connects 0 --warmup 0 --links 1 --encoding "$encoding" \
      >"$work/client.$tag.json" 2>"$work/client.$tag.log" ||
    { echo "srmcp_requests.sh: srmcp-bench failed:" >&2; cat "$work/client.$tag.log" >&2; exit 1; }
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=
  echo "$(total_ir "$work/server.$tag") $(total_ir "$work/client.$tag")"
}

set -- $(run "$n" 0 r1) $(run $((2 * n)) 0 r2) $(run 1 "$n" w1) $(run 1 $((2 * n)) w2)
printf 'SRMCP %s bodies, Ir per request (callgrind, difference of runs of %d and %d)\n' "$encoding" "$n" $((2 * n))
printf '%-28s %12s %12s\n' "" server client
printf '%-28s %12d %12d\n' "READ of ten int64 nodes" $((($3 - $1) / n)) $((($4 - $2) / n))
printf '%-28s %12d %12d\n' "WRITE of one int64 node" $((($7 - $5) / n)) $((($8 - $6) / n))

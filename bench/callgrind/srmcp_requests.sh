#!/bin/sh
# Instructions (callgrind Ir) or heap allocations per SRMCP request, server and client, for a READ
# of ten int64 nodes and a WRITE of one (the benchmark's requests, bench/README.md), on loopback:
#   bench/callgrind/srmcp_requests.sh [BUILD_DIR] [N] [ENCODING] [ir | allocs]
# srmcpd (bench/config/srmcpd-bench.toml) and srmcp-bench each run twice: with N reads and then
# with 2N reads (and as many writes, in a third pair of runs, with 0 reads beyond the few the
# client always makes). The difference between the two runs divided by N is the cost of one
# request, free of start-up, connect and shutdown. `ir` runs both under callgrind; `allocs` runs
# them natively with BUILD_DIR/lib/pqot_alloc_count.so preloaded (bench/alloc), which counts
# malloc, calloc, realloc and the aligned allocations. Defaults: build, 2000, compact, ir.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-2000}
encoding=${3:-compact}
mode=${4:-ir}
case $mode in
  ir) command -v valgrind >/dev/null || { echo "srmcp_requests.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 1; } ;;
  allocs) [ -f "$build/lib/pqot_alloc_count.so" ] || { echo "srmcp_requests.sh: $build/lib/pqot_alloc_count.so is missing (make build)" >&2; exit 1; } ;;
  *) echo "srmcp_requests.sh: the mode is ir or allocs, not $mode" >&2; exit 2 ;;
esac
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

# Becomes a program measured: under callgrind, or with the allocation counter; OUT names the
# output. It execs (so that $! of `measured ... &` is the program's pid): call it in a subshell.
measured() {
  out=$1
  shift
  if [ "$mode" = ir ]; then
    exec valgrind --tool=callgrind --callgrind-out-file="$out" "$@"
  else
    LD_PRELOAD="$build/lib/pqot_alloc_count.so" PQOT_ALLOC_COUNT_FILE="$out" exec "$@"
  fi
}
# The total of a measurement: Ir of a callgrind output file, or the allocation count.
total() {
  if [ "$mode" = ir ]; then
    callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}'
  else
    [ -s "$1" ] || { echo "srmcp_requests.sh: no allocation count in $1 (did the program exit normally?)" >&2; exit 1; }
    cat "$1"
  fi
}

# One measurement: srmcpd and srmcp-bench under callgrind, READS reads and WRITES writes.
# Prints "server_ir client_ir".
run() {
  reads=$1 writes=$2 tag=$3
  measured "$work/server.$tag" "$build/bin/srmcpd" \
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
  (measured "$work/client.$tag" "$build/bin/srmcp-bench" latency \
      --port "$port" --ca "$work/pki/ca.crt" --cert "$work/pki/client1.crt" --key "$work/pki/client1.key" \
      --n "$reads" --writes "$writes" --connects 0 --warmup 0 --links 1 --encoding "$encoding" \
      >"$work/client.$tag.json" 2>"$work/client.$tag.log") ||
    { echo "srmcp_requests.sh: srmcp-bench failed:" >&2; cat "$work/client.$tag.log" >&2; exit 1; }
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=
  echo "$(total "$work/server.$tag") $(total "$work/client.$tag")"
}

set -- $(run "$n" 0 r1) $(run $((2 * n)) 0 r2) $(run 1 "$n" w1) $(run 1 $((2 * n)) w2)
if [ "$mode" = ir ]; then what="Ir per request (callgrind"; else what="allocations per request (pqot_alloc_count"; fi
printf 'SRMCP %s bodies, %s, difference of runs of %d and %d)\n' "$encoding" "$what" "$n" $((2 * n))
# Per request, to one decimal (allocations are few, so their fraction matters).
per() { awk -v a="$1" -v b="$2" -v n="$n" 'BEGIN { printf "%12.1f", (b - a) / n }'; }
printf '%-28s %12s %12s\n' "" server client
printf '%-28s %s %s\n' "READ of ten int64 nodes" "$(per "$1" "$3")" "$(per "$2" "$4")"
printf '%-28s %s %s\n' "WRITE of one int64 node" "$(per "$5" "$7")" "$(per "$6" "$8")"

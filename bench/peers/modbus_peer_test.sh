#!/bin/sh
# bench.modbus_peer: modbus-bench-server on loopback, modbus-bench-client in latency mode against it;
# the client's JSON must follow bench/README.md ("The bench-client contract") and read back what
# it wrote. Usage: modbus_peer_test.sh SERVER CLIENT
set -eu
server=$1
client=$2
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A random port in 20000..20999; another one if it is taken.
start_server() {
  for _ in 1 2 3 4 5; do
    port=$(node -e 'console.log(20000 + Math.floor(Math.random() * 1000))')
    : >"$tmp/ready"
    "$server" --host 127.0.0.1 --port "$port" >"$tmp/ready" 2>"$tmp/server.err" &
    pid=$!
    i=0
    while [ $i -lt 100 ]; do
      if grep -qx 'modbus server ready' "$tmp/ready"; then return 0; fi
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      sleep 0.05
      i=$((i + 1))
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    cat "$tmp/server.err" >&2
  done
  echo "modbus_peer_test: the server did not start" >&2
  exit 1
}

# check FILE N C: the latency JSON of a run with --n N --connects C.
check() {
  node -e '
    const [file, n, c] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
    const j = JSON.parse(require("fs").readFileSync(file, "utf8"));
    const fail = (m) => { console.error("modbus_peer_test: " + m); process.exit(1); };
    if (j.protocol !== "modbus") fail("protocol " + j.protocol);
    if (j.readback_ok !== true) fail("readback_ok is " + j.readback_ok);
    if (j.errors !== 0) fail("errors: " + j.errors);
    if (!/^libmodbus \d+\.\d+\.\d+$/.test(j.version)) fail("version " + j.version);
    for (const [phase, count] of [["connect", c], ["read", n], ["write", n]]) {
      const p = j[phase];
      if (!p || !Array.isArray(p.samples_us)) fail(phase + ": no samples_us");
      if (p.samples_us.length !== count) fail(phase + ": " + p.samples_us.length + " samples, expected " + count);
      if (!p.samples_us.every((x) => typeof x === "number" && x > 0)) fail(phase + ": a sample is not a positive number");
      if (!(Number.isInteger(p.bytes) && p.bytes >= 0)) fail(phase + ": bytes " + p.bytes);
      if (!(typeof p.cpu_client_us === "number" && p.cpu_client_us >= 0)) fail(phase + ": cpu_client_us " + p.cpu_client_us);
      if (!(typeof p.cpu_server_us === "number" && p.cpu_server_us >= 0)) fail(phase + ": cpu_server_us " + p.cpu_server_us);
    }
  ' "$1" "$2" "$3"
}

start_server
"$client" latency --host 127.0.0.1 --port "$port" --n 50 --connects 3 --warmup 2 --server-pid "$pid" >"$tmp/a.json"
check "$tmp/a.json" 50 3
# A fresh client, plain options (no subcommand): it reads back what the first one left, and writes again.
"$client" --host 127.0.0.1 --port "$port" --n 7 --connects 1 --warmup 0 --server-pid "$pid" >"$tmp/b.json"
check "$tmp/b.json" 7 1

# Throughput, briefly: some reads, no errors, pipeline reported as 1.
"$client" throughput --host 127.0.0.1 --port "$port" --clients 4 --seconds 0.3 --pipeline 4 >"$tmp/t.json"
node -e '
  const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const ok = j.protocol === "modbus" && j.clients === 4 && j.pipeline === 1 && j.ops > 0 && j.errors === 0 &&
    j.seconds > 0 && j.ops_per_s > 0 && typeof j.note === "string" && j.cpu_server_us === null;
  if (!ok) { console.error("modbus_peer_test: bad throughput JSON: " + JSON.stringify(j)); process.exit(1); }
' "$tmp/t.json"

# A server that is gone: the client fails with one line on stderr.
kill "$pid"
wait "$pid" || { echo "modbus_peer_test: the server did not exit cleanly on SIGTERM" >&2; exit 1; }
pid=
if "$client" --host 127.0.0.1 --port "$port" --n 1 --connects 0 --warmup 0 >"$tmp/c.json" 2>"$tmp/c.err"; then
  echo "modbus_peer_test: the client succeeded without a server" >&2
  exit 1
fi
[ "$(wc -l <"$tmp/c.err")" -eq 1 ] || { echo "modbus_peer_test: expected one error line:" >&2; cat "$tmp/c.err" >&2; exit 1; }
echo "modbus_peer_test: ok"

#!/usr/bin/env node
// Legacy traffic for the TRIP demo (scripts/demo-trip.sh): an R-GOOSE-like sender, a receiver that
// counts what arrives, and a UDP flood. Node's dgram only; each runs until SIGTERM (the flood also
// until --seconds).
//
//   trip-traffic.mjs send    --to HOST:PORT [--interval-ms 10] [--size 162]
//   trip-traffic.mjs receive --listen HOST:PORT [--report-ms 1000]
//   trip-traffic.mjs flood   --to HOST:PORT [--rate 2000] [--size 1200] [--seconds 0]
//
// The sender numbers its datagrams (u32 big-endian in the first four bytes, the rest a pattern of
// the number). Every --report-ms the receiver prints one line: datagrams received in the interval,
// the total, and over the whole run the numbers missing between the first and the highest seen,
// the duplicates, and datagrams that were not the sender's.
import dgram from "node:dgram";

function usage(msg) {
  process.stderr.write(`trip-traffic: ${msg}\n`);
  process.exit(2);
}

function parse(argv) {
  const [mode, ...rest] = argv;
  const opts = {};
  for (let i = 0; i < rest.length; i += 2) {
    if (!rest[i].startsWith("--") || rest[i + 1] === undefined) usage(`bad argument ${rest[i]}`);
    opts[rest[i].slice(2)] = rest[i + 1];
  }
  return { mode, opts };
}

function hostPort(text, what) {
  const at = (text ?? "").lastIndexOf(":");
  const port = Number(text?.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) usage(`${what} must be HOST:PORT`);
  return { host: text.slice(0, at), port };
}

function datagram(seq, size) {
  const d = Buffer.alloc(size);
  d.writeUInt32BE(seq >>> 0, 0);
  let x = (Math.imul(seq, 2654435761) + 1) >>> 0;
  for (let i = 4; i < size; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    d[i] = x >>> 24;
  }
  return d;
}

function send(opts) {
  const to = hostPort(opts.to, "--to");
  const interval = Number(opts["interval-ms"] ?? 10);
  const size = Number(opts.size ?? 162);
  const socket = dgram.createSocket("udp4");
  socket.on("error", () => {}); // nothing listening yet: the datagram is gone, as from a real device
  let seq = 0;
  const start = process.hrtime.bigint();
  const tick = () => {
    // Catch up to the schedule, so that the rate holds when a timer fires late.
    const due = Number((process.hrtime.bigint() - start) / 1000000n) / interval;
    while (seq <= due) socket.send(datagram(seq++, size), to.port, to.host);
  };
  setInterval(tick, interval);
  process.on("SIGTERM", () => process.exit(0));
}

function receive(opts) {
  const at = hostPort(opts.listen, "--listen");
  const every = Number(opts["report-ms"] ?? 1000);
  const socket = dgram.createSocket("udp4");
  const seen = new Map();
  let first = -1, highest = -1, interval = 0, total = 0, duplicates = 0, foreign = 0;
  socket.on("message", (msg) => {
    const seq = msg.length >= 4 ? msg.readUInt32BE(0) : -1;
    if (seq < 0 || !msg.equals(datagram(seq, msg.length))) {
      foreign++;
      return;
    }
    if (seen.has(seq)) {
      duplicates++;
      return;
    }
    seen.set(seq, true);
    if (first < 0 || seq < first) first = seq;
    if (seq > highest) highest = seq;
    interval++;
    total++;
  });
  socket.bind(at.port, at.host, () => process.stdout.write(`receiving on ${opts.listen}\n`));
  setInterval(() => {
    const missing = first < 0 ? 0 : highest - first + 1 - seen.size;
    process.stdout.write(
      `received ${String(interval).padStart(4)} in the last ${every} ms, ${String(total).padStart(6)} in all; ` +
        `missing ${missing}, duplicates ${duplicates}, foreign ${foreign}\n`,
    );
    interval = 0;
  }, every);
  process.on("SIGTERM", () => process.exit(0));
}

function flood(opts) {
  const to = hostPort(opts.to, "--to");
  const rate = Number(opts.rate ?? 2000);
  const size = Number(opts.size ?? 1200);
  const seconds = Number(opts.seconds ?? 0);
  const socket = dgram.createSocket("udp4");
  socket.on("error", () => {});
  const junk = Buffer.alloc(size, 0x5a);
  const perTick = Math.max(1, Math.round(rate / 100));
  setInterval(() => {
    for (let i = 0; i < perTick; i++) socket.send(junk, to.port, to.host);
  }, 10);
  if (seconds > 0) setTimeout(() => process.exit(0), seconds * 1000);
  process.on("SIGTERM", () => process.exit(0));
}

const { mode, opts } = parse(process.argv.slice(2));
if (mode === "send") send(opts);
else if (mode === "receive") receive(opts);
else if (mode === "flood") flood(opts);
else usage("the first argument is send, receive or flood");

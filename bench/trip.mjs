#!/usr/bin/env node
// `make bench-trip`: TRIP (docs/trip.md) measured in network namespaces (docs/benchmarks.md, "TRIP";
// bench/README.md, "TRIP"). Root is needed (namespaces, TUN, tc).
//
//   sudo node bench/trip.mjs [--rounds 3] [--smoke] [--out bench/results] [--bin-dir build/bin]
//                            [--doc docs/benchmarks.md] [--img docs/img] [--no-report]
//
// The three-path lab (tests/trip/netns's setup): namespaces src, dst, r1..r3 and atk;
//   src ═ linkem 12/17/22 ms ═ r1/r2/r3 (tripd relays) ─ veth ─ dst
// with a 5 Mbit/s tbf on r1's veth towards dst, and atk routed through r1 to flood it.
// Scenarios, in interleaved rounds (every contender once per round, medians over rounds reported):
//   overhead   N = 1, 2, 3 TRIP paths (and wireguard-go over path 1) for a steady R-GOOSE-like
//              stream: IP bytes on the path links (r1..r3's TUN counters, both directions), data,
//              keepalives and control, against N x (1 + 28/190) - 1;
//   loopback   in one namespace: sender -> receiver directly, and sender -> reflector -> filter ->
//              receiver (one path on 127.0.0.1): the latency TRIP adds (target < 50 us at p50);
//   paths      one-way latency and loss through the lab with and without a flood on the 12 ms
//              path: TRIP over 3 paths, TRIP over the flooded path alone, wireguard-go over the
//              flooded path, plain UDP through the relay over the flooded path;
//   throughput datagrams blasted through reflector + filter on loopback: delivered per second and
//              per CPU-second of each tripd.
// Writes <out>/trip-<timestamp>.json and <out>/trip-latest.json, then (unless --no-report or
// --smoke) renders docs/benchmarks.md's TRIP section and the plots (bench/trip-report.mjs).

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import {
  createNamespace,
  deleteOwnNamespaces,
  namespaceName,
  removeStaleNamespaces,
} from "./lib/netns.mjs";
import { Service, killAllChildren, parseClientJson, runClient } from "./lib/procs.mjs";
import { round } from "./lib/stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    smoke: { type: "boolean", default: false },
    out: { type: "string", default: path.join(HERE, "results") },
    "bin-dir": { type: "string", default: path.join(REPO, "build", "bin") },
    doc: { type: "string", default: path.join(REPO, "docs", "benchmarks.md") },
    img: { type: "string", default: path.join(REPO, "docs", "img") },
    "no-report": { type: "boolean", default: false },
    scenarios: { type: "string", default: "overhead,loopback,paths,throughput" },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1, 24).join("\n"));
  process.exit(0);
}
if (process.getuid() !== 0) {
  console.error("bench/trip.mjs: needs root (network namespaces, TUN devices, tc)");
  process.exit(77);
}

const SMOKE = args.smoke;
const ROUNDS = SMOKE ? 1 : Number(args.rounds);
const SCENARIOS = args.scenarios.split(",");
// Sizes of each measurement: R-GOOSE-like, 162 bytes every 10 ms.
const P = SMOKE
  ? { overheadSeconds: 2, latencyCount: 100, loopbackCount: 200, blastCount: 20000, warmup: 10 }
  : { overheadSeconds: 15, latencyCount: 1000, loopbackCount: 1000, blastCount: 300000, warmup: 20 };
const INTERVAL_US = 10000;
const DENSE_INTERVAL_US = 1000;
const SIZE = 162;
const DELAYS_MS = [12, 17, 22];
const FLOOD = { pps: 2000, size: 1200, rate: "5mbit", burst: "16kb", latency: "200ms" };
const BIN = path.resolve(args["bin-dir"]);
const bin = (name) => path.join(BIN, name);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "pqot-trip-bench-"));
const wgNames = { src: `wgs${process.pid}`, dst: `wgd${process.pid}` };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (text) => process.stderr.write(`bench-trip: ${text}\n`);

// ---- the way out: children, namespaces, files -------------------------------------------------

function cleanup() {
  killAllChildren("SIGKILL");
  deleteOwnNamespaces();
  for (const name of Object.values(wgNames)) fs.rmSync(`/var/run/wireguard/${name}.sock`, { force: true });
  fs.rmSync(work, { recursive: true, force: true });
}
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}

// ---- small tools ------------------------------------------------------------------------------

function run(argv, opts = {}) {
  return execFileSync(argv[0], argv.slice(1), { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...opts });
}
const ip = (...a) => run(["ip", ...a]);
const nsRun = (ns, argv, opts) => run(["ip", "netns", "exec", ns, ...argv], opts);

function cpuSeconds(pid) {
  // /proc/PID/stat fields 14 and 15 (utime, stime) in clock ticks; the command may hold spaces.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}
const CLK_TCK = Number(run(["getconf", "CLK_TCK"]).trim());

/** Prometheus text from a tripd's metrics port inside `ns`, as {`name{labels}`: value}. */
function metrics(ns, port) {
  const text = nsRun(ns, ["curl", "-sf", "--max-time", "5", `http://127.0.0.1:${port}/metrics`]);
  const out = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out[line.slice(0, i)] = Number(line.slice(i + 1));
  }
  return out;
}
const metricSum = (m, prefix) =>
  Object.entries(m).filter(([k]) => k === prefix || k.startsWith(`${prefix}{`)).reduce((a, [, v]) => a + v, 0);
const pathMetric = (m, name, p) => m[`${name}{path="${p}"}`] ?? 0;

/** IP bytes through interface `dev` of namespace `ns`, both directions (/proc/net/dev). */
function devBytes(ns, dev) {
  const text = nsRun(ns, ["cat", "/proc/net/dev"]);
  const line = text.split("\n").find((l) => l.trim().startsWith(`${dev}:`));
  if (!line) throw new Error(`no ${dev} in ${ns}`);
  const f = line.split(":")[1].trim().split(/\s+/).map(Number);
  return { rx: f[0], rx_packets: f[1], tx: f[8], tx_packets: f[9] };
}

async function probe(argv, what) {
  const r = await runClient([bin("trip-probe"), "stream", ...argv], { timeoutMs: 600000 });
  if (r.code !== 0) throw new Error(`trip-probe (${what}) failed (${r.code}): ${r.stderr}`);
  return parseClientJson(r.stdout);
}

function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

// ---- PKI (openssl): what tripd requires (docs/tripd.md, [identity]) -----------------------------

function makePki(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const o = (...a) => run(["openssl", ...a], { cwd: dir });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  o("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=bench-trip CA",
    "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  const leaf = (name, cn, eku, san) => {
    fs.writeFileSync(path.join(dir, `${name}.ext`),
      `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=${eku}\n` +
        (san ? `subjectAltName=${san}\n` : ""));
    o("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}/OU=trip`);
    o("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
      "-out", `${name}.crt`, "-extfile", `${name}.ext`);
    fs.chmodSync(path.join(dir, `${name}.key`), 0o600);
  };
  leaf("server", "localhost", "serverAuth", "DNS:localhost,IP:127.0.0.1");
  leaf("client1", "client1", "clientAuth", null);
}

// ---- tripd ------------------------------------------------------------------------------------

const REFLECTOR_METRICS = 9471;
const FILTER_METRICS = 9472;

function identity(who) {
  const pki = path.join(work, "pki");
  return `[identity]\nca = "${pki}/ca.crt"\ncert = "${pki}/${who}.crt"\nkey = "${pki}/${who}.key"\n`;
}

/** A filter (listening) and a reflector (connecting) config over `paths` [{name, number, listen, connect}]. */
function pairConfigs(paths) {
  let filter = identity("server");
  let reflector = identity("client1") + "[limits]\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n";
  for (const p of paths) {
    filter += `[[path]]\nname = "${p.name}"\nnumber = ${p.number}\nlisten = "${p.listen}"\npeers = ["client1"]\n`;
    reflector += `[[path]]\nname = "${p.name}"\nnumber = ${p.number}\nconnect = "${p.connect}"\nserver_name = "localhost"\n`;
  }
  filter += `[[flow]]\nid = 1\nname = "goose"\ndeliver = "127.0.0.1:10200"\n[metrics]\nlisten = "127.0.0.1:${FILTER_METRICS}"\n`;
  reflector += `[[flow]]\nid = 1\nname = "goose"\nreflect = "127.0.0.1:10102"\n[metrics]\nlisten = "127.0.0.1:${REFLECTOR_METRICS}"\n`;
  return { filter, reflector };
}

async function startTripd(ns, name, config) {
  const file = path.join(work, `${name}.toml`);
  fs.writeFileSync(file, config);
  const svc = new Service(name, ["ip", "netns", "exec", ns, bin("tripd"), "--config", file],
                          { logFile: path.join(work, `${name}.log`) });
  await svc.waitReady("tripd started", 10000);
  return svc;
}

/** Filter in `dstNs`, reflector in `srcNs`, every path up. */
async function startPair(srcNs, dstNs, paths, tag) {
  const c = pairConfigs(paths);
  const filter = await startTripd(dstNs, `filter-${tag}`, c.filter);
  const reflector = await startTripd(srcNs, `reflector-${tag}`, c.reflector);
  const deadline = Date.now() + 30000;
  for (;;) {
    const m = metrics(srcNs, REFLECTOR_METRICS);
    if (paths.every((p) => pathMetric(m, "trip_path_up", p.name) === 1)) break;
    if (Date.now() > deadline) {
      throw new Error(`paths not up after 30 s:\n${reflector.output.text()}\n${filter.output.text()}`);
    }
    await sleep(100);
  }
  return {
    filter, reflector, srcNs, dstNs,
    async stop() {
      await reflector.stop();
      await filter.stop();
    },
  };
}

// ---- the three-path lab -----------------------------------------------------------------------

async function buildLab() {
  const lab = { src: namespaceName("src"), dst: namespaceName("dst"), atk: namespaceName("atk"), r: [], linkems: [], relays: [] };
  for (const ns of [lab.src, lab.dst, lab.atk]) createNamespace(ns);
  for (let i = 0; i < 3; i++) {
    const n = i + 1;
    const r = namespaceName(`r${n}`);
    createNamespace(r);
    lab.r.push(r);
    const linkem = new Service(`linkem${n}`, [
      bin("linkem"), "--ns-a", lab.src, "--addr-a", `10.77.${n}.1/24`, "--ns-b", r, "--addr-b", `10.77.${n}.2/24`,
      "--delay-ms", String(DELAYS_MS[i]), "--dev", `lk${n}`,
    ], { logFile: path.join(work, `linkem${n}.log`) });
    await linkem.waitReady("linkem ready", 10000);
    lab.linkems.push(linkem);
    ip("-n", r, "link", "add", "tva", "type", "veth", "peer", "name", `tv${n}`, "netns", lab.dst);
    ip("-n", r, "addr", "add", `10.78.${n}.1/24`, "dev", "tva");
    ip("-n", lab.dst, "addr", "add", `10.78.${n}.2/24`, "dev", `tv${n}`);
    ip("-n", r, "link", "set", "tva", "up");
    ip("-n", lab.dst, "link", "set", `tv${n}`, "up");
    // The relay of path n; r1 also relays wireguard-go's and plain UDP's datagrams over the same route.
    let relay = `[[relay]]\nname = "r${n}"\nlisten = "10.77.${n}.2:4500"\nforward = "10.78.${n}.2:4500"\n`;
    if (n === 1) {
      relay += `[[relay]]\nname = "wg"\nlisten = "10.77.1.2:51821"\nforward = "10.78.1.2:51820"\n`;
      relay += `[[relay]]\nname = "udp"\nlisten = "10.77.1.2:10400"\nforward = "10.78.1.2:10400"\n`;
    }
    lab.relays.push(await startTripd(r, `relay${n}`, relay));
  }
  // The flooded route: 5 Mbit/s out of r1 towards dst, and an attacker routed through r1.
  run(["tc", "-n", lab.r[0], "qdisc", "add", "dev", "tva", "root", "tbf", "rate", FLOOD.rate, "burst", FLOOD.burst,
       "latency", FLOOD.latency]);
  ip("-n", lab.atk, "link", "add", "ta0", "type", "veth", "peer", "name", "tk0", "netns", lab.r[0]);
  ip("-n", lab.atk, "addr", "add", "10.79.1.2/24", "dev", "ta0");
  ip("-n", lab.r[0], "addr", "add", "10.79.1.1/24", "dev", "tk0");
  ip("-n", lab.atk, "link", "set", "ta0", "up");
  ip("-n", lab.r[0], "link", "set", "tk0", "up");
  ip("-n", lab.atk, "route", "add", "10.78.1.0/24", "via", "10.79.1.1");
  nsRun(lab.r[0], ["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
  return lab;
}

async function stopLab(lab) {
  for (const r of lab.relays) await r.stop();
  for (const l of lab.linkems) await l.stop();
}

const labPaths = (lab, n) =>
  Array.from({ length: n }, (_, i) => ({
    name: `p${i + 1}`, number: i + 1, listen: `10.78.${i + 1}.2:4500`, connect: `10.77.${i + 1}.2:4500`,
  }));

/** wireguard-go in src and dst, the src end's endpoint being relay r1's "wg" port. */
async function startWireguard(lab) {
  const key = () => run(["wg", "genkey"]).trim();
  const pub = (k) => run(["wg", "pubkey"], { input: `${k}\n`, stdio: ["pipe", "pipe", "pipe"] }).trim();
  const ks = key();
  const kd = key();
  const svcs = [];
  const ends = [
    { ns: lab.src, dev: wgNames.src, addr: "10.90.0.1/24", own: ks, peer: pub(kd), port: 51830, allowed: "10.90.0.2/32",
      endpoint: "10.77.1.2:51821" },
    { ns: lab.dst, dev: wgNames.dst, addr: "10.90.0.2/24", own: kd, peer: pub(ks), port: 51820, allowed: "10.90.0.1/32" },
  ];
  for (const e of ends) {
    const svc = new Service(e.dev, ["ip", "netns", "exec", e.ns, "wireguard-go", "-f", e.dev],
                            { logFile: path.join(work, `${e.dev}.log`) });
    svcs.push(svc);
    const deadline = Date.now() + 10000;
    while (!fs.existsSync(`/var/run/wireguard/${e.dev}.sock`)) {
      if (svc.exited || Date.now() > deadline) throw new Error(`wireguard-go ${e.dev} did not start:\n${svc.output.text()}`);
      await sleep(50);
    }
    const keyFile = path.join(work, `${e.dev}.key`);
    fs.writeFileSync(keyFile, `${e.own}\n`, { mode: 0o600 });
    const set = ["wg", "set", e.dev, "private-key", keyFile, "listen-port", String(e.port), "peer", e.peer,
                 "allowed-ips", e.allowed];
    if (e.endpoint) set.push("endpoint", e.endpoint);
    nsRun(e.ns, set);
    ip("-n", e.ns, "addr", "add", e.addr, "dev", e.dev);
    ip("-n", e.ns, "link", "set", e.dev, "up");
  }
  return {
    async stop() {
      for (const s of svcs) await s.stop();
    },
  };
}

// The probe's endpoints per contender in the lab.
const STREAM = {
  trip: (lab) => ["--send-ns", lab.src, "--to", "127.0.0.1:10102", "--recv-ns", lab.dst, "--listen", "127.0.0.1:10200"],
  wg: (lab) => ["--send-ns", lab.src, "--to", "10.90.0.2:10300", "--recv-ns", lab.dst, "--listen", "10.90.0.2:10300"],
  udp: (lab) => ["--send-ns", lab.src, "--to", "10.77.1.2:10400", "--recv-ns", lab.dst, "--listen", "10.78.1.2:10400"],
};
const streamArgs = (count, interval = INTERVAL_US, waitMs = 1000) =>
  ["--count", String(count), "--interval-us", String(interval), "--size", String(SIZE), "--wait-ms", String(waitMs)];

/** Starts a lab contender: {kind, stop(), pair?}. */
async function startContender(lab, name) {
  if (name === "wg") return { kind: "wg", ...(await startWireguard(lab)) };
  if (name === "udp") return { kind: "udp", async stop() {} };
  const n = Number(name.replace("trip", ""));
  const pair = await startPair(lab.src, lab.dst, labPaths(lab, n), name);
  return { kind: "trip", pair, stop: () => pair.stop() };
}

// ---- scenario 1: overhead ---------------------------------------------------------------------

const OVERHEAD_CONTENDERS = ["trip1", "trip2", "trip3", "wg"];
const O_PATH = 28 / 190;

async function overheadRound(lab) {
  const out = {};
  for (const name of OVERHEAD_CONTENDERS) {
    const c = await startContender(lab, name);
    try {
      await probe([...STREAM[c.kind](lab), ...streamArgs(P.warmup, INTERVAL_US, 300)], `${name} warm-up`);
      const nPaths = c.kind === "trip" ? Number(name.slice(4)) : 1;
      const devs = [0, 1, 2].map((i) => ({ ns: lab.r[i], dev: `lk${i + 1}` }));
      const before = devs.map((d) => devBytes(d.ns, d.dev));
      const m0 = c.pair ? [metrics(lab.src, REFLECTOR_METRICS), metrics(lab.dst, FILTER_METRICS)] : null;
      const count = P.overheadSeconds * (1_000_000 / INTERVAL_US);
      const res = await probe([...STREAM[c.kind](lab), ...streamArgs(count, INTERVAL_US, 200)], name);
      const after = devs.map((d) => devBytes(d.ns, d.dev));
      const m1 = c.pair ? [metrics(lab.src, REFLECTOR_METRICS), metrics(lab.dst, FILTER_METRICS)] : null;
      const perLink = devs.map((_, i) => after[i].rx - before[i].rx + after[i].tx - before[i].tx);
      const packets = devs.map((_, i) => after[i].rx_packets - before[i].rx_packets + after[i].tx_packets - before[i].tx_packets);
      const bytes = perLink.reduce((a, b) => a + b, 0);
      const plain = res.sent * (SIZE + 28);
      const row = {
        paths: nPaths, sent: res.sent, received: res.received, lost: res.lost, bytes, bytes_per_link: perLink,
        packets: packets.reduce((a, b) => a + b, 0), plain_bytes: plain,
        total_overhead: round(bytes / plain - 1, 4),
        per_path_overhead: round(bytes / (nPaths * plain) - 1, 4),
        bytes_per_datagram: round(bytes / res.sent, 1),
      };
      if (c.pair) {
        const d = (k) => metricSum(m1[0], k) - metricSum(m0[0], k);
        const df = (k) => metricSum(m1[1], k) - metricSum(m0[1], k);
        const copies = d("trip_path_sent_total");
        const keepalives = d("trip_path_keepalives_sent_total") + df("trip_path_keepalives_sent_total");
        row.copies = copies;
        row.data_bytes = copies * (SIZE + 28 + 28);
        row.keepalives = keepalives;
        row.keepalive_bytes = keepalives * 68;
        row.other_bytes = bytes - row.data_bytes - row.keepalive_bytes; // control connection (PING/PONG, ACKs)
        row.keepalive_share = round(row.keepalive_bytes / bytes, 5);
        row.formula = round(nPaths * (1 + O_PATH) - 1, 4);
        // Towards the filter (the TUN's rx in r1..r3): the copies, the reflector's keepalives and its
        // side of the control connection. Per copy, less the keepalives: 218 bytes plus the control's share.
        const forward = devs.reduce((a, _, i) => a + after[i].rx - before[i].rx, 0);
        const reflectorKeepalives = d("trip_path_keepalives_sent_total");
        row.forward_bytes = forward;
        row.overhead_per_copy = round((forward - 68 * reflectorKeepalives) / copies - (SIZE + 28), 2);
        // Back towards the reflector: keepalives, PONGs and ACKs only; nothing answers a datagram.
        const returned = devs.reduce((a, _, i) => a + after[i].tx_packets - before[i].tx_packets, 0);
        row.return_packets = returned;
        row.return_packets_per_datagram = round(returned / res.sent, 4);
      }
      out[name] = row;
      log(`overhead ${name}: ${bytes} bytes for ${res.sent} datagrams, total overhead ${(row.total_overhead * 100).toFixed(2)} %`);
    } finally {
      await c.stop();
    }
  }
  return out;
}

function summarizeOverhead(rounds) {
  const out = {};
  for (const name of OVERHEAD_CONTENDERS) {
    const rs = rounds.map((r) => r[name]).filter(Boolean);
    if (rs.length === 0) continue;
    const med = (k) => median(rs.map((r) => r[k]));
    out[name] = {
      paths: rs[0].paths,
      total_overhead: med("total_overhead"),
      total_overhead_range: [Math.min(...rs.map((r) => r.total_overhead)), Math.max(...rs.map((r) => r.total_overhead))],
      per_path_overhead: med("per_path_overhead"),
      bytes_per_datagram: med("bytes_per_datagram"),
      keepalive_share: med("keepalive_share"),
      other_share: rs[0].other_bytes !== undefined ? round(median(rs.map((r) => r.other_bytes / r.bytes)), 5) : null,
      formula: rs[0].formula ?? null,
      overhead_per_copy: med("overhead_per_copy"),
      return_packets_per_datagram: med("return_packets_per_datagram"),
      lost: rs.reduce((a, r) => a + r.lost, 0),
      sent: rs.reduce((a, r) => a + r.sent, 0),
    };
  }
  return out;
}

// ---- scenario 3: three paths, with and without the flood -------------------------------------

const PATH_CONTENDERS = ["trip3", "trip1", "wg", "udp"];

function tbfDropped(lab) {
  const text = run(["tc", "-s", "-n", lab.r[0], "qdisc", "show", "dev", "tva"]);
  const m = /dropped (\d+)/.exec(text);
  return m ? Number(m[1]) : null;
}

async function pathsRound(lab, roundIndex) {
  const out = {};
  // Rotate the order each round, so that no contender always runs first after a quiet machine.
  const order = PATH_CONTENDERS.map((_, i) => PATH_CONTENDERS[(i + roundIndex) % PATH_CONTENDERS.length]);
  for (const name of order) {
    const c = await startContender(lab, name);
    try {
      await probe([...STREAM[c.kind](lab), ...streamArgs(P.warmup, INTERVAL_US, 300)], `${name} warm-up`);
      const wonBefore = c.pair ? metrics(lab.dst, FILTER_METRICS) : null;
      const quiet = await probe([...STREAM[c.kind](lab), ...streamArgs(P.latencyCount)], `${name} quiet`);
      const wonQuiet = c.pair ? metrics(lab.dst, FILTER_METRICS) : null;
      const flood = new Service("flood", [bin("trip-probe"), "flood", "--send-ns", lab.atk, "--to", "10.78.1.2:9",
                                          "--size", String(FLOOD.size), "--pps", String(FLOOD.pps)]);
      await flood.waitReady("flood ready", 5000);
      await sleep(1000); // the tbf queue fills
      const dropped0 = tbfDropped(lab);
      let flooded;
      try {
        flooded = await probe([...STREAM[c.kind](lab), ...streamArgs(P.latencyCount)], `${name} flooded`);
      } finally {
        await flood.stop();
      }
      flooded.tbf_dropped = tbfDropped(lab) - dropped0;
      const wonFlood = c.pair ? metrics(lab.dst, FILTER_METRICS) : null;
      await sleep(500); // the queue drains (at most 200 ms)
      if (c.pair) {
        const paths = labPaths(lab, Number(name.slice(4))).map((p) => p.name);
        const won = (a, b) => Object.fromEntries(paths.map((p) => [p, pathMetric(b, "trip_path_won_total", p) - pathMetric(a, "trip_path_won_total", p)]));
        quiet.won = won(wonBefore, wonQuiet);
        flooded.won = won(wonQuiet, wonFlood);
      }
      out[name] = { quiet, flood: flooded };
      log(`paths ${name}: quiet p50 ${quiet.p50_us} us p99 ${quiet.p99_us} us lost ${quiet.lost}; ` +
          `flooded p50 ${flooded.p50_us} us p99 ${flooded.p99_us} us lost ${flooded.lost}`);
    } finally {
      await c.stop();
    }
  }
  return out;
}

/** Median over rounds of each round's p50 / p99 / mean / max, the p50 range, and totals. */
function summarizeLatency(runs) {
  const med = (k) => median(runs.map((r) => r[k]));
  const p50s = runs.map((r) => r.p50_us);
  return {
    p50_us: med("p50_us"), p99_us: med("p99_us"), mean_us: med("mean_us"), max_us: med("max_us"),
    p50_range_us: [Math.min(...p50s), Math.max(...p50s)],
    p99_range_us: [Math.min(...runs.map((r) => r.p99_us)), Math.max(...runs.map((r) => r.p99_us))],
    sent: runs.reduce((a, r) => a + r.sent, 0), lost: runs.reduce((a, r) => a + r.lost, 0),
    duplicated: runs.reduce((a, r) => a + r.duplicated, 0),
    loss: round(runs.reduce((a, r) => a + r.lost, 0) / Math.max(1, runs.reduce((a, r) => a + r.sent, 0)), 5),
  };
}

function summarizePaths(rounds) {
  const out = {};
  for (const name of PATH_CONTENDERS) {
    const rs = rounds.map((r) => r[name]).filter(Boolean);
    if (rs.length === 0) continue;
    out[name] = { quiet: summarizeLatency(rs.map((r) => r.quiet)), flood: summarizeLatency(rs.map((r) => r.flood)) };
    if (rs[0].quiet.won) {
      const sumWon = (k) => rs.reduce((acc, r) => {
        for (const [p, v] of Object.entries(r[k].won)) acc[p] = (acc[p] ?? 0) + v;
        return acc;
      }, {});
      out[name].quiet.won = sumWon("quiet");
      out[name].flood.won = sumWon("flood");
    }
    out[name].flood.tbf_dropped = rs.reduce((a, r) => a + (r.flood.tbf_dropped ?? 0), 0);
  }
  return out;
}

// ---- scenarios 2 and 4: loopback --------------------------------------------------------------

async function loopbackScenarios(wantLatency, wantThroughput) {
  const ns = namespaceName("lo");
  createNamespace(ns);
  const pair = await startPair(ns, ns, [{ name: "lo", number: 1, listen: "127.0.0.1:4500", connect: "127.0.0.1:4500" }], "lo");
  const trip = ["--send-ns", ns, "--to", "127.0.0.1:10102", "--recv-ns", ns, "--listen", "127.0.0.1:10200"];
  const direct = ["--send-ns", ns, "--to", "127.0.0.1:10201", "--recv-ns", ns, "--listen", "127.0.0.1:10201"];
  // At the R-GOOSE rate (10 ms) every hop wakes a sleeping process; at 1 ms the same path runs warm.
  const latency = { direct: [], trip: [], direct_dense: [], trip_dense: [] };
  const throughput = [];
  const load = [];
  try {
    await probe([...trip, ...streamArgs(P.warmup, INTERVAL_US, 300)], "loopback warm-up");
    for (let r = 0; r < ROUNDS; r++) {
      load.push(os.loadavg()[0]);
      if (wantLatency) {
        const order = r % 2 === 0 ? ["direct", "trip"] : ["trip", "direct"];
        for (const dense of [false, true]) {
          for (const k of order) {
            const interval = dense ? DENSE_INTERVAL_US : INTERVAL_US;
            const res = await probe([...(k === "trip" ? trip : direct), ...streamArgs(P.loopbackCount, interval)],
                                    `loopback ${k}`);
            latency[dense ? `${k}_dense` : k].push(res);
            log(`loopback ${k} every ${interval} us, round ${r + 1}: p50 ${res.p50_us} us p99 ${res.p99_us} us lost ${res.lost}`);
          }
        }
      }
      if (wantThroughput) {
        const c0 = [cpuSeconds(pair.reflector.pid), cpuSeconds(pair.filter.pid)];
        const m0 = [metrics(ns, REFLECTOR_METRICS), metrics(ns, FILTER_METRICS)];
        const res = await probe([...trip, ...streamArgs(P.blastCount, 0, 1000)], "blast");
        const c1 = [cpuSeconds(pair.reflector.pid), cpuSeconds(pair.filter.pid)];
        const m1 = [metrics(ns, REFLECTOR_METRICS), metrics(ns, FILTER_METRICS)];
        const taken = metricSum(m1[0], "trip_flow_taken_total") - metricSum(m0[0], "trip_flow_taken_total");
        const delivered = metricSum(m1[1], "trip_flow_delivered_total") - metricSum(m0[1], "trip_flow_delivered_total");
        const cpuR = c1[0] - c0[0];
        const cpuF = c1[1] - c0[1];
        const row = {
          sent: res.sent, taken, delivered, received: res.received, seconds: res.seconds,
          delivered_per_s: round(res.received / res.seconds, 0),
          reflector_cpu_s: round(cpuR, 2), filter_cpu_s: round(cpuF, 2),
          reflector_per_cpu_s: round(taken / cpuR, 0), filter_per_cpu_s: round(delivered / cpuF, 0),
          both_per_cpu_s: round(delivered / (cpuR + cpuF), 0),
        };
        throughput.push(row);
        log(`throughput round ${r + 1}: ${row.delivered_per_s}/s delivered; reflector ${row.reflector_per_cpu_s}/CPU-s, ` +
            `filter ${row.filter_per_cpu_s}/CPU-s`);
      }
    }
  } finally {
    await pair.stop();
  }
  const out = { load };
  if (wantLatency) {
    const summary = (dk, tk, interval) => {
      const d = summarizeLatency(latency[dk]);
      const t = summarizeLatency(latency[tk]);
      return {
        interval_us: interval, direct: d, trip: t, rounds: { direct: latency[dk], trip: latency[tk] },
        added_p50_us: round(t.p50_us - d.p50_us, 1), added_p99_us: round(t.p99_us - d.p99_us, 1),
        added_p50_rounds_us: latency[tk].map((x, i) => round(x.p50_us - latency[dk][i].p50_us, 1)),
      };
    };
    out.loopback = summary("direct", "trip", INTERVAL_US);
    out.loopback.dense = summary("direct_dense", "trip_dense", DENSE_INTERVAL_US);
  }
  if (wantThroughput) {
    const med = (k) => median(throughput.map((x) => x[k]));
    out.throughput = {
      rounds: throughput,
      delivered_per_s: med("delivered_per_s"), reflector_per_cpu_s: med("reflector_per_cpu_s"),
      filter_per_cpu_s: med("filter_per_cpu_s"), both_per_cpu_s: med("both_per_cpu_s"),
      loss: round(1 - throughput.reduce((a, x) => a + x.received, 0) / throughput.reduce((a, x) => a + x.sent, 0), 4),
    };
  }
  return out;
}

// ---- the run ----------------------------------------------------------------------------------

function machine() {
  const osRelease = fs.existsSync("/etc/os-release") ? fs.readFileSync("/etc/os-release", "utf8") : "";
  return {
    hostname: os.hostname(), cpu_model: os.cpus()[0]?.model, nproc: os.cpus().length,
    mem_gib: round(os.totalmem() / 2 ** 30, 1), kernel: os.release(),
    os: /PRETTY_NAME="([^"]+)"/.exec(osRelease)?.[1] ?? null,
  };
}

function versions() {
  const tryRun = (argv) => {
    try {
      return run(argv).trim().split("\n")[0];
    } catch {
      return null;
    }
  };
  return {
    git_commit: tryRun(["git", "-C", REPO, "rev-parse", "HEAD"]),
    tripd: tryRun([bin("tripd"), "--version"]),
    wireguard_go: tryRun(["dpkg-query", "-W", "-f=${Version}", "wireguard-go"]),
    wireguard_tools: tryRun(["dpkg-query", "-W", "-f=${Version}", "wireguard-tools"]),
    openssl: tryRun(["openssl", "version"]),
    node: process.version,
  };
}

async function main() {
  for (const b of ["tripd", "linkem", "trip-probe"]) {
    if (!fs.existsSync(bin(b))) throw new Error(`${bin(b)} missing: build it (make bench-trip builds tripd, linkem, trip-probe)`);
  }
  for (const tool of ["wireguard-go", "wg", "tc", "curl", "openssl"]) {
    try {
      run(["sh", "-c", `command -v ${tool}`]);
    } catch {
      throw new Error(`${tool} not found (make deps installs it)`);
    }
  }
  const removed = removeStaleNamespaces();
  if (removed.length) log(`removed stale namespaces ${removed.join(", ")}`);
  makePki(path.join(work, "pki"));

  const result = {
    schema: 1, kind: "trip", started: new Date().toISOString(), machine: machine(), versions: versions(),
    config: { rounds: ROUNDS, smoke: SMOKE, ...P, interval_us: INTERVAL_US, size: SIZE, delays_ms: DELAYS_MS, flood: FLOOD,
              scenarios: SCENARIOS },
    load_average: { start: os.loadavg().map((x) => round(x, 2)), rounds: [] },
  };
  const want = (s) => SCENARIOS.includes(s);

  if (want("loopback") || want("throughput")) {
    const lo = await loopbackScenarios(want("loopback"), want("throughput"));
    if (lo.loopback) result.loopback = lo.loopback;
    if (lo.throughput) result.throughput = lo.throughput;
    result.load_average.rounds.push(...lo.load.map((x) => round(x, 2)));
  }
  if (want("overhead") || want("paths")) {
    const lab = await buildLab();
    try {
      const overheadRounds = [];
      const pathRounds = [];
      for (let r = 0; r < ROUNDS; r++) {
        result.load_average.rounds.push(round(os.loadavg()[0], 2));
        log(`round ${r + 1} of ${ROUNDS} (load average ${os.loadavg()[0].toFixed(2)})`);
        if (want("overhead")) overheadRounds.push(await overheadRound(lab));
        if (want("paths")) pathRounds.push(await pathsRound(lab, r));
      }
      if (want("overhead")) result.overhead = { rounds: overheadRounds, summary: summarizeOverhead(overheadRounds) };
      if (want("paths")) result.paths = { rounds: pathRounds, summary: summarizePaths(pathRounds) };
    } finally {
      await stopLab(lab);
    }
  }
  result.load_average.end = os.loadavg().map((x) => round(x, 2));
  result.finished = new Date().toISOString();
  result.targets = targets(result);

  fs.mkdirSync(args.out, { recursive: true });
  const stamp = result.started.replace(/[:.]/g, "-");
  const json = JSON.stringify(result, null, 2) + "\n";
  fs.writeFileSync(path.join(args.out, `trip-${stamp}.json`), json);
  fs.writeFileSync(path.join(args.out, "trip-latest.json"), json);
  log(`results in ${path.join(args.out, "trip-latest.json")}`);
  for (const t of result.targets) log(`target ${t.name}: ${t.measured} (${t.goal}) ${t.met ? "met" : "NOT met"}`);
  if (!SMOKE && !args["no-report"]) {
    run([process.execPath, path.join(HERE, "trip-report.mjs"), path.join(args.out, "trip-latest.json"),
         "--doc", args.doc, "--img", args.img], { stdio: ["ignore", "inherit", "inherit"] });
  }
}

/** The targets, each with what was measured and whether it was met. */
function targets(r) {
  const t = [];
  const o = r.overhead?.summary;
  if (o) {
    if (o.trip1) {
      t.push({ name: "overhead per copy of a 162-byte datagram (bytes)", goal: "28 (+ < 0.5: the control connection's share)",
               measured: o.trip1.overhead_per_copy, met: o.trip1.overhead_per_copy < 28.5,
               note: "IP bytes towards the filter, less keepalives, per copy, less 190; the rest is the control connection" });
      t.push({ name: "return packets per datagram", goal: "none per datagram",
               measured: o.trip1.return_packets_per_datagram, met: o.trip1.return_packets_per_datagram < 0.05,
               note: "keepalives (1/s), PONGs and TCP ACKs only" });
    }
    // The measured total for N paths against N x (1 + O_path) - 1, O_path being the one measured
    // with one path (keepalives and control included): within half a percentage point per path.
    const o1 = o.trip1?.per_path_overhead;
    for (const n of [1, 2, 3]) {
      const s = o[`trip${n}`];
      if (!s || o1 === undefined) continue;
      const predicted = n * (1 + o1) - 1;
      t.push({ name: `measured total overhead (%), N = ${n}`,
               goal: `N × (1 + O_path) − 1 = ${(predicted * 100).toFixed(2)} % (O_path measured, N = 1)`,
               measured: round(s.total_overhead * 100, 2), met: Math.abs(s.total_overhead - predicted) < 0.005 * n,
               note: `with O_path = 28/190 alone: ${(s.formula * 100).toFixed(2)} %` });
    }
    if (o.trip1) {
      t.push({ name: "O_path measured (%; 1 path, keepalives and control included)", goal: "< 16.9 % (QUIC-TRIP's per-datagram figure)",
               measured: round(o.trip1.per_path_overhead * 100, 2), met: o.trip1.per_path_overhead < 0.169 });
    }
  }
  if (r.loopback) {
    t.push({ name: "added latency of reflector + filter on loopback, p50 (µs; 162 bytes every 10 ms)", goal: "< 50 µs",
             measured: r.loopback.added_p50_us, met: r.loopback.added_p50_us < 50 });
    if (r.loopback.dense) {
      t.push({ name: "the same with a datagram every 1 ms (µs)", goal: "< 50 µs",
               measured: r.loopback.dense.added_p50_us, met: r.loopback.dense.added_p50_us < 50,
               note: "processes that do not fall asleep between datagrams" });
    }
  }
  const p = r.paths?.summary;
  if (p?.trip3) {
    t.push({ name: "3 paths under the flood: datagrams lost", goal: "0", measured: p.trip3.flood.lost, met: p.trip3.flood.lost === 0 });
    t.push({ name: "3 paths under the flood: p50 (ms)", goal: "< 18 ms (the 17 ms path's delay + 1 ms)",
             measured: round(p.trip3.flood.p50_us / 1000, 2), met: p.trip3.flood.p50_us < 18000 });
  }
  return t;
}

main()
  .then(() => {
    cleanup();
  })
  .catch((e) => {
    console.error(`bench/trip.mjs: ${e.stack || e}`);
    cleanup();
    process.exit(1);
  });

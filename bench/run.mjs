#!/usr/bin/env node
// The side-by-side benchmark: SRMCP vs Modbus TCP vs OPC UA (bench/README.md, docs/benchmarks.md).
//
// For each scenario (bench/scenarios.json) it creates network namespaces, joins them with the link
// emulator where the scenario asks for it, starts every server once, then runs the protocols'
// latency clients interleaved in rounds (modbus, srmcp, ..., modbus, srmcp, ...), then the
// throughput and scale modes where the scenario enables them. It merges the rounds into statistics,
// checks the targets of the issue, writes <out>/<timestamp>.json and <out>/latest.json and renders
// docs/benchmarks.md with bench/report.mjs. Everything it starts is removed on the way out.
//
// Needs root (network namespaces, TUN devices). No npm dependencies.

import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import {
  createNamespace,
  deleteNamespace,
  deleteOwnNamespaces,
  inNamespace,
  isLiveHarness,
  listNamespaces,
  namespaceName,
  removeStaleNamespaces,
} from "./lib/netns.mjs";
import { Service, checkPidRuns, describeExit, killAllChildren, logPath, parseClientJson, runClient } from "./lib/procs.mjs";
import {
  percentile,
  round,
  sortedCopy,
  summarizePhases,
  validateHold,
  validateLatency,
  validateThroughput,
} from "./lib/stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");

const ALL_PROTOCOLS = ["modbus", "srmcp", "srmcp-json", "srmcp-3links", "srmcp-xwing", "opcua-none", "opcua-secure"];
const ALL_MODES = ["latency", "throughput", "scale"];
const OPS = ["connect", "read", "write"];
// The protocols of the throughput mode (when selected), and the one of the scale mode.
const THROUGHPUT_PROTOCOLS = ["modbus", "srmcp", "srmcp-json", "opcua-none"];
const SCALE_PROTOCOL = "srmcp";

// Addresses on the emulated link (inside the harness's own namespaces only).
const CLIENT_ADDR = "10.201.0.1";
const SERVER_ADDR = "10.201.0.2";
const LOOPBACK_ADDR = "127.0.0.1";
// The RTT probe's port: linkem-probe's UDP echo, or (TCP probe) a port nobody listens on.
const PROBE_PORT = 9;
// Open files for servers and clients: 1,000 sessions need more than the usual 1,024.
const WANTED_NOFILE = 65536;

const USAGE = `usage: node bench/run.mjs [options]

Runs SRMCP, Modbus TCP and OPC UA side by side in network namespaces (needs root) and writes
<out>/<timestamp>.json, <out>/latest.json and docs/benchmarks.md (docs/benchmarks.md says more).

  --rounds R               interleaved rounds of every protocol (default 3)
  --n N                    timed reads, and writes, per client run (default 1000)
  --connects C             timed connects per client run (default 20)
  --warmup W               untimed connect+read+write cycles first (default 20)
  --scenarios LIST         from bench/scenarios.json, or all (default loopback,lan,wan)
  --scenarios-file FILE    scenario definitions (default bench/scenarios.json)
  --protocols LIST         ${ALL_PROTOCOLS.join(",")} or all (default all)
  --modes LIST             ${ALL_MODES.join(",")} or all (default all; throughput and
                           scale run only in scenarios that enable them: loopback)
  --throughput-seconds S   duration of each throughput run (default 5)
  --throughput-clients L   concurrent clients, a list (default 1,8,64)
  --pipeline D             outstanding reads per SRMCP / OPC UA client in throughput mode (default 16)
  --sessions S             SRMCP sessions held open in scale mode (default 1000)
  --out DIR                where the results JSON goes (default bench/results)
  --bin-dir DIR            the built programs (default build/bin of this repository)
  --no-report              do not render docs/benchmarks.md
  --keep-going             record a failing client and go on (default: stop, write what was measured)
  --keep-work              keep the temporary directory (PKI, logs; the next run removes it)
  --smoke                  quick self-check: 1 round, n 20, connects 3, warmup 2, loopback only,
                           throughput 1 s with 1 client, 20 sessions held, no report; exits non-zero
                           unless every selected peer gave valid numbers and read back what it wrote
  -h, --help               this text

Make: make bench [ROUNDS=3] [N=1000] [SCENARIOS=loopback,lan,wan] [PROTOCOLS=all] [MODES=all]`;

// ---- options ------------------------------------------------------------------------------------

function positiveInt(name, text) {
  const x = Number(text);
  if (!Number.isInteger(x) || x < 1) throw new Error(`--${name}: expected a positive integer, got '${text}'`);
  return x;
}

function positiveNumber(name, text) {
  const x = Number(text);
  if (!Number.isFinite(x) || x <= 0) throw new Error(`--${name}: expected a positive number, got '${text}'`);
  return x;
}

function list(text) {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A list option where "all" means every allowed value; unknown names are an error. */
function choiceList(name, text, allowed) {
  const items = list(text);
  if (items.length === 1 && items[0] === "all") return [...allowed];
  for (const item of items) {
    if (!allowed.includes(item)) throw new Error(`--${name}: unknown '${item}' (one of ${allowed.join(", ")})`);
  }
  if (items.length === 0) throw new Error(`--${name}: empty list`);
  return items;
}

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      rounds: { type: "string", default: "3" },
      n: { type: "string", default: "1000" },
      connects: { type: "string", default: "20" },
      warmup: { type: "string", default: "20" },
      scenarios: { type: "string", default: "loopback,lan,wan" },
      "scenarios-file": { type: "string", default: path.join(HERE, "scenarios.json") },
      protocols: { type: "string", default: "all" },
      modes: { type: "string", default: "all" },
      "throughput-seconds": { type: "string", default: "5" },
      "throughput-clients": { type: "string", default: "1,8,64" },
      pipeline: { type: "string", default: "16" },
      sessions: { type: "string", default: "1000" },
      out: { type: "string" },
      "bin-dir": { type: "string", default: path.join(REPO, "build", "bin") },
      "no-report": { type: "boolean", default: false },
      "keep-going": { type: "boolean", default: false },
      "keep-work": { type: "boolean", default: false },
      smoke: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return { help: true };

  const scenarioDefs = JSON.parse(fs.readFileSync(values["scenarios-file"], "utf8")).scenarios;
  const o = {
    rounds: positiveInt("rounds", values.rounds),
    n: positiveInt("n", values.n),
    connects: positiveInt("connects", values.connects),
    warmup: Number(values.warmup) === 0 ? 0 : positiveInt("warmup", values.warmup),
    scenarios: choiceList("scenarios", values.scenarios, Object.keys(scenarioDefs)),
    scenarioDefs,
    protocols: choiceList("protocols", values.protocols, ALL_PROTOCOLS),
    modes: choiceList("modes", values.modes, ALL_MODES),
    throughputSeconds: positiveNumber("throughput-seconds", values["throughput-seconds"]),
    throughputClients: list(values["throughput-clients"]).map((x) => positiveInt("throughput-clients", x)),
    pipeline: positiveInt("pipeline", values.pipeline),
    sessions: positiveInt("sessions", values.sessions),
    out: values.out,
    binDir: path.resolve(values["bin-dir"]),
    report: !values["no-report"],
    keepGoing: values["keep-going"],
    keepWork: values["keep-work"],
    smoke: values.smoke,
  };
  // Protocols keep the canonical order: modbus first, then the others (A B C A B C ...).
  o.protocols = ALL_PROTOCOLS.filter((p) => o.protocols.includes(p));
  if (o.smoke) {
    Object.assign(o, {
      rounds: 1,
      n: 20,
      connects: 3,
      warmup: 2,
      scenarios: ["loopback"],
      throughputSeconds: 1,
      throughputClients: [1],
      sessions: 20,
      report: false,
      // A smoke run reports every broken peer at once, then fails.
      keepGoing: true,
    });
    if (!o.scenarioDefs.loopback) throw new Error("--smoke needs a 'loopback' scenario");
  }
  if (o.out === undefined) {
    o.out = o.smoke ? fs.mkdtempSync(path.join(os.tmpdir(), "pqb-smoke-")) : path.join(HERE, "results");
  }
  o.out = path.resolve(o.out);
  return o;
}

// ---- programs -----------------------------------------------------------------------------------

/** How to start each server; `host` is the address it listens on. */
const SERVERS = {
  modbus: {
    port: 1502,
    ready: "modbus server ready",
    readyTimeoutMs: 30_000,
    program: (ctx) => bin(ctx, "modbus-bench-server"),
    argv: (ctx, host) => [bin(ctx, "modbus-bench-server"), "--host", host, "--port", "1502"],
  },
  srmcpd: {
    port: 4843,
    ready: "srmcpd listening on",
    readyTimeoutMs: 30_000,
    program: (ctx) => bin(ctx, "srmcpd"),
    argv: (ctx, host) => [
      bin(ctx, "srmcpd"),
      "--config",
      path.join(HERE, "config", "srmcpd-bench.toml"),
      "--listen",
      `${host}:4843`,
      "--ca",
      ctx.pki.ca,
      "--cert",
      ctx.pki.serverCert,
      "--key",
      ctx.pki.serverKey,
      "--log-level",
      "info",
    ],
  },
  opcua: {
    port: 4840,
    ready: "opcua server ready",
    // node-opcua makes its certificate on the first start: allow for that.
    readyTimeoutMs: 120_000,
    program: () => path.join(HERE, "opcua", "server.mjs"),
    argv: (ctx, host) => [
      process.execPath,
      path.join(HERE, "opcua", "server.mjs"),
      "--host",
      host,
      "--port",
      "4840",
      "--pki-dir",
      path.join(ctx.work, "opcua-server-pki"),
    ],
  },
};

function srmcpOptions(ctx, kem, links, encoding = "compact") {
  const { ca, clientCert, clientKey } = ctx.pki;
  return ["--ca", ca, "--cert", clientCert, "--key", clientKey, "--kem", kem, "--links", String(links),
          "--encoding", encoding];
}

function opcuaOptions(ctx, security) {
  return ["--security", security, "--pki-dir", path.join(ctx.work, "opcua-client-pki")];
}

/**
 * Each protocol: its server, its client program, the client's own options, and the pipeline depth
 * it gets in throughput mode (libmodbus cannot have more than one request outstanding).
 */
const PROTOCOLS = {
  modbus: {
    server: "modbus",
    client: (ctx) => [bin(ctx, "modbus-bench-client")],
    options: () => [],
    pipeline: () => 1,
  },
  srmcp: {
    server: "srmcpd",
    client: (ctx) => [bin(ctx, "srmcp-bench")],
    options: (ctx) => srmcpOptions(ctx, "ml-kem-768", 1),
    pipeline: (ctx) => ctx.opts.pipeline,
  },
  // The same session with the JSON bodies of clients before compact bodies (docs/srmcp.md §4).
  "srmcp-json": {
    server: "srmcpd",
    client: (ctx) => [bin(ctx, "srmcp-bench")],
    options: (ctx) => srmcpOptions(ctx, "ml-kem-768", 1, "json"),
    pipeline: (ctx) => ctx.opts.pipeline,
  },
  "srmcp-3links": {
    server: "srmcpd",
    client: (ctx) => [bin(ctx, "srmcp-bench")],
    options: (ctx) => srmcpOptions(ctx, "ml-kem-768", 3),
    pipeline: (ctx) => ctx.opts.pipeline,
  },
  "srmcp-xwing": {
    server: "srmcpd",
    client: (ctx) => [bin(ctx, "srmcp-bench")],
    options: (ctx) => srmcpOptions(ctx, "x-wing", 1),
    pipeline: (ctx) => ctx.opts.pipeline,
  },
  "opcua-none": {
    server: "opcua",
    client: () => [process.execPath, path.join(HERE, "opcua", "client.mjs")],
    options: (ctx) => opcuaOptions(ctx, "none"),
    pipeline: (ctx) => ctx.opts.pipeline,
  },
  "opcua-secure": {
    server: "opcua",
    client: () => [process.execPath, path.join(HERE, "opcua", "client.mjs")],
    options: (ctx) => opcuaOptions(ctx, "secure"),
    pipeline: (ctx) => ctx.opts.pipeline,
  },
};

function bin(ctx, name) {
  return path.join(ctx.opts.binDir, name);
}

/** The files of ours a protocol needs: its server's program and its client's. */
function programsOf(ctx, protocol) {
  const p = PROTOCOLS[protocol];
  return [SERVERS[p.server].program(ctx), p.client(ctx).at(-1)];
}

/** The open-files limit to run servers and clients with: 65536, or the hard limit if lower. */
function nofileLimit() {
  const line = fs
    .readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const hard = line ? line.trim().split(/\s+/)[4] : "unlimited";
  return hard === "unlimited" ? WANTED_NOFILE : Math.min(WANTED_NOFILE, Number(hard));
}

/** argv that runs `argv` in namespace `ns` with the raised open-files limit (both exec: same pid). */
function wrapped(ctx, ns, argv) {
  return inNamespace(ns, ["prlimit", `--nofile=${ctx.nofile}:${ctx.nofile}`, "--", ...argv]);
}

// ---- logging ------------------------------------------------------------------------------------

function say(text) {
  process.stderr.write(`bench: ${text}\n`);
}

function fmtUs(x) {
  if (x === null || x === undefined) return "-";
  return x >= 1000 ? `${(x / 1000).toFixed(2)} ms` : `${x.toFixed(1)} µs`;
}

// ---- failures -----------------------------------------------------------------------------------

/** A failure that stops the run unless --keep-going. */
class BenchFailure extends Error {}

function recordFailure(ctx, where, error) {
  const entry = { ...where, error: error.message };
  ctx.results.failures.push(entry);
  say(`FAILED ${Object.values(where).join(" ")}: ${error.message}`);
  if (!ctx.opts.keepGoing) throw new BenchFailure(`${Object.values(where).join(" ")}: ${error.message}`);
}

/** Tail of a client's stderr, for the error message (never more than a few lines). */
function stderrTail(text, lines = 6) {
  return text.trim().split("\n").slice(-lines).join("\n");
}

function withTail(message, stderr) {
  const tail = stderrTail(stderr);
  return tail ? `${message}\n${tail}` : message;
}

/** A client failure, with the news that its server has died if it has (and the server's last words). */
function withServerState(error, server) {
  if (!server?.exited) return error;
  const tail = server.output.text().split("\n").slice(-4).join("\n");
  return new Error(`${error.message}\n(the server ${server.name} has exited: ${describeExit(server.exited)})\n${tail}`);
}

/** Runs a client and returns its parsed JSON object; throws with a readable message on failure. */
async function runJsonClient(ctx, argv, timeoutMs) {
  const res = await runClient(argv, { timeoutMs, logFile: path.join(ctx.logDir, "clients.log") });
  if (res.timedOut) throw new Error(withTail(`timed out after ${timeoutMs / 1000} s`, res.stderr));
  if (res.code !== 0) throw new Error(withTail(describeExit({ code: res.code, signal: res.signal }), res.stderr));
  return parseClientJson(res.stdout);
}

// ---- network ------------------------------------------------------------------------------------

/**
 * Sets up a scenario's network: one namespace on loopback, or a server and a client namespace
 * joined by linkem. Returns {srvNs, cliNs, host, namespaces, linkem, statsFile}.
 */
async function setUpNetwork(ctx, name, sc) {
  if (sc.network === "loopback") {
    const ns = namespaceName("lo");
    createNamespace(ns);
    return { srvNs: ns, cliNs: ns, host: LOOPBACK_ADDR, namespaces: [ns], linkem: null };
  }
  if (sc.network !== "linkem") throw new Error(`scenario ${name}: unknown network '${sc.network}'`);
  const srvNs = namespaceName("srv");
  const cliNs = namespaceName("cli");
  const net = { srvNs, cliNs, host: SERVER_ADDR, namespaces: [srvNs, cliNs], linkem: null };
  try {
    createNamespace(srvNs);
    createNamespace(cliNs);
    await startLinkem(ctx, name, sc, net);
  } catch (e) {
    await tearDownNetwork(net);
    throw e;
  }
  return net;
}

async function startLinkem(ctx, name, sc, net) {
  net.statsFile = path.join(ctx.work, `linkem-${name}.json`);
  const argv = [
    bin(ctx, "linkem"),
    "--ns-a",
    net.cliNs,
    "--addr-a",
    `${CLIENT_ADDR}/24`,
    "--ns-b",
    net.srvNs,
    "--addr-b",
    `${SERVER_ADDR}/24`,
    ...linkemKnobs(sc),
    "--stats-json",
    net.statsFile,
  ];
  net.linkem = new Service("linkem", argv, { logFile: logPath(ctx.logDir, `linkem-${name}`) });
  await net.linkem.waitReady("linkem ready", 15_000);
}

/** linkem options from a scenario's `link` (both directions) and `a2b` / `b2a` (one direction). */
function linkemKnobs(sc) {
  const knob = { delay_ms: "delay-ms", jitter_ms: "jitter-ms", loss: "loss", rate_mbit: "rate-mbit" };
  const args = [];
  const add = (prefix, obj) => {
    for (const [key, value] of Object.entries(obj ?? {})) {
      if (knob[key]) args.push(`--${prefix}${knob[key]}`, String(value));
      else if (prefix === "" && key === "reorder") {
        if (value) args.push("--reorder");
      } else if (prefix === "" && ["queue_packets", "seed", "realtime"].includes(key)) {
        args.push(`--${key.replace("_", "-")}`, String(value));
      } else throw new Error(`unknown link setting '${key}'`);
    }
  };
  add("", sc.link);
  add("a2b-", sc.a2b);
  add("b2a-", sc.b2a);
  return args;
}

async function tearDownNetwork(net) {
  if (net.linkem) await net.linkem.stop();
  for (const ns of net.namespaces) {
    if (listNamespaces().includes(ns)) deleteNamespace(ns);
  }
}

/**
 * The measured RTT from the client namespace to the server address: with linkem-probe (a UDP echo
 * in the server namespace, timestamped datagrams from the client's) when it is built, else with
 * bench/lib/rtt-probe.mjs (TCP connects to a closed port: SYN -> RST, timed in Node.js).
 */
async function probeRtt(ctx, net) {
  try {
    if (fs.existsSync(bin(ctx, "linkem-probe"))) return await probeRttUdp(ctx, net);
    return await probeRttTcp(ctx, net);
  } catch (e) {
    say(`RTT probe failed: ${e.message}`);
    return { rtt_probe_us: null, rtt_probe_method: null };
  }
}

async function probeRttUdp(ctx, net) {
  const serve = [bin(ctx, "linkem-probe"), "serve", "--port", String(PROBE_PORT)];
  const echo = new Service("linkem-probe", inNamespace(net.srvNs, serve), {
    logFile: logPath(ctx.logDir, "linkem-probe"),
  });
  try {
    await echo.waitReady("probe ready", 10_000);
    const argv = inNamespace(net.cliNs, [
      bin(ctx, "linkem-probe"), "udp", "--host", net.host, "--port", String(PROBE_PORT),
      "--count", "200", "--interval-ms", "2", "--wait-ms", "1000",
    ]);
    const res = await runClient(argv, { timeoutMs: 60_000, logFile: path.join(ctx.logDir, "clients.log") });
    if (res.code !== 0) throw new Error(withTail(`linkem-probe udp: ${describeExit(res)}`, res.stderr));
    // One line of key=value pairs.
    const kv = Object.fromEntries(res.stdout.trim().split(/\s+/).map((f) => f.split("=")));
    const median = Number(kv.median_us);
    if (!(median > 0)) throw new Error(`linkem-probe udp: no RTT in '${res.stdout.trim()}'`);
    return {
      rtt_probe_method: "linkem-probe udp: median of 200 UDP echoes (64 bytes, 2 ms apart) from the client namespace",
      rtt_probe_us: median,
      rtt_probe_min_us: Number(kv.min_us),
      rtt_probe_p99_us: Number(kv.p99_us),
      rtt_probe_received: `${kv.received}/${kv.sent}`,
    };
  } finally {
    await echo.stop();
  }
}

async function probeRttTcp(ctx, net) {
  const probe = path.join(HERE, "lib", "rtt-probe.mjs");
  const argv = inNamespace(net.cliNs, [process.execPath, probe, net.host, String(PROBE_PORT), "21"]);
  const out = await runJsonClient(ctx, argv, 120_000);
  const sorted = sortedCopy(out.samples_us);
  return {
    rtt_probe_method:
      "rtt-probe.mjs: median of 21 TCP connects to a closed port (SYN -> RST) from the client namespace, " +
      "timed in Node.js",
    rtt_probe_us: round(percentile(sorted, 50)),
    rtt_probe_min_us: round(sorted[0] ?? null),
    rtt_probe_lost: out.lost,
  };
}

// ---- servers ------------------------------------------------------------------------------------

async function startServer(ctx, scenario, net, name) {
  const def = SERVERS[name];
  const argv = def.argv(ctx, net.host);
  const service = new Service(name, wrapped(ctx, net.srvNs, argv), { logFile: logPath(ctx.logDir, `${name}-${scenario}`) });
  ctx.services.add(service);
  await service.waitReady(def.ready, def.readyTimeoutMs);
  checkPidRuns(service.pid, argv[0]);
  say(`[${scenario}] ${name} ready (pid ${service.pid})`);
  return service;
}

/**
 * The running server `name` of this scenario. A server that has died since (crashed, or killed from
 * outside) is a failure of its own; it is started again so that the other runs can go on.
 * Returns null if it cannot be had.
 */
async function liveServer(ctx, scenario, net, servers, name) {
  const service = servers.get(name);
  if (!service) return null;
  if (!service.exited) return service;
  const tail = service.output.text().split("\n").slice(-4).join("\n");
  ctx.services.delete(service);
  servers.set(name, null);
  recordFailure(ctx, { scenario, server: name, mode: "exited" }, new Error(`${describeExit(service.exited)}\n${tail}`));
  try {
    servers.set(name, await startServer(ctx, scenario, net, name));
  } catch (e) {
    recordFailure(ctx, { scenario, server: name, mode: "restart" }, e);
  }
  return servers.get(name);
}

async function stopServer(ctx, service) {
  await service.stop();
  ctx.services.delete(service);
}

// ---- the modes ----------------------------------------------------------------------------------

function commonClientArgs(net, protocol) {
  return ["--host", net.host, "--port", String(SERVERS[PROTOCOLS[protocol].server].port)];
}

/** Generous per-run timeout: every operation may take a few round trips (OPC UA connects ~10). */
function latencyTimeoutMs(ctx, sc) {
  const o = ctx.opts;
  const rttMs = Math.max(sc.nominal_rtt_ms ?? 0, 1);
  const ops = 2 * o.n + 10 * (o.connects + o.warmup);
  return (o.smoke ? 60_000 : 120_000) + ops * (3 * rttMs + 5);
}

async function runLatency(ctx, scenario, sc, net, protocol, server, roundNo) {
  const p = PROTOCOLS[protocol];
  const o = ctx.opts;
  const argv = wrapped(ctx, net.cliNs, [
    ...p.client(ctx),
    "latency",
    ...commonClientArgs(net, protocol),
    ...p.options(ctx),
    "--n",
    String(o.n),
    "--connects",
    String(o.connects),
    "--warmup",
    String(o.warmup),
    "--server-pid",
    String(server.pid),
  ]);
  const out = await runJsonClient(ctx, argv, latencyTimeoutMs(ctx, sc));
  const problems = validateLatency(out, { n: o.n, connects: o.connects });
  if (problems.length) throw new Error(`invalid output: ${problems.join("; ")}`);
  noteVersion(ctx, protocol, out.version);
  const p50 = (op) => fmtUs(percentile(sortedCopy(out[op].samples_us), 50));
  const figures = OPS.map((op) => `${op} ${p50(op)}`).join(", ");
  say(`[${scenario}] round ${roundNo} ${protocol}: ${figures} (p50)`);
  return out;
}

async function runThroughput(ctx, scenario, net, protocol, server, clients) {
  const p = PROTOCOLS[protocol];
  const o = ctx.opts;
  const pipeline = p.pipeline(ctx);
  const argv = wrapped(ctx, net.cliNs, [
    ...p.client(ctx),
    "throughput",
    ...commonClientArgs(net, protocol),
    ...p.options(ctx),
    "--clients",
    String(clients),
    "--seconds",
    String(o.throughputSeconds),
    "--pipeline",
    String(pipeline),
    "--server-pid",
    String(server.pid),
  ]);
  // Connecting 64 clients takes a moment; the run itself takes --throughput-seconds.
  const out = await runJsonClient(ctx, argv, 120_000 + o.throughputSeconds * 2000);
  const problems = validateThroughput(out, { clients });
  if (problems.length) throw new Error(`invalid output: ${problems.join("; ")}`);
  noteVersion(ctx, protocol, out.version);
  const entry = {
    clients,
    pipeline: out.pipeline ?? pipeline,
    ops: out.ops,
    seconds: round(out.seconds, 3),
    ops_per_s: round(out.ops_per_s, 1),
    cpu_client_us_per_op: round(out.cpu_client_us / out.ops),
    cpu_server_us_per_op: round(out.cpu_server_us / out.ops),
    // Cores kept busy: CPU time over wall time.
    client_cpu_cores: round(out.cpu_client_us / (out.seconds * 1e6)),
    server_cpu_cores: round(out.cpu_server_us / (out.seconds * 1e6)),
    errors: out.errors,
  };
  say(
    `[${scenario}] throughput ${protocol} ${clients} clients x ${entry.pipeline}: ` +
      `${Math.round(entry.ops_per_s)} reads/s, server ${entry.server_cpu_cores} cores`,
  );
  return entry;
}

async function runHold(ctx, scenario, net, server) {
  const o = ctx.opts;
  const argv = wrapped(ctx, net.cliNs, [
    ...PROTOCOLS[SCALE_PROTOCOL].client(ctx),
    "hold",
    ...commonClientArgs(net, SCALE_PROTOCOL),
    // Sessions without data links: the control channel is what a held session costs.
    ...srmcpOptions(ctx, "ml-kem-768", 0),
    "--sessions",
    String(o.sessions),
    "--server-pid",
    String(server.pid),
  ]);
  const out = await runJsonClient(ctx, argv, 300_000 + o.sessions * 100);
  const problems = validateHold(out, { sessions: o.sessions });
  if (problems.length) throw new Error(`invalid output: ${problems.join("; ")}`);
  noteVersion(ctx, SCALE_PROTOCOL, out.version);
  say(`[${scenario}] scale: ${out.opened} sessions held, server RSS ${out.rss_per_session_kib} KiB per session`);
  return out;
}

function noteVersion(ctx, protocol, version) {
  if (typeof version !== "string") return;
  const key = protocol === "modbus" ? "libmodbus" : protocol.startsWith("opcua") ? "node-opcua" : "srmcp";
  ctx.results.versions[key] ??= version;
}

// ---- one scenario -------------------------------------------------------------------------------

async function runScenario(ctx, scenario) {
  const sc = ctx.opts.scenarioDefs[scenario];
  const o = ctx.opts;
  say(`[${scenario}] ${sc.description ?? ""}`);
  let net;
  try {
    net = await setUpNetwork(ctx, scenario, sc);
  } catch (e) {
    if (e instanceof BenchFailure) throw e;
    recordFailure(ctx, { scenario, mode: "network" }, e);
    return;
  }
  const servers = new Map(); // server name -> Service
  const outputs = {}; // protocol -> latency outputs, one per successful round
  try {
    ctx.results.network[scenario] = {
      description: sc.description ?? null,
      network: sc.network,
      link: sc.link ?? null,
      a2b: sc.a2b ?? null,
      b2a: sc.b2a ?? null,
      nominal_rtt_ms: sc.nominal_rtt_ms ?? null,
      ...(await probeRtt(ctx, net)),
    };

    // Each server once per scenario, and only if a selected protocol needs it.
    const usable = [];
    for (const protocol of o.protocols) {
      const name = PROTOCOLS[protocol].server;
      if (!servers.has(name)) {
        try {
          servers.set(name, await startServer(ctx, scenario, net, name));
        } catch (e) {
          servers.set(name, null);
          recordFailure(ctx, { scenario, server: name, mode: "start" }, e);
        }
      }
      if (servers.get(name)) usable.push(protocol);
    }

    if (o.modes.includes("latency")) {
      for (let r = 1; r <= o.rounds; r++) {
        for (const protocol of usable) {
          const server = await liveServer(ctx, scenario, net, servers, PROTOCOLS[protocol].server);
          if (!server) continue;
          try {
            (outputs[protocol] ??= []).push(await runLatency(ctx, scenario, sc, net, protocol, server, r));
          } catch (e) {
            if (e instanceof BenchFailure) throw e;
            recordFailure(ctx, { scenario, protocol, mode: "latency", round: r }, withServerState(e, server));
          }
        }
      }
    }
    if (o.modes.includes("throughput") && sc.throughput) await throughputMode(ctx, scenario, net, usable, servers);
    if (o.modes.includes("scale") && sc.scale && usable.includes(SCALE_PROTOCOL)) {
      const server = await liveServer(ctx, scenario, net, servers, PROTOCOLS[SCALE_PROTOCOL].server);
      try {
        if (!server) throw new Error("no server");
        ctx.results.scale[scenario] = { [SCALE_PROTOCOL]: await runHold(ctx, scenario, net, server) };
      } catch (e) {
        if (e instanceof BenchFailure) throw e;
        recordFailure(ctx, { scenario, protocol: SCALE_PROTOCOL, mode: "scale" }, withServerState(e, server));
      }
    }
  } finally {
    // Statistics of whatever was measured, even when the scenario stopped half-way.
    ctx.results.scenarios[scenario] = scenarioStats(outputs);
    for (const service of servers.values()) if (service) await stopServer(ctx, service);
    await tearDownNetwork(net);
    if (net.statsFile && fs.existsSync(net.statsFile)) {
      ctx.results.network[scenario].linkem_stats = JSON.parse(fs.readFileSync(net.statsFile, "utf8"));
    }
  }
}

async function throughputMode(ctx, scenario, net, usable, servers) {
  const protocols = THROUGHPUT_PROTOCOLS.filter((p) => usable.includes(p));
  const table = (ctx.results.throughput[scenario] = {});
  for (const clients of ctx.opts.throughputClients) {
    for (const protocol of protocols) {
      const server = await liveServer(ctx, scenario, net, servers, PROTOCOLS[protocol].server);
      if (!server) continue;
      try {
        (table[protocol] ??= []).push(await runThroughput(ctx, scenario, net, protocol, server, clients));
      } catch (e) {
        if (e instanceof BenchFailure) throw e;
        recordFailure(ctx, { scenario, protocol, mode: "throughput", clients }, withServerState(e, server));
      }
    }
  }
}

/** Merges the rounds: per protocol and op the statistics, then the ratio to Modbus. */
function scenarioStats(outputs) {
  const stats = {};
  for (const [protocol, runs] of Object.entries(outputs)) {
    if (runs.length === 0) continue;
    const entry = { rounds: runs.length };
    for (const op of OPS) entry[op] = summarizePhases(runs.map((r) => r[op]));
    // SRMCP also times a connect of the control channel alone (no data links).
    if (runs.every((r) => r.connect_control)) entry.connect_control = summarizePhases(runs.map((r) => r.connect_control));
    for (const key of ["kem", "links", "security", "version"]) if (runs[0][key] !== undefined) entry[key] = runs[0][key];
    stats[protocol] = entry;
  }
  for (const entry of Object.values(stats)) {
    for (const op of [...OPS, "connect_control"]) {
      if (!entry[op]) continue;
      const base = stats.modbus?.[op === "connect_control" ? "connect" : op]?.p50_us;
      entry[op].ratio_to_modbus_p50 = base ? round(entry[op].p50_us / base, 3) : null;
    }
  }
  return stats;
}

// ---- targets ------------------------------------------------------------------------------------

function target(name, targetText, measured, met, note) {
  const known = measured !== null && measured !== undefined;
  return { name, target: targetText, measured: known ? measured : null, met: known ? met : null, note: note ?? null };
}

/** The targets of the issue, each with its measured figure (null = not measured in this run). */
function computeTargets(results) {
  const t = [];
  const lo = results.scenarios.loopback ?? {};
  const wan = results.scenarios.wan ?? {};
  const p50 = (sc, protocol, op) => sc[protocol]?.[op]?.p50_us ?? null;

  for (const op of ["read", "write"]) {
    const ratio = lo.srmcp?.[op]?.ratio_to_modbus_p50 ?? null;
    t.push(
      target(`loopback ${op} p50, SRMCP / libmodbus (same run)`, "<= 1.5", ratio, ratio <= 1.5,
        `SRMCP ${fmtUs(p50(lo, "srmcp", op))}, Modbus ${fmtUs(p50(lo, "modbus", op))}`),
    );
  }
  for (const protocol of ["srmcp", "srmcp-xwing"]) {
    const c = p50(lo, protocol, "connect_control");
    if (protocol !== "srmcp" && c === null) continue;
    const kem = protocol === "srmcp" ? "ML-KEM-768" : "X-Wing";
    const full = p50(lo, protocol, "connect");
    t.push(
      target(`loopback connect p50, SRMCP ${kem} control channel (TCP + TLS 1.3 + KEM), ms`, "< 5", ms(c), c < 5000,
        full === null ? null : `with its data link opened too: ${fmtUs(full)}`),
    );
  }
  for (const op of ["read", "write"]) {
    const s = p50(lo, "srmcp", op);
    const u = p50(lo, "opcua-secure", op);
    const ratio = s && u ? round(u / s, 2) : null;
    t.push(
      target(`loopback ${op} p50, OPC UA secure / SRMCP`, ">= 10", ratio, ratio >= 10,
        `OPC UA secure ${fmtUs(u)}, SRMCP ${fmtUs(s)}`),
    );
  }
  const rtt = wanRtt(results);
  {
    const r = p50(wan, "srmcp", "read");
    const limit = rtt.us === null ? null : 1.1 * rtt.us + 1000;
    t.push(
      target("WAN read p50, SRMCP, ms", limit === null ? "<= 1.1 x RTT + 1 ms" : `<= ${ms(limit)} (1.1 x RTT + 1 ms)`,
        ms(r), limit !== null && r <= limit, rtt.note),
    );
    const c = p50(wan, "srmcp", "connect_control");
    const full = p50(wan, "srmcp", "connect");
    const climit = rtt.us === null ? null : 3 * rtt.us + 5000;
    t.push(
      target("WAN connect p50, SRMCP ML-KEM-768 control channel, ms",
        climit === null ? "<= 3 x RTT + 5 ms" : `<= ${ms(climit)} (3 x RTT + 5 ms)`, ms(c), climit !== null && c <= climit,
        `${rtt.note}${full === null ? "" : `; with its data link opened too: ${fmtUs(full)}`}`),
    );
  }
  {
    let best = null;
    for (const [scenario, table] of Object.entries(results.throughput)) {
      for (const e of table.srmcp ?? []) {
        if (!best || e.ops_per_s > best.ops_per_s) best = { ...e, scenario };
      }
    }
    const cores = results.machine.nproc;
    t.push(
      target(`SRMCP reads/s, best throughput figure (${cores} cores, client and server on the same machine)`, ">= 50000",
        best ? Math.round(best.ops_per_s) : null, best?.ops_per_s >= 50_000,
        best ? `${best.scenario}, K = ${best.clients} clients, pipeline D = ${best.pipeline}` : null),
    );
  }
  {
    const s = Object.values(results.scale)[0]?.srmcp ?? null;
    const atScale = s && s.sessions >= 1000 && s.opened >= 1000;
    const tg = target("SRMCP sessions held open: server RSS per session, KiB", "1000 sessions, <= 256 KiB each",
      s ? s.rss_per_session_kib : null, atScale && s.rss_per_session_kib <= 256,
      s ? `${s.opened} of ${s.sessions} sessions opened` : null);
    if (s && !atScale) tg.met = null; // fewer than 1,000 sessions (e.g. --smoke): not the target's scale
    t.push(tg);
  }
  return t;
}

function ms(us) {
  return us === null || us === undefined ? null : round(us / 1000, 3);
}

/** The WAN RTT the WAN targets are measured against: the probe if it worked, else the nominal. */
function wanRtt(results) {
  const net = results.network.wan;
  if (!net) return { us: null, note: "no WAN scenario in this run" };
  if (net.rtt_probe_us) return { us: net.rtt_probe_us, note: `RTT ${fmtUs(net.rtt_probe_us)} (measured by the probe)` };
  if (net.nominal_rtt_ms) {
    return { us: net.nominal_rtt_ms * 1000, note: `RTT ${net.nominal_rtt_ms} ms (nominal; the probe failed)` };
  }
  return { us: null, note: "RTT unknown" };
}

// ---- machine and versions -----------------------------------------------------------------------

function commandOutput(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

function machineInfo() {
  const osRelease = fs.existsSync("/etc/os-release") ? fs.readFileSync("/etc/os-release", "utf8") : "";
  return {
    hostname: os.hostname(),
    cpu_model: os.cpus()[0]?.model ?? null,
    nproc: os.availableParallelism(),
    kernel: `${os.type()} ${os.release()}`,
    os: /^PRETTY_NAME="?([^"\n]*)"?/m.exec(osRelease)?.[1] ?? null,
    mem_bytes: os.totalmem(),
    mem_gib: round(os.totalmem() / 2 ** 30, 1),
  };
}

function baseVersions() {
  return {
    git_commit: commandOutput("git", ["-C", REPO, "rev-parse", "HEAD"]),
    openssl: commandOutput("openssl", ["version"]),
    node: process.version,
    libmodbus: null,
    "node-opcua": null,
    srmcp: null,
  };
}

// ---- PKI ----------------------------------------------------------------------------------------

/** A test PKI in the work directory; the server certificate names every address it listens on. */
function makePki(ctx) {
  const dir = path.join(ctx.work, "pki");
  execFileSync(bin(ctx, "pqot"), [
    "pki", "init", "--dir", dir, "--clients", "1",
    "--server-name", "localhost", "--server-name", LOOPBACK_ADDR, "--server-name", SERVER_ADDR,
  ], { stdio: ["ignore", "ignore", "pipe"] });
  return {
    ca: path.join(dir, "ca.crt"),
    serverCert: path.join(dir, "server.crt"),
    serverKey: path.join(dir, "server.key"),
    clientCert: path.join(dir, "client1.crt"),
    clientKey: path.join(dir, "client1.key"),
  };
}

// ---- results ------------------------------------------------------------------------------------

function configRecord(o) {
  return {
    rounds: o.rounds,
    n: o.n,
    connects: o.connects,
    warmup: o.warmup,
    scenarios: o.scenarios,
    protocols: o.protocols,
    modes: o.modes,
    throughput_seconds: o.throughputSeconds,
    throughput_clients: o.throughputClients,
    pipeline: o.pipeline,
    sessions: o.sessions,
    smoke: o.smoke,
    keep_going: o.keepGoing,
    nofile_limit: null,
    percentiles: "nearest rank over all rounds' samples merged (p50 of an even count is the lower middle sample)",
    order: "interleaved rounds: each round runs every protocol once, in the order of 'protocols'",
  };
}

function timestampName(date) {
  return date.toISOString().replace(/\.\d+Z$/, "Z").replaceAll(":", "-");
}

function writeResults(ctx) {
  const r = ctx.results;
  r.finished = new Date().toISOString();
  r.targets = computeTargets(r);
  fs.mkdirSync(ctx.opts.out, { recursive: true });
  const file = path.join(ctx.opts.out, `${timestampName(new Date(r.started))}.json`);
  const text = JSON.stringify(r, null, 2) + "\n";
  fs.writeFileSync(file, text);
  fs.writeFileSync(path.join(ctx.opts.out, "latest.json"), text);
  say(`results: ${file}`);
  return file;
}

/** Smoke check: every selected protocol measured in every mode it takes part in, no failure. */
function smokeProblems(ctx) {
  const r = ctx.results;
  const where = (f) =>
    Object.entries(f)
      .filter(([k]) => k !== "error")
      .map(([, v]) => v)
      .join(" ");
  const problems = r.failures.map((f) => `${where(f)}: ${f.error}`);
  if (r.error) problems.push(r.error);
  for (const scenario of ctx.opts.scenarios) {
    const sc = ctx.opts.scenarioDefs[scenario];
    for (const protocol of ctx.opts.protocols) {
      if (ctx.opts.modes.includes("latency") && r.scenarios[scenario]?.[protocol]?.rounds !== ctx.opts.rounds) {
        problems.push(`${scenario} ${protocol}: no valid latency figures`);
      }
      if (ctx.opts.modes.includes("throughput") && sc.throughput && THROUGHPUT_PROTOCOLS.includes(protocol)) {
        const got = r.throughput[scenario]?.[protocol]?.length ?? 0;
        if (got !== ctx.opts.throughputClients.length) problems.push(`${scenario} ${protocol}: no valid throughput figures`);
      }
    }
    if (ctx.opts.modes.includes("scale") && sc.scale && ctx.opts.protocols.includes(SCALE_PROTOCOL) && !r.scale[scenario]) {
      problems.push(`${scenario} ${SCALE_PROTOCOL}: no valid scale figures`);
    }
  }
  return [...new Set(problems)];
}

// ---- cleanup ------------------------------------------------------------------------------------

/** Synchronous last-resort cleanup: safe from 'exit' and signal handlers, idempotent. */
function cleanUpNow(ctx) {
  killAllChildren("SIGKILL");
  deleteOwnNamespaces();
  if (ctx.work && !ctx.opts.keepWork) fs.rmSync(ctx.work, { recursive: true, force: true });
}

/** Work directories (test PKI, logs) of harness runs that were killed before they cleaned up. */
function removeStaleWorkDirs() {
  const removed = [];
  for (const name of fs.readdirSync(os.tmpdir())) {
    const m = /^pqb-(\d+)-[A-Za-z0-9]{6}$/.exec(name);
    if (!m || Number(m[1]) === process.pid || isLiveHarness(Number(m[1]))) continue;
    fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
    removed.push(path.join(os.tmpdir(), name));
  }
  return removed;
}

function installSignalHandlers(ctx) {
  const numbers = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 };
  for (const sig of Object.keys(numbers)) {
    process.on(sig, () => {
      say(`${sig}: stopping, cleaning up`);
      ctx.results.error = `interrupted by ${sig}`;
      cleanUpNow(ctx);
      try {
        writeResults(ctx);
      } catch (e) {
        say(`could not write results: ${e.message}`);
      }
      process.exit(128 + numbers[sig]);
    });
  }
  process.on("exit", () => cleanUpNow(ctx));
}

// ---- main ---------------------------------------------------------------------------------------

// Exit code of a --smoke run that cannot run here (not root): ctest reports the test as skipped.
const SKIP_EXIT_CODE = 77;

function checkPrerequisites(ctx) {
  const needed = new Set([bin(ctx, "pqot")]);
  if (ctx.opts.scenarios.some((s) => ctx.opts.scenarioDefs[s].network === "linkem")) needed.add(bin(ctx, "linkem"));
  const missing = [];
  for (const protocol of ctx.opts.protocols) {
    for (const file of programsOf(ctx, protocol)) {
      if (!fs.existsSync(file)) missing.push({ protocol, file });
    }
  }
  for (const file of needed) if (!fs.existsSync(file)) missing.push({ protocol: null, file });
  return missing;
}

function reportMissing(ctx, missing) {
  const lines = missing.map((m) => `  ${path.relative(REPO, m.file) || m.file}${m.protocol ? ` (${m.protocol})` : ""}`);
  const text = `missing programs (build them: cmake --build build):\n${lines.join("\n")}`;
  const fatal = missing.some((m) => m.protocol === null);
  if (fatal || !ctx.opts.keepGoing) throw new Error(text);
  // --keep-going: run without the protocols whose programs are missing, and say so in the results.
  say(text);
  const dropped = new Set(missing.map((m) => m.protocol));
  for (const protocol of dropped) ctx.results.failures.push({ protocol, mode: "setup", error: "program missing" });
  ctx.opts.protocols = ctx.opts.protocols.filter((p) => !dropped.has(p));
}

async function main() {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench: ${e.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const ctx = {
    opts,
    nofile: nofileLimit(),
    work: null,
    logDir: null,
    pki: null,
    services: new Set(),
    results: {
      schema: 1,
      started: new Date().toISOString(),
      finished: null,
      machine: machineInfo(),
      versions: baseVersions(),
      config: configRecord(opts),
      network: {},
      scenarios: {},
      throughput: {},
      scale: {},
      targets: [],
      failures: [],
      error: null,
    },
  };
  ctx.results.config.nofile_limit = ctx.nofile;

  if (process.getuid() !== 0) {
    say("needs root: it creates network namespaces and TUN devices (run it as root, or with sudo)");
    if (opts.smoke) say("smoke: skipped");
    return opts.smoke ? SKIP_EXIT_CODE : 2;
  }
  try {
    const missing = checkPrerequisites(ctx);
    if (missing.length) reportMissing(ctx, missing);
  } catch (e) {
    say(e.message);
    return 2;
  }

  const stale = [...removeStaleNamespaces(), ...removeStaleWorkDirs()];
  if (stale.length) say(`removed leftovers of killed runs: ${stale.join(", ")}`);
  installSignalHandlers(ctx);
  ctx.work = fs.mkdtempSync(path.join(os.tmpdir(), `pqb-${process.pid}-`));
  ctx.logDir = path.join(ctx.work, "logs");
  fs.mkdirSync(ctx.logDir);

  try {
    ctx.pki = makePki(ctx);
    for (const scenario of opts.scenarios) await runScenario(ctx, scenario);
  } catch (e) {
    ctx.results.error = e instanceof BenchFailure ? `stopped: ${e.message}` : e.stack ?? String(e);
    say(`stopped: ${e.message}`);
  } finally {
    for (const service of ctx.services) await service.stop();
    if (opts.keepWork) say(`work directory kept: ${ctx.work}`);
    cleanUpNow(ctx);
  }

  writeResults(ctx);
  printTargets(ctx.results);

  if (opts.smoke) {
    const problems = smokeProblems(ctx);
    if (problems.length) {
      say(`smoke: FAILED\n  ${problems.join("\n  ")}`);
      return 1;
    }
    say(`smoke: OK (${opts.protocols.join(", ")})`);
    return 0;
  }
  if (opts.report) {
    // latest.json rather than the timestamped copy: that is the file kept in the repository.
    const latest = path.join(opts.out, "latest.json");
    const res = spawnSync(process.execPath, [path.join(HERE, "report.mjs"), latest], { stdio: "inherit" });
    if (res.status !== 0) {
      say("report.mjs failed");
      return 1;
    }
  }
  return ctx.results.error || ctx.results.failures.length ? 1 : 0;
}

function printTargets(results) {
  for (const t of results.targets) {
    const verdict = t.measured === null ? "not measured" : t.met === null ? "not judged" : t.met ? "met" : "NOT met";
    say(`target: ${t.name}: ${t.measured ?? "-"} (target ${t.target}) ${verdict}`);
  }
}

process.exitCode = await main();

#!/usr/bin/env node
// The Modbus gateway benchmark (docs/benchmarks.md, "Modbus gateway"; issue: srmcpd in the plant).
//
// On loopback, in the same run and interleaved in rounds:
//   direct   modbus-bench-client -> pqot-modbus-sim                  (plain Modbus TCP)
//   gateway  srmcp-bench -> srmcpd (Modbus backend) -> pqot-modbus-sim
//   polled   the same with the nodes polled every 100 ms (reads answer from the last poll)
//   memory   srmcp-bench -> srmcpd (memory nodes)                    (the SRMCP cost alone)
// each for a read of 1 node (1 register) and of 10 nodes (10 contiguous registers, one batched
// Modbus request), and a write of 1 node; plus the loopback round trip (linkem-probe, UDP). The
// target: the gateway adds (gateway - direct) less than one loopback round trip plus the SRMCP
// cost (memory). Then polling: srmcpd polls 1,000 points on 3 simulated devices every 100 ms
// and its CPU time is measured over a window; the target is under 10 % of one core.
//
//   node bench/gateway.mjs [--rounds 3] [--n 1000] [--bin-dir build/bin] [--out bench/results]
//                          [--poll-seconds 10] [--srmcpd-threads N]
// --srmcpd-threads sets srmcpd's I/O threads (default: its own default, 2). With 1, every session
// is on the device's event loop; with more, a session on another loop pays a hand-off each way.
// No root needed; nothing leaves loopback. Writes <out>/gateway-<timestamp>.json and
// <out>/gateway-latest.json and prints a Markdown summary.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { Service, killAllChildren, parseClientJson, runClient } from "./lib/procs.mjs";
import { percentile, round, sortedCopy } from "./lib/stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    n: { type: "string", default: "1000" },
    "bin-dir": { type: "string", default: path.join(REPO, "build", "bin") },
    out: { type: "string", default: path.join(HERE, "results") },
    "poll-seconds": { type: "string", default: "10" },
    "srmcpd-threads": { type: "string", default: "" },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1, 21).join("\n"));
  process.exit(0);
}
const ROUNDS = Number(args.rounds);
const N = Number(args.n);
const POLL_SECONDS = Number(args["poll-seconds"]);
const BIN = path.resolve(args["bin-dir"]);
const bin = (name) => path.join(BIN, name);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "pqot-gw-bench-"));

process.on("SIGINT", () => {
  killAllChildren();
  process.exit(130);
});

function cpuSeconds(pid) {
  // /proc/PID/stat fields 14 and 15 (utime, stime) in clock ticks; the command may hold spaces.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

async function startSim(name) {
  const svc = new Service(name, [bin("pqot-modbus-sim"), "--listen", "127.0.0.1:0"]);
  await svc.waitReady("pqot-modbus-sim listening on", 10000);
  svc.port = portOf(svc, "pqot-modbus-sim listening on");
  return svc;
}

// The port in the line where a server announced itself ("... listening on 127.0.0.1:PORT").
function portOf(svc, marker) {
  const line = svc.output.lines.find((l) => l.includes(marker));
  return Number(/listening on [0-9.]+:(\d+)/.exec(line)[1]);
}

async function startSrmcpd(name, config) {
  const file = path.join(work, `${name}.toml`);
  fs.writeFileSync(file, config);
  const pki = path.join(work, "pki");
  const svc = new Service(name, [
    bin("srmcpd"), "--config", file, "--listen", "127.0.0.1:0",
    "--ca", path.join(pki, "ca.crt"), "--cert", path.join(pki, "server.crt"), "--key", path.join(pki, "server.key"),
  ]);
  await svc.waitReady("srmcpd listening on", 10000);
  svc.port = portOf(svc, "srmcpd listening on");
  return svc;
}

function srmcpArgs(port) {
  const pki = path.join(work, "pki");
  return ["--port", String(port), "--ca", path.join(pki, "ca.crt"), "--cert", path.join(pki, "client1.crt"),
          "--key", path.join(pki, "client1.key")];
}

const THREADS = args["srmcpd-threads"];
function serverHeader() {
  const threads = THREADS ? `threads = ${Number(THREADS)}\n` : "";
  return `[server]\ndata_ports = "29000-29999"\nmax_sessions = 100\n${threads}`;
}

// bench.r0..r9 on holding registers 100..109 of the simulator: on demand (no cache, no polling),
// or polled every `pollMs` (reads then answer from the last poll; writes still go to the device).
// The simulator stores what it is sent, so its writes are confirmed by the FC06 echo
// (write_confirm = "echo", docs/srmcpd-modbus.md): one Modbus exchange, as the direct client makes.
function gatewayConfig(simPort, pollMs = 0) {
  const poll = pollMs > 0 ? `, poll_ms = ${pollMs}` : "";
  let t = serverHeader() + `[[device]]\nname = "sim"\nhost = "127.0.0.1"\nport = ${simPort}\n` +
          `write_confirm = "echo"\n[[node]]\nid = "bench"\n`;
  for (let i = 0; i < 10; i++) {
    t += `[[node]]\nid = "bench.r${i}"\nparent = "bench"\naccess = "readwrite"\n` +
         `modbus = { device = "sim", table = "holding", address = ${100 + i}, type = "uint16"${poll} }\n`;
  }
  return t;
}

function memoryConfig() {
  let t = serverHeader() + `[[node]]\nid = "bench"\n`;
  for (let i = 0; i < 10; i++) {
    t += `[[node]]\nid = "bench.r${i}"\nparent = "bench"\ntype = "int64"\naccess = "readwrite"\nvalue = ${100 + i}\n`;
  }
  return t;
}

// 1,000 uint16 points on three devices, every one polled every 100 ms.
function pollConfig(ports) {
  let t = serverHeader();
  let count = 0;
  ports.forEach((port, d) => {
    t += `[[device]]\nname = "d${d}"\nhost = "127.0.0.1"\nport = ${port}\n`;
  });
  ports.forEach((_, d) => {
    t += `[[node]]\nid = "d${d}"\n`;
    for (const table of ["holding", "input"]) {
      for (let a = 0; a < 200 && count < 1000; a++, count++) {
        t += `[[node]]\nid = "d${d}.${table}${a}"\nparent = "d${d}"\n` +
             `modbus = { device = "d${d}", table = "${table}", address = ${a}, type = "uint16", poll_ms = 100 }\n`;
      }
    }
  });
  if (count !== 1000) throw new Error(`poll config has ${count} points`);
  return t;
}

async function client(argv) {
  const r = await runClient(argv, { timeoutMs: 600000 });
  if (r.code !== 0) throw new Error(`${argv.join(" ")} failed (${r.code}):\n${r.stderr}`);
  return parseClientJson(r.stdout);
}

function summary(samples) {
  const s = sortedCopy(samples);
  return { p50_us: round(percentile(s, 50), 1), p99_us: round(percentile(s, 99), 1), n: s.length };
}

async function loopbackRtt() {
  const port = 17000 + Math.floor(Math.random() * 1000);
  const echo = new Service("echo", [bin("linkem-probe"), "serve", "--port", String(port)]);
  await echo.waitReady("probe ready", 5000);
  const r = await runClient([bin("linkem-probe"), "udp", "--host", "127.0.0.1", "--port", String(port), "--count", "500",
                             "--interval-ms", "0.2", "--wait-ms", "200"], { timeoutMs: 60000 });
  await echo.stop();
  const m = /median_us=([0-9.]+)/.exec(r.stdout + r.stderr);
  if (!m) throw new Error(`linkem-probe udp: ${r.stdout}${r.stderr}`);
  return Number(m[1]);
}

async function main() {
  execFileSync(bin("pqot"), ["pki", "init", "--dir", path.join(work, "pki"), "--clients", "1"], { stdio: "ignore" });
  const sim = await startSim("sim");
  const gateway = await startSrmcpd("srmcpd-gateway", gatewayConfig(sim.port));
  const polled = await startSrmcpd("srmcpd-polled", gatewayConfig(sim.port, 100));
  const memory = await startSrmcpd("srmcpd-memory", memoryConfig());
  // The bench data (bench/README.md): registers 101..109 hold 101..109; 100 is written.
  const seed = [];
  for (let i = 1; i < 10; i++) seed.push(`bench.r${i}=${100 + i}`);
  execFileSync(bin("srmcp"), ["--server", `127.0.0.1:${gateway.port}`, "--ca", path.join(work, "pki", "ca.crt"),
                              "--cert", path.join(work, "pki", "client1.crt"), "--key", path.join(work, "pki", "client1.key"),
                              "write", ...seed], { stdio: "ignore" });

  const kinds = ["direct", "gateway", "polled", "memory"];
  const samples = {};
  for (const k of kinds) for (const p of [1, 10]) samples[`${k}-${p}`] = { read: [], write: [] };
  // Each round's median per kind and operation: how much the figure moves between rounds.
  const roundP50 = {};
  for (const key of Object.keys(samples)) roundP50[key] = { read: [], write: [] };
  const median = (xs) => percentile(sortedCopy(xs), 50);
  const rtts = [];
  for (let round_ = 0; round_ < ROUNDS; round_++) {
    rtts.push(await loopbackRtt());
    for (const points of [1, 10]) {
      const common = ["--n", String(N), "--connects", "1", "--warmup", "20"];
      const runs = {
        direct: [bin("modbus-bench-client"), "--port", String(sim.port), "--base", "100", "--points", String(points), ...common],
        gateway: [bin("srmcp-bench"), "latency", ...srmcpArgs(gateway.port), "--points", String(points), ...common],
        polled: [bin("srmcp-bench"), "latency", ...srmcpArgs(polled.port), "--points", String(points), ...common],
        memory: [bin("srmcp-bench"), "latency", ...srmcpArgs(memory.port), "--points", String(points), ...common],
      };
      for (const k of kinds) {
        const out = await client(runs[k]);
        samples[`${k}-${points}`].read.push(...out.read.samples_us);
        samples[`${k}-${points}`].write.push(...out.write.samples_us);
        roundP50[`${k}-${points}`].read.push(round(median(out.read.samples_us), 1));
        roundP50[`${k}-${points}`].write.push(round(median(out.write.samples_us), 1));
        process.stderr.write(`round ${round_ + 1}: ${k} ${points} point(s) done\n`);
      }
    }
  }
  await gateway.stop();
  await polled.stop();
  await memory.stop();
  await sim.stop();

  const rtt = sortedCopy(rtts)[Math.floor(rtts.length / 2)];
  const latency = {};
  for (const [key, s] of Object.entries(samples)) {
    latency[key] = { read: { ...summary(s.read), round_p50_us: roundP50[key].read },
                     write: { ...summary(s.write), round_p50_us: roundP50[key].write } };
  }
  const targets = [];
  for (const points of [1, 10]) {
    for (const op of ["read", "write"]) {
      if (op === "write" && points === 10) continue;  // writes are of one node either way
      const direct = latency[`direct-${points}`][op].p50_us;
      const gw = latency[`gateway-${points}`][op].p50_us;
      const srmcp = latency[`memory-${points}`][op].p50_us;
      const added = round(gw - direct, 1);
      // Per round: the gateway's median less the direct median of the same round.
      const addedPerRound = latency[`gateway-${points}`][op].round_p50_us.map(
        (g, i) => round(g - latency[`direct-${points}`][op].round_p50_us[i], 1));
      const limit = round(rtt + srmcp, 1);
      targets.push({ what: `${op} of ${points} node(s)`, direct_us: direct, gateway_us: gw,
                     gateway_polled_us: latency[`polled-${points}`][op].p50_us, srmcp_memory_us: srmcp,
                     added_us: added, added_per_round_us: addedPerRound, limit_us: limit, met: added < limit });
    }
  }

  // Polling: 1,000 points every 100 ms on three devices.
  const sims = [await startSim("poll-sim0"), await startSim("poll-sim1"), await startSim("poll-sim2")];
  const poller = await startSrmcpd("srmcpd-poll", pollConfig(sims.map((s) => s.port)));
  await new Promise((r) => setTimeout(r, 2000));  // connects and first polls
  const c0 = cpuSeconds(poller.pid);
  const s0 = sims.map((s) => cpuSeconds(s.pid));
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, POLL_SECONDS * 1000));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const srmcpdCore = (cpuSeconds(poller.pid) - c0) / wall;
  const simCore = sims.reduce((acc, s, i) => acc + (cpuSeconds(s.pid) - s0[i]), 0) / wall;
  await poller.stop();
  for (const s of sims) await s.stop();
  const polling = { points: 1000, devices: 3, interval_ms: 100, seconds: round(wall, 1),
                    srmcpd_core_percent: round(srmcpdCore * 100, 2), simulators_core_percent: round(simCore * 100, 2),
                    met: srmcpdCore < 0.1 };

  const result = {
    date: new Date().toISOString(), host: os.hostname(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model,
    rounds: ROUNDS, n: N, srmcpd_threads: THREADS ? Number(THREADS) : "default", loopback_rtt_us: { per_round: rtts, median: rtt }, latency, targets, polling,
  };
  fs.mkdirSync(args.out, { recursive: true });
  const stamp = result.date.replace(/[:.]/g, "-");
  fs.writeFileSync(path.join(args.out, `gateway-${stamp}.json`), JSON.stringify(result, null, 2) + "\n");
  fs.writeFileSync(path.join(args.out, "gateway-latest.json"), JSON.stringify(result, null, 2) + "\n");

  console.log(`Loopback RTT (UDP, median of ${ROUNDS} rounds): ${rtt} µs\n`);
  console.log("| operation | direct Modbus p50 | through the gateway p50 | gateway, polled nodes p50 | SRMCP, memory nodes p50 | added by the gateway | added, per round | limit (RTT + SRMCP) | met? |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const t of targets) {
    console.log(`| ${t.what} | ${t.direct_us} µs | ${t.gateway_us} µs | ${t.gateway_polled_us} µs | ${t.srmcp_memory_us} µs | ${t.added_us} µs | ${t.added_per_round_us.join(" / ")} µs | ${t.limit_us} µs | ${t.met ? "yes" : "no"} |`);
  }
  console.log(`\nPolling ${polling.points} points on ${polling.devices} devices every ${polling.interval_ms} ms: ` +
              `srmcpd ${polling.srmcpd_core_percent} % of one core (simulators ${polling.simulators_core_percent} %) over ` +
              `${polling.seconds} s: ${polling.met ? "met" : "not met"} (target < 10 %)`);
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(`gateway.mjs: ${e.stack || e}`);
  killAllChildren();
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(1);
});

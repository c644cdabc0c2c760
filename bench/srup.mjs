#!/usr/bin/env node
// `make bench-srup`: SRUP-PQ commands through a mosquitto broker over ten emulated networks, beside
// plain MQTT and the original SRUP envelope (issue 16; docs/benchmarks.md, "SRUP-PQ over ten
// networks"). Root is needed (namespaces, TUN).
//
//   sudo node bench/srup.mjs [--profiles 1,2,...] [--rounds auto|N] [--smoke] [--out bench/results]
//                            [--bin-dir build/bin]
//
// Per profile (bench/srup/profiles.json: delay, jitter, rate and loss, each with its source): two
// namespaces, "plant" (the broker and the C2's client) and "field" (the device's client), joined
// by bench/linkem with the profile on both directions (up = field to plant). `srup bench-mqtt
// --device-netns field --broker-address 10.203.0.1` runs in "plant" and measures every contender
// in the same run (commands: plain MQTT without and with TLS, SRUP-PQ's three suites, the original
// SRUP; telemetry: plain MQTT without and with TLS, SRUP-PQ's mode 3); its figures come from one
// monotonic clock. linkem's counters give the IP bytes that crossed the link. Slow profiles take
// fewer exchanges (the budget is one hour in all).
// A run fails if a contender is missing or a message was lost. Writes <out>/srup-<timestamp>.json
// and (not for --smoke) <out>/srup-latest.json. --smoke (make test): ten exchanges per contender.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { createNamespace, deleteOwnNamespaces, namespaceName, removeStaleNamespaces } from "./lib/netns.mjs";
import { Service, killAllChildren, parseClientJson, runClient } from "./lib/procs.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");

const { values: args } = parseArgs({
  options: {
    profiles: { type: "string", default: "1,2,3,4,5,6,7,8,9,10" },
    rounds: { type: "string", default: "auto" },
    smoke: { type: "boolean", default: false },
    out: { type: "string", default: path.join(HERE, "results") },
    "bin-dir": { type: "string", default: path.join(REPO, "build", "bin") },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1, 17).join("\n"));
  process.exit(0);
}

const PLANT_ADDR = "10.203.0.1";
const FIELD_ADDR = "10.203.0.2";
const profiles = JSON.parse(fs.readFileSync(path.join(HERE, "srup", "profiles.json"), "utf8")).profiles;
const bin = (name) => path.join(args["bin-dir"], name);

// Exchanges (commands or readings) per contender and round: about ten minutes of the hour for the slowest profiles, more
// where a command takes milliseconds. The smoke run sends a handful.
function countFor(p) {
  if (args.smoke) return 10;
  const rttMs = 2 * p.delay_ms;
  const slowestKbit = Math.min(p.up_kbit || Infinity, p.down_kbit || Infinity);
  if (rttMs === 0) return 500;
  if (slowestKbit <= 64) return 12;
  if (slowestKbit <= 200) return 25;
  if (rttMs >= 300) return 40;
  return 100;
}

// Rounds: three where a round is cheap (LAN and the 4G profiles: every link at 9 Mbit/s or more,
// round trips up to 170 ms), where the machine's noise is a visible share of the figures; one on
// the slow profiles, whose figures the emulated link dominates and whose round takes minutes.
function roundsFor(p) {
  if (args.smoke) return 1;
  if (args.rounds !== "auto") return Number(args.rounds);
  const slowestKbit = Math.min(p.up_kbit || Infinity, p.down_kbit || Infinity);
  return 2 * p.delay_ms <= 170 && slowestKbit >= 9000 ? 3 : 1;
}

function linkArgs(p, field, plant) {
  const a = ["--ns-a", field, "--addr-a", `${FIELD_ADDR}/24`, "--ns-b", plant, "--addr-b", `${PLANT_ADDR}/24`,
             "--dev", "lks0", "--seed", String(p.id)];
  if (p.delay_ms) a.push("--delay-ms", String(p.delay_ms));
  if (p.jitter_ms) a.push("--jitter-ms", String(p.jitter_ms));
  if (p.loss) a.push("--loss", String(p.loss));
  if (p.up_kbit) a.push("--a2b-rate-mbit", String(p.up_kbit / 1000));
  if (p.down_kbit) a.push("--b2a-rate-mbit", String(p.down_kbit / 1000));
  return a;
}

// Every contender measured, and nothing lost on a link without loss (QoS 1 over TCP: on the
// lossy ones too, since a command counts as lost only after 10 s without its answer).
const CONTENDERS = ["MQTT, no TLS", "MQTT over TLS", "SRUP-PQ ML-DSA-65 + ML-KEM-768", "SRUP-PQ Ed25519 + X-Wing",
                    "SRUP-PQ hybrid ML-DSA-65+Ed25519 + X-Wing", "SRUP original, RSA-2048",
                    "telemetry, MQTT, no TLS", "telemetry, MQTT over TLS", "telemetry, SRUP-PQ mode 3"];
function check(p, result) {
  const names = new Set(result.results.map((r) => r.contender));
  for (const c of CONTENDERS) {
    if (!names.has(c)) throw new Error(`profile ${p.id}: no result for ${c}`);
  }
  if (!p.loss && result.late_messages > 0) {
    throw new Error(`profile ${p.id}: ${result.late_messages} message(s) arrived with no exchange in progress`);
  }
  for (const r of result.results) {
    if (r.lost > 0) throw new Error(`profile ${p.id}: ${r.contender} (${r.note}) lost ${r.lost} commands`);
    if (!(r.one_way.p50.median > 0)) throw new Error(`profile ${p.id}: ${r.contender}: no one-way figure`);
  }
}

async function runProfile(p, work) {
  const field = namespaceName(`f${p.id}`);
  const plant = namespaceName(`p${p.id}`);
  createNamespace(field);
  createNamespace(plant);
  const stats = path.join(work, `linkem-${p.id}.json`);
  const linkem = new Service(`linkem${p.id}`, [bin("linkem"), ...linkArgs(p, field, plant), "--stats-json", stats],
                             { logFile: path.join(work, `linkem-${p.id}.log`) });
  try {
    await linkem.waitReady("linkem ready", 10000);
    const count = countFor(p);
    const argv = ["ip", "netns", "exec", plant, bin("srup"), "bench-mqtt", "--json", "--count", String(count),
                  "--rounds", String(roundsFor(p)), "--warmup", args.smoke ? "2" : "5",
                  "--device-netns", field, "--broker-address", PLANT_ADDR];
    // Slow links: the journal on disk only (the fsync's cost is measured on the LAN profile).
    if (p.id !== 1) argv.push("--tmpfs-dir", "");
    const started = Date.now();
    const res = await runClient(argv, { timeoutMs: 40 * 60 * 1000, logFile: path.join(work, `bench-${p.id}.log`) });
    if (res.code !== 0) {
      throw new Error(`profile ${p.id}: srup bench-mqtt ${res.timedOut ? "timed out" : `exited ${res.code}`}:\n` +
                      res.stderr.split("\n").slice(-15).join("\n"));
    }
    const result = parseClientJson(res.stdout);
    await linkem.stop();
    const link = JSON.parse(fs.readFileSync(stats, "utf8"));
    check(p, result);
    return { profile: p, count, rounds: roundsFor(p), seconds: (Date.now() - started) / 1000, result, link };
  } finally {
    await linkem.stop();
    deleteOwnNamespaces();
  }
}

async function main() {
  if (process.getuid() !== 0) {
    process.stderr.write("bench/srup.mjs needs root (network namespaces, TUN devices)\n");
    process.exit(args.smoke ? 77 : 1);  // 77: CTest's "skipped" for the smoke run
  }
  for (const b of ["srup", "linkem"]) {
    if (!fs.existsSync(bin(b))) throw new Error(`${bin(b)} missing: build it (make bench-srup builds srup and linkem)`);
  }
  removeStaleNamespaces();
  const wanted = args.profiles.split(",").map(Number);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "bench-srup-"));
  const runs = [];
  for (const p of profiles.filter((x) => wanted.includes(x.id))) {
    process.stderr.write(`profile ${p.id} (${p.name}): ${countFor(p)} exchanges per contender, ${roundsFor(p)} round(s)\n`);
    runs.push(await runProfile(p, work));
  }
  const out = { kind: "srup", started: new Date().toISOString(), host: os.hostname(), cpus: os.cpus().length,
                smoke: args.smoke, runs };
  fs.mkdirSync(args.out, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const file = path.join(args.out, `srup-${stamp}.json`);
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
  if (!args.smoke) fs.copyFileSync(file, path.join(args.out, "srup-latest.json"));
  process.stdout.write(`${file}\n`);
  fs.rmSync(work, { recursive: true, force: true });
}

const cleanup = () => {
  killAllChildren();
  deleteOwnNamespaces();
};
process.on("SIGINT", () => { cleanup(); process.exit(130); });
process.on("SIGTERM", () => { cleanup(); process.exit(143); });
main().catch((e) => {
  process.stderr.write(`bench/srup.mjs: ${e.message}\n`);
  cleanup();
  process.exit(1);
});

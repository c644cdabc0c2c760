#!/usr/bin/env node
// Renders a results JSON of bench/srup.mjs into docs/benchmarks.md's section "SRUP-PQ over ten
// networks" and a PNG plot (issue 16).
//
//   node bench/srup-report.mjs [bench/results/srup-latest.json] [--doc docs/benchmarks.md] [--img docs/img]
//
// Only the text between <!-- srup:begin --> and <!-- srup:end --> is replaced (the markers are
// appended under a heading if the document has none); the commentary around them is by hand.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { fmtUs, gnuplotQuote, pngTerminal, runGnuplot, spliceBetween, table } from "./lib/report-common.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");
const BEGIN = "<!-- srup:begin -->";
const END = "<!-- srup:end -->";

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    doc: { type: "string", default: path.join(REPO, "docs", "benchmarks.md") },
    img: { type: "string", default: path.join(REPO, "docs", "img") },
  },
});
const input = positionals[0] ?? path.join(HERE, "results", "srup-latest.json");
const run = JSON.parse(fs.readFileSync(input, "utf8"));

const PLAIN = "MQTT, no TLS";
const TLS = "MQTT over TLS";
const MLDSA = "SRUP-PQ ML-DSA-65 + ML-KEM-768";
const ED = "SRUP-PQ Ed25519 + X-Wing";
const HYBRID = "SRUP-PQ hybrid ML-DSA-65+Ed25519 + X-Wing";
const ORIGINAL = "SRUP original, RSA-2048";
const TM_PLAIN = "telemetry, MQTT, no TLS";
const TM_TLS = "telemetry, MQTT over TLS";
const TM_SRUP = "telemetry, SRUP-PQ mode 3";
const DISK = "journal on disk (fsync)";
const TMPFS = "journal on tmpfs (no fsync cost)";

const find = (r, name, note) => r.result.results.find((x) => x.contender === name && (!note || x.note === note));
const p50 = (x) => x?.one_way.p50.median;
const fmtKbit = (k) => (k ? (k >= 1000 ? `${k / 1000} Mbit/s` : `${k} kbit/s`) : "–");
const pctOf = (a, b) => (a !== undefined && b ? `${((a / b) * 100).toFixed(1)} %` : "–");
const lostIn = (r) => r.result.results.reduce((n, x) => n + x.lost, 0);
const ipBytes = (x) => (x?.ip_bytes_per_exchange
  ? `${x.ip_bytes_per_exchange.up.median.toFixed(0)} / ${x.ip_bytes_per_exchange.down.median.toFixed(0)}` : "–");

function profilesTable() {
  return table(
    ["#", "profile", "one-way delay", "jitter (±)", "down / up", "loss", "source"],
    run.runs.map(({ profile: p }) => [p.id, p.name, `${p.delay_ms} ms`, `${p.jitter_ms} ms`,
      `${fmtKbit(p.down_kbit)} / ${fmtKbit(p.up_kbit)}`, p.loss ? `${(p.loss * 100).toFixed(0)} %` : "0", p.source]),
    ["r", "", "r", "r", "r", "r", ""],
  );
}

function latencyTable() {
  const rows = run.runs.map((r) => {
    const plain = p50(find(r, PLAIN));
    const ml = p50(find(r, MLDSA, DISK));
    const tmPlain = p50(find(r, TM_PLAIN));
    const tmSrup = p50(find(r, TM_SRUP));
    return [r.profile.id, r.profile.name, r.rounds > 1 ? `${r.count} × ${r.rounds} rounds` : String(r.count), fmtUs(plain), fmtUs(p50(find(r, TLS))), fmtUs(ml),
      pctOf(ml - plain, plain), fmtUs(p50(find(r, ED, DISK))), fmtUs(p50(find(r, HYBRID, DISK))),
      fmtUs(p50(find(r, ORIGINAL))), fmtUs(tmPlain), fmtUs(p50(find(r, TM_TLS))), fmtUs(tmSrup), lostIn(r)];
  });
  return table(["#", "profile", "per contender", "plain MQTT", "MQTT + TLS", "SRUP-PQ ML-DSA-65", "added",
    "Ed25519 + X-Wing", "hybrid", "original SRUP (RSA-2048)", "telemetry: plain", "+ TLS", "SRUP-PQ mode 3", "lost"],
  rows, ["r", "", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"]);
}

function bytesTable() {
  const names = [[PLAIN], [TLS], [MLDSA, DISK], [ORIGINAL], [TM_PLAIN], [TM_TLS], [TM_SRUP]];
  const first = run.runs[0];
  const header = ["#", "profile", ...names.map(([n]) => n.replace("SRUP-PQ ML-DSA-65 + ML-KEM-768", "SRUP-PQ ML-DSA-65"))];
  const rows = [["", "MQTT payload, B (message / answer)", ...names.map(([n, note]) => {
    const x = find(first, n, note);
    return x ? (x.flow === "command" ? `${x.message_bytes} / ${x.answer_bytes}` : `${x.message_bytes}`) : "–";
  })]];
  for (const r of run.runs) rows.push([r.profile.id, `${r.profile.name}: IP B up / down`, ...names.map(([n, note]) => ipBytes(find(r, n, note)))]);
  return table(header, rows, ["r", "", ...names.map(() => "r")]);
}

function cpuTable() {
  const rows = [];
  for (const r of run.runs) {
    rows.push([r.profile.id, r.profile.name, ...[[PLAIN], [MLDSA, DISK], [ED, DISK], [HYBRID, DISK], [ORIGINAL], [TM_PLAIN], [TM_SRUP]]
      .map(([n, note]) => {
        const x = find(r, n, note);
        return x ? `${x.device_cpu_p50.median.toFixed(0)} / ${x.c2_cpu_p50.median.toFixed(0)}` : "–";
      })]);
  }
  return table(["#", "profile", "plain MQTT", "SRUP-PQ ML-DSA-65", "Ed25519 + X-Wing", "hybrid", "original SRUP",
    "telemetry: plain", "SRUP-PQ mode 3"], rows, ["r", "", "r", "r", "r", "r", "r", "r", "r"]);
}

function detailTable(r) {
  return table(
    ["contender", "journal / note", "message B", "answer B", "payload B per exchange", "IP B up / down", "one-way p50", "p99", "mean",
     "added p50", "round trip p50", "mean", "device CPU", "C2 CPU", "lost"],
    r.result.results.map((x) => [x.contender, x.note, x.message_bytes, x.answer_bytes ?? "–",
      x.payload_bytes_per_exchange.median.toFixed(1), ipBytes(x),
      fmtUs(x.one_way.p50.median), fmtUs(x.one_way.p99.median), fmtUs(x.one_way.mean.median),
      fmtUs(x.added_one_way_p50), x.round_trip ? fmtUs(x.round_trip.p50.median) : "–",
      x.round_trip ? fmtUs(x.round_trip.mean.median) : "–",
      fmtUs(x.device_cpu_p50.median), fmtUs(x.c2_cpu_p50.median), x.lost]),
    ["", "", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
  );
}

function targets() {
  const out = [];
  const lan = run.runs.find((r) => r.profile.id === 1);
  if (lan) {
    const plain = p50(find(lan, PLAIN));
    const tls = p50(find(lan, TLS));
    const tmpfs = p50(find(lan, MLDSA, TMPFS));
    const disk = p50(find(lan, MLDSA, DISK));
    const orig = p50(find(lan, ORIGINAL));
    out.push(["LAN: SRUP-PQ (ML-DSA-65) adds at most 1 ms p50 to plain MQTT's one-way latency (journal on tmpfs; the fsync apart)",
      tmpfs === undefined ? "–" : fmtUs(tmpfs - plain), tmpfs === undefined ? "–" : tmpfs - plain <= 1000 ? "**met**" : "**missed**",
      [disk !== undefined && tmpfs !== undefined ? `fsync: ${fmtUs(disk - tmpfs)} more with the journal on disk` : "",
       tls !== undefined && tmpfs !== undefined ? `over MQTT + TLS: ${fmtUs(tmpfs - tls)}` : "",
       orig !== undefined ? `original SRUP (RSA-2048), same run: ${fmtUs(orig - plain)}` : ""].filter(Boolean).join("; ")]);
  }
  for (const r of run.runs.filter((x) => x.profile.id !== 1)) {
    const plain = p50(find(r, PLAIN));
    const ml = p50(find(r, MLDSA, DISK));
    const added = ml - plain;
    const orig = p50(find(r, ORIGINAL));
    out.push([`profile ${r.profile.id} (${r.profile.name}): SRUP-PQ adds at most 5 % to plain MQTT's one-way p50`,
      `${fmtUs(added)} (${pctOf(added, plain)})`, added <= 0.05 * plain ? "**met**" : "**missed**",
      `command ${find(r, MLDSA, DISK)?.message_bytes} B against ${find(r, PLAIN)?.message_bytes} B` +
        (orig !== undefined ? `; original SRUP: ${pctOf(orig - plain, plain)}` : "")]);
  }
  const lossless = run.runs.filter((r) => !r.profile.loss);
  const lossy = run.runs.filter((r) => r.profile.loss);
  const lostA = lossless.reduce((n, r) => n + lostIn(r), 0);
  const lostB = lossy.reduce((n, r) => n + lostIn(r), 0);
  out.push([`no message lost on the ${lossless.length} profiles without loss`, String(lostA), lostA === 0 ? "**met**" : "**missed**", ""]);
  if (lossy.length) {
    const counted = lossy.every((r) => r.result.late_messages !== undefined);
    const late = counted ? String(lossy.reduce((n, r) => n + r.result.late_messages, 0)) : "not counted by this run's srup";
    out.push([`on the ${lossy.length} lossy profiles every QoS-1 message arrives`, `${lostB} lost`, lostB === 0 ? "**met**" : "**missed**",
      `a message counts as lost after 10 s without its answer; ${late} arrived with no exchange in progress (late or duplicated)`]);
  }
  const first = run.runs[0];
  const tp = find(first, TM_PLAIN);
  const ts = find(first, TM_SRUP);
  if (tp && ts) {
    const added = ts.message_bytes - tp.message_bytes;
    const mean = ts.payload_bytes_per_exchange.median - tp.payload_bytes_per_exchange.median;
    out.push(["SRUP-PQ telemetry (mode 3, the session-keyed telemetry) adds at most 60 bytes per message to plain MQTT's payload",
      `${added} B`, added <= 60 ? "**met**" : "**missed**",
      `the same ${tp.message_bytes}-byte reading both ways; with the signed Checkpoint every 64 readings, ${mean.toFixed(1)} B per reading on average`]);
  }
  return table(["target", "measured", "", "note"], out);
}

function plot(tmp) {
  const data = path.join(tmp, "srup.dat");
  const series = [[PLAIN], [TLS], [MLDSA, DISK], [ED, DISK], [HYBRID, DISK], [ORIGINAL], [TM_SRUP]];
  const lines = run.runs.map((r) => [r.profile.id, ...series.map(([n, note]) => ((p50(find(r, n, note)) ?? NaN) / 1000).toFixed(3))].join(" "));
  fs.writeFileSync(data, lines.join("\n") + "\n");
  const file = path.join(opts.img, "srup-profiles.png");
  const titles = ["plain MQTT", "MQTT + TLS", "SRUP-PQ ML-DSA-65", "SRUP-PQ Ed25519 + X-Wing", "SRUP-PQ hybrid",
    "original SRUP (RSA-2048)", "telemetry, SRUP-PQ mode 3"];
  const script = [
    `set terminal ${pngTerminal()}`,
    `set output ${gnuplotQuote(file)}`,
    `set title "One-way latency (p50) per network profile"`,
    `set xlabel "profile (bench/srup/profiles.json)"`,
    `set ylabel "ms (log scale)"`,
    "set logscale y",
    "set key top left",
    "set grid ytics",
    "set xtics 1",
    `plot ${titles.map((t, i) => `${gnuplotQuote(data)} using 1:${i + 2} with linespoints title ${gnuplotQuote(t)}`).join(", ")}`,
  ].join("\n");
  runGnuplot(script, tmp, "srup-profiles");
  return path.relative(path.dirname(opts.doc), file);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "srup-report-"));
const img = plot(tmp);
const lan = run.runs.find((r) => r.profile.id === 1);
const generated = [
  `Results of \`${path.relative(REPO, input)}\`, started ${run.started}${run.smoke ? " (smoke run: too short to read anything into)" : ""}; ` +
    `${run.cpus} CPUs; ${(run.runs.reduce((t, r) => t + r.seconds, 0) / 60).toFixed(1)} minutes in all. ` +
    "Figures are medians over the rounds of each round's p50 / p99 / mean (one round: that round's).",
  "",
  "**The profiles** (the link between the device's namespace and the broker's; up = device to broker):",
  "",
  profilesTable(),
  "",
  "**One-way latency, p50** (commands: the C2 starts making the command → the device has accepted it, the journal on disk; " +
    "telemetry: the device starts sealing a reading → the monitor has opened it). *per contender*: measured exchanges per contender and round:",
  "",
  latencyTable(),
  "",
  `![one-way latency per profile](${img})`,
  "",
  "**Bytes per exchange:** the MQTT payload, then the IP bytes that crossed the link per exchange (up = sent by the device's side; " +
    "commands: the command, the answer and their acknowledgements; telemetry: the reading, its PUBACK and its share of the Checkpoints):",
  "",
  bytesTable(),
  "",
  "**CPU per exchange** (µs, median; device / C2; commands: the device receives and answers, the C2 makes the command and checks the answer; " +
    "telemetry: the device seals, the monitor opens):",
  "",
  cpuTable(),
  "",
  ...(lan ? ["**LAN in detail:**", "", detailTable(lan), ""] : []),
  "**Targets:**",
  "",
  targets(),
].join("\n");
const doc = fs.readFileSync(opts.doc, "utf8");
fs.writeFileSync(opts.doc, spliceBetween(doc, generated, BEGIN, END, "## SRUP-PQ over ten networks\n\n"));
fs.rmSync(tmp, { recursive: true, force: true });
process.stdout.write(`${opts.doc} updated\n`);

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

const PLAIN = "MQTT, no envelope";
const MLDSA = "SRUP-PQ ML-DSA-65 + ML-KEM-768";
const ED = "SRUP-PQ Ed25519 + X-Wing";
const HYBRID = "SRUP-PQ hybrid ML-DSA-65+Ed25519 + X-Wing";
const ORIGINAL = "SRUP original, RSA-2048";
const DISK = "journal on disk (fsync)";
const TMPFS = "journal on tmpfs (no fsync cost)";

const find = (r, name, note) => r.result.results.find((x) => x.contender === name && (!note || x.note === note));
const p50 = (x) => x?.one_way.p50.median;
const fmtKbit = (k) => (k ? (k >= 1000 ? `${k / 1000} Mbit/s` : `${k} kbit/s`) : "–");
const pctOf = (a, b) => (a !== undefined && b ? `${((a / b) * 100).toFixed(1)} %` : "–");

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
    return [r.profile.id, r.profile.name, r.count, fmtUs(plain), fmtUs(ml), pctOf(ml - plain, plain),
      fmtUs(p50(find(r, ED, DISK))), fmtUs(p50(find(r, HYBRID, DISK))), fmtUs(p50(find(r, ORIGINAL))),
      r.result.results.reduce((n, x) => n + x.lost, 0)];
  });
  return table(["#", "profile", "commands", "plain MQTT", "SRUP-PQ ML-DSA-65", "added", "Ed25519 + X-Wing",
    "hybrid", "original SRUP (RSA-2048)", "lost"], rows, ["r", "", "r", "r", "r", "r", "r", "r", "r", "r"]);
}

function detailTable(r) {
  const plain = p50(find(r, PLAIN));
  return table(
    ["contender", "journal / note", "command B", "IP B up / down per command", "one-way p50", "p99", "mean",
     "added p50", "round trip p50", "mean", "device CPU", "C2 CPU", "lost"],
    r.result.results.map((x) => [x.contender, x.note, x.command_bytes,
      x.ip_bytes_per_command ? `${x.ip_bytes_per_command.up.median.toFixed(0)} / ${x.ip_bytes_per_command.down.median.toFixed(0)}` : "–",
      fmtUs(x.one_way.p50.median), fmtUs(x.one_way.p99.median), fmtUs(x.one_way.mean.median),
      fmtUs(x.one_way.p50.median - plain), fmtUs(x.round_trip.p50.median), fmtUs(x.round_trip.mean.median),
      fmtUs(x.device_cpu_p50.median), fmtUs(x.c2_cpu_p50.median), x.lost]),
    ["", "", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
  );
}

function targets() {
  const out = [];
  const lan = run.runs.find((r) => r.profile.id === 1);
  if (lan) {
    const plain = p50(find(lan, PLAIN));
    const tmpfs = p50(find(lan, MLDSA, TMPFS));
    const disk = p50(find(lan, MLDSA, DISK));
    out.push(["SRUP-PQ (ML-DSA-65) adds at most 1 ms p50 to plain MQTT's one-way latency on LAN (journal on tmpfs; the fsync apart)",
      tmpfs === undefined ? "–" : fmtUs(tmpfs - plain), tmpfs === undefined ? "–" : tmpfs - plain <= 1000 ? "**met**" : "**missed**",
      disk === undefined || tmpfs === undefined ? "" : `fsync: ${fmtUs(disk - tmpfs)} more with the journal on disk`]);
  }
  for (const r of run.runs.filter((x) => x.profile.id !== 1)) {
    const plain = p50(find(r, PLAIN));
    const ml = p50(find(r, MLDSA, DISK));
    const added = ml - plain;
    out.push([`profile ${r.profile.id} (${r.profile.name}): at most 5 % added to plain MQTT's one-way p50`,
      `${fmtUs(added)} (${pctOf(added, plain)})`, added <= 0.05 * plain ? "**met**" : "**missed**",
      `command ${find(r, MLDSA, DISK)?.command_bytes} B against ${find(r, PLAIN)?.command_bytes} B`]);
  }
  const lost = run.runs.reduce((n, r) => n + r.result.results.reduce((m, x) => m + x.lost, 0), 0);
  out.push(["no message lost on any profile (QoS 1 delivers on the lossy ones too)", String(lost), lost === 0 ? "**met**" : "**missed**", ""]);
  out.push(["SRUP-PQ telemetry in session mode adds at most 60 bytes per message", "–", "not measured yet", "next step of issue 16"]);
  return table(["target", "measured", "", "note"], out);
}

function plot(tmp) {
  const data = path.join(tmp, "srup.dat");
  const series = [[PLAIN], [MLDSA, DISK], [ED, DISK], [HYBRID, DISK], [ORIGINAL]];
  const lines = run.runs.map((r) => [r.profile.id, ...series.map(([n, note]) => ((p50(find(r, n, note)) ?? NaN) / 1000).toFixed(3))].join(" "));
  fs.writeFileSync(data, lines.join("\n") + "\n");
  const file = path.join(opts.img, "srup-profiles.png");
  const titles = ["plain MQTT", "SRUP-PQ ML-DSA-65", "SRUP-PQ Ed25519 + X-Wing", "SRUP-PQ hybrid", "original SRUP (RSA-2048)"];
  const script = [
    `set terminal ${pngTerminal()}`,
    `set output ${gnuplotQuote(file)}`,
    `set title "One-way command latency (p50) per network profile"`,
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
    `${run.cpus} CPUs. Figures are medians over the rounds of each round's p50 / p99 / mean.`,
  "",
  "**The profiles** (the link between the device's namespace and the broker's; up = device to broker):",
  "",
  profilesTable(),
  "",
  "**One-way command latency, p50** (C2 starts making the command → the device has accepted it; the journal on disk):",
  "",
  latencyTable(),
  "",
  `![one-way latency per profile](${img})`,
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

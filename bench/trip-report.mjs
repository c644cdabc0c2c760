#!/usr/bin/env node
// Renders a results JSON of bench/trip.mjs into docs/benchmarks.md's TRIP section and PNG plots.
//
//   node bench/trip-report.mjs [bench/results/trip-latest.json] [--doc docs/benchmarks.md] [--img docs/img]
//
// Only the text between <!-- trip:begin --> and <!-- trip:end --> is replaced (the markers are
// appended under a "## TRIP" heading if the document has none); the commentary around them is
// written by hand. Plots: docs/img/trip-overhead.png, trip-paths.png, trip-loopback.png.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { fmtUs, gnuplotQuote, pngTerminal, runGnuplot, spliceBetween, table } from "./lib/report-common.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");
const BEGIN = "<!-- trip:begin -->";
const END = "<!-- trip:end -->";

const LABEL = {
  trip1: "TRIP, 1 path",
  trip2: "TRIP, 2 paths",
  trip3: "TRIP, 3 paths",
  wg: "wireguard-go, 1 tunnel",
  udp: "plain UDP (no tunnel)",
};
const COLOUR = { trip3: "#1f77b4", trip2: "#6baed6", trip1: "#9ecae1", wg: "#d62728", udp: "#7f7f7f" };

// ---- formatting ---------------------------------------------------------------------------------

const fmtNum = (x, d = 0) =>
  x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toLocaleString("en-US", { maximumFractionDigits: d });
const pct = (x, d = 1) => (x === null || x === undefined ? "–" : `${(x * 100).toFixed(d)} %`);
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : "–");

// ---- sections -----------------------------------------------------------------------------------

function runSection(r, shown) {
  const m = r.machine ?? {};
  const v = r.versions ?? {};
  const la = r.load_average ?? {};
  const versions = Object.entries(v).filter(([, x]) => x).map(([k, x]) => `${k} \`${k === "git_commit" ? x.slice(0, 12) : x}\``);
  return [
    `Results of \`${shown}\`, run ${r.started} – ${r.finished}: ${r.config.rounds} round(s)` +
      `${r.config.smoke ? " (smoke run: too short to read anything into)" : ""}.`,
    "",
    `**Machine:** ${m.cpu_model ?? "?"}, ${m.nproc ?? "?"} cores, ${m.mem_gib ?? "?"} GiB, ${m.kernel ?? "?"}` +
      `${m.os ? `, ${m.os}` : ""}. **Load average** (1 min) at the start ${la.start?.[0] ?? "?"}, at each round ` +
      `${(la.rounds ?? []).join(", ")}, at the end ${la.end?.[0] ?? "?"}.`,
    "",
    `**Versions:** ${versions.join(", ")}.`,
  ].join("\n");
}

function targetsSection(r) {
  const rows = (r.targets ?? []).map((t) => [t.name, t.goal, t.measured === null ? "–" : String(t.measured),
    t.met === null ? "–" : t.met ? "**met**" : "**missed**", t.note ?? ""]);
  return ["### Targets", "", table(["target", "goal", "measured", "", "note"], rows, [null, null, "r"])].join("\n");
}

function overheadSection(r, img) {
  const s = r.overhead?.summary;
  if (!s) return "";
  const rows = Object.entries(s).map(([k, o]) => [
    LABEL[k] ?? k,
    String(o.paths),
    fmtNum(o.bytes_per_datagram, 1),
    pct(o.total_overhead, 2),
    `${pct(o.total_overhead_range[0], 2)} – ${pct(o.total_overhead_range[1], 2)}`,
    o.formula === null ? "–" : pct(o.formula, 2),
    pct(o.per_path_overhead, 2),
    o.overhead_per_copy === undefined || o.overhead_per_copy === null ? "–" : fmtNum(o.overhead_per_copy, 2),
    o.keepalive_share === null || o.keepalive_share === undefined ? "–" : pct(o.keepalive_share, 2),
    o.other_share === null ? "–" : pct(o.other_share, 2),
    o.return_packets_per_datagram === undefined || o.return_packets_per_datagram === null ? "–" : fmtNum(o.return_packets_per_datagram, 4),
  ]);
  return [
    "### Overhead",
    "",
    `A steady stream (${r.config.size}-byte datagrams every ${r.config.interval_us / 1000} ms for ` +
      `${r.config.overheadSeconds} s per round); IP bytes counted on the path links (the TUN devices in r1..r3, both ` +
      "directions) against the plain datagrams' IP bytes (190 per datagram, sent once). Medians over rounds.",
    "",
    img ? `![overhead: measured against the formula](${img})\n` : "",
    table(
      ["contender", "paths", "IP bytes per datagram", "total overhead", "round range", "formula N×(1+28/190)−1",
        "per path", "bytes per copy over 190 (less keepalives)", "keepalive share", "control share", "return packets per datagram"],
      rows,
      [null, "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
    ),
  ].join("\n");
}

function loopbackSection(r, img) {
  const l = r.loopback;
  if (!l) return "";
  const row = (k, every, x) => [k, every, fmtUs(x.p50_us), fmtUs(x.p99_us), fmtUs(x.mean_us),
    `${fmtUs(x.p50_range_us[0])} – ${fmtUs(x.p50_range_us[1])}`, `${x.lost} / ${x.sent}`];
  const rows = [];
  const added = [];
  for (const v of [l, l.dense].filter(Boolean)) {
    const every = `${v.interval_us / 1000} ms`;
    rows.push(row("direct (sender → receiver)", every, v.direct),
              row("TRIP (sender → reflector → filter → receiver)", every, v.trip));
    added.push(`every ${every}: **${fmtUs(v.added_p50_us)} at p50** (per round: ` +
               `${v.added_p50_rounds_us.map(fmtUs).join(", ")}), ${fmtUs(v.added_p99_us)} at p99`);
  }
  return [
    "### Added latency on loopback",
    "",
    `One namespace, ${r.config.loopbackCount} datagrams per variant and round, the variants alternating. ` +
      "Medians over rounds of each round's percentiles.",
    "",
    img ? `![loopback: direct and through reflector + filter](${img})\n` : "",
    table(["variant", "a datagram every", "p50", "p99", "mean", "round p50 range", "lost / sent"], rows,
      [null, "r", "r", "r", "r", "r", "r"]),
    "",
    `Added by TRIP: ${added.join("; ")}.`,
  ].join("\n");
}

function pathsSection(r, img) {
  const s = r.paths?.summary;
  if (!s) return "";
  const rows = [];
  for (const [k, x] of Object.entries(s)) {
    for (const phase of ["quiet", "flood"]) {
      const y = x[phase];
      const won = y.won ? Object.entries(y.won).map(([p, n]) => `${p} ${n}`).join(", ") : "";
      rows.push([
        phase === "quiet" ? LABEL[k] ?? k : "",
        phase === "quiet" ? "no flood" : "flooded",
        fmtUs(y.p50_us), fmtUs(y.p99_us), fmtUs(y.max_us),
        `${fmtUs(y.p50_range_us[0])} – ${fmtUs(y.p50_range_us[1])}`,
        ratio(y.p50_us, s.trip3?.[phase]?.p50_us),
        `${y.lost} / ${y.sent} (${pct(y.loss, 2)})`,
        won,
      ]);
    }
  }
  return [
    "### Three paths, with and without the flood",
    "",
    `Paths of ${r.config.delays_ms.join(", ")} ms one way (linkem), each through a tripd relay; the 12 ms path ` +
      `behind a ${r.config.flood.rate} tbf, flooded with ${r.config.flood.pps} datagrams/s of ${r.config.flood.size} bytes ` +
      `(about ${((r.config.flood.pps * (r.config.flood.size + 28) * 8) / 1e6).toFixed(0)} Mbit/s). ` +
      `${r.config.latencyCount} datagrams per contender, phase and round. The single-path contenders all take the ` +
      "flooded route (relay r1). One-way latency, sender to receiver; medians over rounds of each round's percentiles.",
    "",
    img ? `![three paths: p50 and p99 one-way latency, with and without the flood](${img})\n` : "",
    table(["contender", "phase", "p50", "p99", "max", "round p50 range", "p50 vs TRIP 3 paths", "lost / sent",
      "first arrivals per path (all rounds)"], rows, [null, null, "r", "r", "r", "r", "r", "r", null]),
  ].join("\n");
}

function throughputSection(r) {
  const t = r.throughput;
  if (!t) return "";
  const rows = t.rounds.map((x, i) => [String(i + 1), fmtNum(x.sent), fmtNum(x.taken), fmtNum(x.delivered),
    fmtNum(x.delivered_per_s), fmtNum(x.reflector_cpu_s, 2), fmtNum(x.filter_cpu_s, 2), fmtNum(x.reflector_per_cpu_s),
    fmtNum(x.filter_per_cpu_s), fmtNum(x.both_per_cpu_s)]);
  return [
    "### Datagrams per second per core",
    "",
    `${fmtNum(r.config.blastCount)} datagrams of ${r.config.size} bytes sent flat out through reflector + filter on ` +
      "loopback (one path); each tripd's CPU time from /proc/PID/stat. The sender, both tripds and the receiver " +
      "share the machine's cores, so the reflector drops what it cannot take; the per-CPU-second figures are what " +
      "each side costs.",
    "",
    table(["round", "sent", "taken by the reflector", "delivered by the filter", "delivered/s", "reflector CPU s",
      "filter CPU s", "reflector: datagrams per CPU-s", "filter: datagrams per CPU-s", "both: delivered per CPU-s"],
      rows, [null, "r", "r", "r", "r", "r", "r", "r", "r", "r"]),
    "",
    `Medians: **${fmtNum(t.delivered_per_s)} delivered/s**, reflector **${fmtNum(t.reflector_per_cpu_s)}** and filter ` +
      `**${fmtNum(t.filter_per_cpu_s)}** datagrams per CPU-second (${fmtNum(t.both_per_cpu_s)} per CPU-second of both).`,
  ].join("\n");
}

// ---- plots --------------------------------------------------------------------------------------

const q = gnuplotQuote;

/**
 * Grouped bars: groups along x, one bar per series, from the axis up to `value`, with a line up to
 * `high` where given. data[series][group] = {value, high}. Log scale when `log`.
 */
function barsScript({ terminal, out, title, ylabel, groups, series, data, log, highTitle, yFormat }) {
  const width = series.length + 1;
  const lines = [`set terminal ${terminal}`, `set output ${q(out)}`, `set title ${q(title)}`, `set ylabel ${q(ylabel)}`];
  let lo = Infinity;
  let hi = 0;
  const blocks = series.map((s, si) => groups.map((g, gi) => {
    const d = data[s]?.[g];
    if (!d || !(d.value > 0)) return null;
    lo = Math.min(lo, d.value);
    hi = Math.max(hi, d.high ?? d.value);
    return `${gi * width + si + 1} ${d.value} ${d.high ?? d.value}`;
  }).filter(Boolean));
  if (log) {
    const ymin = 10 ** Math.floor(Math.log10(lo / 1.5));
    const ymax = 10 ** Math.ceil(Math.log10(hi * 1.5));
    lines.push("set logscale y", `set yrange [${ymin}:${ymax}]`);
  } else {
    lines.push(`set yrange [0:${hi * 1.15}]`);
  }
  if (yFormat) lines.push(`set format y ${q(yFormat)}`);
  const xtics = groups.map((g, gi) => `${q(g)} ${gi * width + (series.length + 1) / 2}`).join(", ");
  lines.push(`set xrange [0:${groups.length * width}]`, `set xtics (${xtics}) scale 0`, "set grid ytics",
    "set boxwidth 0.9", "set style fill solid 0.85 border -1", "set key below horizontal");
  const plots = [];
  let titled = false;
  blocks.forEach((rows, i) => {
    if (rows.length === 0) return;
    lines.push(`$s${i} << EOD`, ...rows, "EOD");
    plots.push(`$s${i} using 1:2 with boxes lc rgb ${q(COLOUR[series[i]] ?? "#333333")} title ${q(LABEL[series[i]] ?? series[i])}`);
  });
  if (highTitle) {
    blocks.forEach((rows, i) => {
      if (rows.length === 0) return;
      plots.push(`$s${i} using 1:2:(0):($3-$2) with vectors nohead lc rgb "black" lw 1.5 title ${titled ? '""' : q(highTitle)}`);
      plots.push(`$s${i} using ($1-0.2):3:(0.4):(0) with vectors nohead lc rgb "black" lw 1.5 notitle`);
      titled = true;
    });
  }
  lines.push(`plot ${plots.join(", \\\n     ")}`);
  return lines.join("\n") + "\n";
}

function overheadPlot(r, terminal, imgDir, tmp) {
  const s = r.overhead?.summary;
  if (!s) return null;
  const out = path.join(imgDir, "trip-overhead.png");
  // Two series per contender: measured and the formula; groups are the contenders.
  const groups = Object.keys(s).map((k) => LABEL[k] ?? k);
  const lines = [`set terminal ${terminal}`, `set output ${q(out)}`,
    `set title ${q("Total overhead against the plain datagrams' IP bytes (162-byte datagrams, every 10 ms)")}`,
    `set ylabel ${q("overhead (%)")}`, "set style data histograms", "set style histogram clustered gap 1",
    "set style fill solid 0.85 border -1", "set grid ytics", "set key below horizontal", "set yrange [0:*]",
    "set offsets 0, 0, graph 0.08, 0", "$d << EOD"];
  Object.entries(s).forEach(([k, o], i) => {
    lines.push(`${q(groups[i])} ${(o.total_overhead * 100).toFixed(3)} ${o.formula === null ? "NaN" : (o.formula * 100).toFixed(3)}`);
  });
  lines.push("EOD",
    `plot $d using 2:xtic(1) lc rgb "#1f77b4" title "measured (data + keepalives + control)", ` +
      `'' using 3 lc rgb "#bbbbbb" title "N × (1 + 28/190) − 1", ` +
      `'' using 0:2:(sprintf("%.1f %%", $2)) with labels offset -2.5,0.7 notitle`);
  runGnuplot(lines.join("\n") + "\n", tmp, "trip-overhead");
  return out;
}

function pathsPlot(r, terminal, imgDir, tmp) {
  const s = r.paths?.summary;
  if (!s) return null;
  const out = path.join(imgDir, "trip-paths.png");
  const series = Object.keys(s);
  const data = {};
  for (const k of series) {
    data[k] = {
      "no flood": { value: s[k].quiet.p50_us / 1000, high: s[k].quiet.p99_us / 1000 },
      "12 ms path flooded": { value: s[k].flood.p50_us / 1000, high: s[k].flood.p99_us / 1000 },
    };
  }
  const script = barsScript({ terminal, out, title: "One-way latency through the lab (bars p50, lines up to p99)",
    ylabel: "one-way latency, ms (log scale)", groups: ["no flood", "12 ms path flooded"], series, data, log: true,
    highTitle: "p50 → p99", yFormat: "%g" });
  runGnuplot(script, tmp, "trip-paths");
  return out;
}

function loopbackPlot(r, terminal, imgDir, tmp) {
  const l = r.loopback;
  if (!l) return null;
  const out = path.join(imgDir, "trip-loopback.png");
  const lines = [`set terminal ${terminal}`, `set output ${q(out)}`,
    `set title ${q("Loopback: one-way latency, direct and through reflector + filter (1 path)")}`,
    `set ylabel ${q("one-way latency, µs (log scale)")}`, "set style data histograms", "set style histogram clustered gap 1",
    "set style fill solid 0.85 border -1", "set grid ytics", "set key below horizontal", "set logscale y",
    "$d << EOD",
    `"p50, every 10 ms" ${l.direct.p50_us} ${l.trip.p50_us}`,
    `"p99, every 10 ms" ${l.direct.p99_us} ${l.trip.p99_us}`,
    ...(l.dense ? [`"p50, every 1 ms" ${l.dense.direct.p50_us} ${l.dense.trip.p50_us}`,
                   `"p99, every 1 ms" ${l.dense.direct.p99_us} ${l.dense.trip.p99_us}`] : []),
    "EOD",
    `plot $d using 2:xtic(1) lc rgb "#7f7f7f" title "direct", '' using 3 lc rgb "#1f77b4" title "TRIP (reflector + filter)", ` +
      `'' using ($0-0.13):2:(sprintf("%.0f", $2)) with labels offset 0,0.7 notitle, ` +
      `'' using ($0+0.13):3:(sprintf("%.0f", $3)) with labels offset 0,0.7 notitle`];
  runGnuplot(lines.join("\n") + "\n", tmp, "trip-loopback");
  return out;
}

function main() {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      doc: { type: "string", default: path.join(REPO, "docs", "benchmarks.md") },
      img: { type: "string", default: path.join(REPO, "docs", "img") },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write("usage: node bench/trip-report.mjs [trip-latest.json] [--doc docs/benchmarks.md] [--img docs/img]\n");
    return 0;
  }
  const file = path.resolve(positionals[0] ?? path.join(HERE, "results", "trip-latest.json"));
  const r = JSON.parse(fs.readFileSync(file, "utf8"));
  if (r.schema !== 1 || r.kind !== "trip") throw new Error(`${file}: not a bench/trip.mjs results file`);
  const docFile = path.resolve(values.doc);
  const imgDir = path.resolve(values.img);
  fs.mkdirSync(imgDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pqb-trip-report-"));
  const rel = (f) => (f ? path.relative(path.dirname(docFile), f).split(path.sep).join("/") : null);
  try {
    const terminal = pngTerminal();
    const shown = path.relative(REPO, file);
    const sections = [
      runSection(r, shown.startsWith("..") ? file : shown),
      targetsSection(r),
      overheadSection(r, rel(overheadPlot(r, terminal, imgDir, tmp))),
      loopbackSection(r, rel(loopbackPlot(r, terminal, imgDir, tmp))),
      pathsSection(r, rel(pathsPlot(r, terminal, imgDir, tmp))),
      throughputSection(r),
    ];
    const doc = fs.existsSync(docFile) ? fs.readFileSync(docFile, "utf8") : "# Benchmarks\n";
    fs.writeFileSync(docFile, spliceBetween(doc, sections.filter(Boolean).join("\n\n"), BEGIN, END, "## TRIP\n\n"));
    process.stderr.write(`trip-report: ${docFile} and plots in ${imgDir}\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return 0;
}

try {
  process.exitCode = main();
} catch (e) {
  process.stderr.write(`trip-report: ${e.message}\n`);
  process.exitCode = 1;
}

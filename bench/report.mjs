#!/usr/bin/env node
// Renders a results JSON of bench/run.mjs into docs/benchmarks.md and PNG plots (gnuplot).
//
//   node bench/report.mjs [results.json] [--doc docs/benchmarks.md] [--img docs/img]
//
// Only the text between the markers <!-- results:begin --> and <!-- results:end --> of the document
// is replaced; the commentary around them is kept as it is. Plots: one per scenario (p50 bars with
// a line up to p99, log scale, grouped by operation) and one per scenario with throughput figures.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { fmtUs, gnuplotQuote, pngTerminal, runGnuplot, spliceBetween, table } from "./lib/report-common.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");
const BEGIN = "<!-- results:begin -->";
const END = "<!-- results:end -->";
const OPS = ["connect", "read", "write"];

const PROTOCOL_LABEL = {
  modbus: "Modbus TCP (libmodbus)",
  srmcp: "SRMCP (ML-KEM-768, 1 link)",
  "srmcp-json": "SRMCP (ML-KEM-768, 1 link, JSON bodies)",
  "srmcp-3links": "SRMCP (ML-KEM-768, 3 links)",
  "srmcp-xwing": "SRMCP (X-Wing, 1 link)",
  "opcua-none": "OPC UA (None)",
  "opcua-secure": "OPC UA (Basic256Sha256, SignAndEncrypt)",
};
// Fixed colours, so that a protocol looks the same in every plot.
const PROTOCOL_COLOUR = {
  modbus: "#7f7f7f",
  srmcp: "#1f77b4",
  "srmcp-json": "#17becf",
  "srmcp-3links": "#6baed6",
  "srmcp-xwing": "#9467bd",
  "opcua-none": "#ff7f0e",
  "opcua-secure": "#d62728",
};

// ---- formatting ---------------------------------------------------------------------------------

/** A duration given in µs, with a unit that keeps 3 significant digits readable. */

function fmtNum(x, digits = 1) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

function fmtRatio(x) {
  if (x === null || x === undefined) return "–";
  return x >= 100 ? `${x.toFixed(0)}×` : x >= 10 ? `${x.toFixed(1)}×` : `${x.toFixed(2)}×`;
}

const label = (p) => PROTOCOL_LABEL[p] ?? p;

// ---- the markdown -------------------------------------------------------------------------------

function runSection(r, resultsName) {
  const m = r.machine ?? {};
  const v = r.versions ?? {};
  const c = r.config ?? {};
  const lines = [];
  lines.push(`Results of \`${resultsName}\`, run ${r.started} – ${r.finished}.`);
  lines.push("");
  lines.push(
    `**Machine:** ${m.cpu_model ?? "?"}, ${m.nproc ?? "?"} cores, ${m.mem_gib ?? "?"} GiB, ${m.kernel ?? "?"}` +
      `${m.os ? `, ${m.os}` : ""} (host \`${m.hostname ?? "?"}\`).`,
  );
  lines.push("");
  const versions = Object.entries(v)
    .filter(([, x]) => x)
    .map(([k, x]) => `${k} \`${k === "git_commit" ? x.slice(0, 12) : x}\``);
  lines.push(`**Versions:** ${versions.join(", ")}.`);
  lines.push("");
  lines.push(
    `**Configuration:** ${c.rounds} interleaved round(s); per client run ${c.n} reads and ${c.n} writes, ` +
      `${c.connects} connects, ${c.warmup} warm-up cycles; protocols ${(c.protocols ?? []).join(", ")}; ` +
      `throughput ${c.throughput_seconds} s with ${(c.throughput_clients ?? []).join("/")} clients (pipeline ${c.pipeline}); ` +
      `${c.sessions} sessions held. Percentiles: ${c.percentiles}.`,
  );
  if (r.error) lines.push("", `**The run stopped early:** ${r.error.split("\n")[0]}`);
  return lines.join("\n");
}

function targetsSection(r) {
  const rows = (r.targets ?? []).map((t) => [
    t.name,
    t.target,
    t.measured === null || t.measured === undefined ? "not measured" : fmtNum(t.measured, 3),
    t.met === null ? "–" : t.met ? "**met**" : "**not met**",
    t.note ?? "",
  ]);
  return ["### Targets", "", table(["target", "goal", "measured", "", "note"], rows, [null, null, "r"])].join("\n");
}

function networkLine(net) {
  if (!net) return "";
  const parts = [];
  if (net.description) parts.push(net.description);
  if (net.link) parts.push(`linkem ${Object.entries(net.link).map(([k, x]) => `${k}=${x}`).join(", ")}`);
  for (const dir of ["a2b", "b2a"]) {
    if (net[dir]) parts.push(`${dir}: ${Object.entries(net[dir]).map(([k, x]) => `${k}=${x}`).join(", ")}`);
  }
  if (net.rtt_probe_us) {
    // The method starts with the probe's name: "linkem-probe udp: ..." or "rtt-probe.mjs: ...".
    const probe = (net.rtt_probe_method ?? "probe").split(":")[0];
    parts.push(`measured RTT ${fmtUs(net.rtt_probe_us)} (median, ${probe})`);
  }
  const st = net.linkem_stats;
  if (st) {
    const lost = (st.a2b?.dropped_loss ?? 0) + (st.b2a?.dropped_loss ?? 0);
    const pkts = (st.a2b?.packets ?? 0) + (st.b2a?.packets ?? 0);
    parts.push(`linkem forwarded ${fmtNum(pkts, 0)} packets, dropped ${fmtNum(lost, 0)} (loss)`);
  }
  return parts.join("; ") + ".";
}

function scenarioSection(r, scenario, imgRel) {
  const stats = r.scenarios[scenario] ?? {};
  const lines = [`### Scenario \`${scenario}\``, "", networkLine(r.network?.[scenario]), ""];
  const protocols = Object.keys(stats);
  if (protocols.length === 0) return [...lines, "No latency figures in this scenario."].join("\n");
  if (imgRel) lines.push(`![${scenario}: p50 and p99 of connect, read and write](${imgRel})`, "");
  const rows = [];
  for (const p of protocols) {
    for (const op of [...OPS, "connect_control"]) {
      const s = stats[p][op];
      if (!s) continue; // connect_control: SRMCP only
      const rounds = s.round_p50_us ?? [];
      const range = rounds.length > 1 ? `${fmtUs(Math.min(...rounds))} – ${fmtUs(Math.max(...rounds))}` : "–";
      rows.push([
        op === "connect" ? label(p) : "",
        op === "connect_control" ? "connect (control channel only)" : op,
        fmtUs(s.p50_us),
        fmtUs(s.p99_us),
        fmtUs(s.mean_us),
        String(s.n),
        fmtRatio(s.ratio_to_modbus_p50),
        fmtNum(s.bytes_per_op, 0),
        fmtNum(s.cpu_client_us_per_op, 1),
        fmtNum(s.cpu_server_us_per_op, 1),
        range,
      ]);
    }
  }
  lines.push(
    table(
      ["protocol", "op", "p50", "p99", "mean", "n", "p50 vs Modbus", "bytes/op", "CPU client µs/op",
        "CPU server µs/op", "round p50 range"],
      rows,
      [null, null, "r", "r", "r", "r", "r", "r", "r", "r", "r"],
    ),
  );
  return lines.join("\n");
}

function throughputSection(r, imgs) {
  const scenarios = Object.keys(r.throughput ?? {});
  if (scenarios.length === 0) return "";
  const lines = [
    "### Throughput",
    "",
    "Reads of all ten points, as fast as K concurrent clients can go, each keeping up to D requests outstanding.",
  ];
  for (const scenario of scenarios) {
    const rows = [];
    for (const [p, entries] of Object.entries(r.throughput[scenario])) {
      for (const e of entries) {
        rows.push([
          label(p),
          String(e.clients),
          String(e.pipeline),
          fmtNum(e.ops_per_s, 0),
          fmtNum(e.server_cpu_cores, 2),
          fmtNum(e.cpu_server_us_per_op, 2),
          fmtNum(e.cpu_client_us_per_op, 2),
        ]);
      }
    }
    lines.push("", `Scenario \`${scenario}\`:`, "");
    if (imgs[scenario]) lines.push(`![${scenario}: reads per second](${imgs[scenario]})`, "");
    lines.push(
      table(
        ["protocol", "clients K", "pipeline D", "reads/s", "server CPU (cores)", "server CPU µs/read",
          "client CPU µs/read"],
        rows,
        [null, "r", "r", "r", "r", "r", "r"],
      ),
    );
  }
  return lines.join("\n");
}

function scaleSection(r) {
  const rows = [];
  for (const [scenario, entry] of Object.entries(r.scale ?? {})) {
    for (const [p, s] of Object.entries(entry)) {
      rows.push([
        scenario,
        label(p),
        `${s.opened} / ${s.sessions}`,
        fmtNum(s.rss_before_kib, 0),
        fmtNum(s.rss_after_kib, 0),
        fmtNum(s.rss_per_session_kib, 1),
        s.connect_seconds !== undefined ? fmtNum(s.connect_seconds, 2) : "–",
      ]);
    }
  }
  if (rows.length === 0) return "";
  return [
    "### Sessions held open",
    "",
    table(
      ["scenario", "protocol", "opened", "server RSS before (KiB)", "after (KiB)", "per session (KiB)",
        "time to open all (s)"],
      rows,
      [null, null, "r", "r", "r", "r", "r"],
    ),
  ].join("\n");
}

function failuresSection(r) {
  if (!r.failures?.length) return "";
  const rows = r.failures.map((f) => {
    const where = Object.entries(f)
      .filter(([k]) => k !== "error")
      .map(([k, x]) => `${k} ${x}`)
      .join(", ");
    // The error and the first lines of what the program said, on one table line.
    const text = f.error.split("\n").filter(Boolean).slice(0, 3).join(" / ");
    return [where, text.replaceAll("|", "\\|").replaceAll("<", "&lt;")];
  });
  return ["### Failures", "", table(["where", "error"], rows)].join("\n");
}

// ---- plots --------------------------------------------------------------------------------------

const q = gnuplotQuote;

/** Tick labels at each decade, as durations (the values are µs). */
function durationTics(ymin, ymax) {
  const tics = [];
  for (let v = ymin; v <= ymax * 1.001; v *= 10) tics.push(`${q(fmtDecade(v))} ${v}`);
  return `set ytics (${tics.join(", ")})`;
}

function fmtDecade(us) {
  if (us >= 1e6) return `${us / 1e6} s`;
  if (us >= 1000) return `${us / 1000} ms`;
  return `${us} µs`;
}

/** Tick labels at each decade with SI prefixes: 100, 1k, 10k, ... */
function countTics() {
  return 'set format y "%.0s%c"';
}

/** A power of 10 at or below x, and at or above it: a log axis with round ends. */
function decadeRange(lo, hi) {
  return [10 ** Math.floor(Math.log10(lo)), 10 ** Math.ceil(Math.log10(hi))];
}

/**
 * Grouped bars on a log axis: groups along x, one bar per series in each group, bars from the axis
 * up to `value`, with a line from `value` up to `high` where given. data[series][group] =
 * {value, high} or undefined.
 */
function groupedBarsScript({ terminal, out, title, ylabel, xlabel, yticsFor, groups, series, data, colours, highTitle }) {
  const width = series.length + 1; // one empty slot between groups
  const blocks = [];
  let lo = Infinity;
  let hi = 0;
  for (const s of series) {
    const rows = [];
    groups.forEach((g, gi) => {
      const d = data[s][g];
      if (!d || !(d.value > 0)) return;
      const x = gi * width + series.indexOf(s) + 1;
      const high = d.high > 0 ? d.high : d.value;
      rows.push(`${x} ${d.value} ${high}`);
      lo = Math.min(lo, d.value);
      hi = Math.max(hi, high);
    });
    blocks.push(rows);
  }
  if (hi === 0) return null;
  const [ymin, ymax] = decadeRange(lo / 1.5, hi * 1.5);
  const xtics = groups.map((g, gi) => `${q(g)} ${gi * width + (series.length + 1) / 2}`).join(", ");
  const lines = [
    `set terminal ${terminal}`,
    `set output ${q(out)}`,
    `set title ${q(title)}`,
    `set ylabel ${q(ylabel)}`,
    "set logscale y",
    // A hair beyond the decades: gnuplot may drop a tic that sits exactly on the range end.
    `set yrange [${ymin * 0.999}:${ymax * 1.001}]`,
    yticsFor(ymin, ymax),
    xlabel ? `set xlabel ${q(xlabel)}` : "unset xlabel",
    `set xrange [0:${groups.length * width}]`,
    `set xtics (${xtics}) scale 0`,
    "set grid ytics mytics",
    "set boxwidth 0.9",
    "set style fill solid 0.85 border -1",
    "set key below horizontal",
  ];
  const plots = [];
  blocks.forEach((rows, i) => {
    if (rows.length === 0) return;
    lines.push(`$s${i} << EOD`, ...rows, "EOD");
    plots.push(`$s${i} using 1:2 with boxes lc rgb ${q(colours[series[i]] ?? "#333333")} title ${q(label(series[i]))}`);
  });
  if (highTitle) {
    let titled = false; // one legend entry for all the p99 lines
    blocks.forEach((rows, i) => {
      if (rows.length === 0) return;
      // A line from p50 up to p99 and a short cap at p99 (vectors: error bars draw a mark at p50).
      const title = titled ? '""' : q(highTitle);
      plots.push(`$s${i} using 1:2:(0):($3-$2) with vectors nohead lc rgb "black" lw 1.5 title ${title}`);
      plots.push(`$s${i} using ($1-0.2):3:(0.4):(0) with vectors nohead lc rgb "black" lw 1.5 notitle`);
      titled = true;
    });
  }
  lines.push(`plot ${plots.join(", \\\n     ")}`);
  return lines.join("\n") + "\n";
}

function latencyPlot(r, scenario, terminal, imgDir, tmp) {
  const stats = r.scenarios[scenario] ?? {};
  const series = Object.keys(stats);
  if (series.length === 0) return null;
  const data = {};
  for (const p of series) {
    data[p] = {};
    for (const op of OPS) data[p][op] = { value: stats[p][op]?.p50_us, high: stats[p][op]?.p99_us };
  }
  const out = path.join(imgDir, `bench-${scenario}.png`);
  const script = groupedBarsScript({
    terminal,
    out,
    title: `${scenario}: latency per operation (bars p50, lines up to p99)`,
    ylabel: "latency (log scale)",
    yticsFor: durationTics,
    groups: OPS,
    series,
    data,
    colours: PROTOCOL_COLOUR,
    highTitle: "p50 → p99",
  });
  if (!script) return null;
  runGnuplot(script, tmp, `bench-${scenario}`);
  return out;
}

function throughputPlot(r, scenario, terminal, imgDir, tmp) {
  const table = r.throughput[scenario] ?? {};
  const series = Object.keys(table);
  const groups = [...new Set(series.flatMap((p) => table[p].map((e) => e.clients)))].sort((a, b) => a - b);
  // data[protocol][clients as text] = {value}
  const data = {};
  for (const p of series) {
    data[p] = {};
    for (const e of table[p]) data[p][String(e.clients)] = { value: e.ops_per_s };
  }
  const out = path.join(imgDir, `bench-throughput-${scenario}.png`);
  const script = groupedBarsScript({
    terminal,
    out,
    title: `${scenario}: reads per second by concurrent clients`,
    ylabel: "reads/s (log scale)",
    xlabel: "concurrent clients K",
    yticsFor: countTics,
    groups: groups.map(String),
    series,
    data,
    colours: PROTOCOL_COLOUR,
  });
  if (!script) return null;
  runGnuplot(script, tmp, `bench-throughput-${scenario}`);
  return out;
}

// ---- the document -------------------------------------------------------------------------------

const DEFAULT_DOC = `# Benchmarks

${BEGIN}
${END}
`;

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
    process.stdout.write("usage: node bench/report.mjs [results.json] [--doc docs/benchmarks.md] [--img docs/img]\n");
    return 0;
  }
  const resultsFile = path.resolve(positionals[0] ?? path.join(HERE, "results", "latest.json"));
  const r = JSON.parse(fs.readFileSync(resultsFile, "utf8"));
  if (r.schema !== 1) throw new Error(`${resultsFile}: unknown schema ${r.schema}`);
  const docFile = path.resolve(values.doc);
  const imgDir = path.resolve(values.img);
  fs.mkdirSync(imgDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pqb-report-"));
  const rel = (file) => path.relative(path.dirname(docFile), file).split(path.sep).join("/");

  try {
    const terminal = pngTerminal();
    const shown = path.relative(REPO, resultsFile);
    const sections = [runSection(r, shown.startsWith("..") ? resultsFile : shown), targetsSection(r)];
    for (const scenario of Object.keys(r.scenarios ?? {})) {
      const png = latencyPlot(r, scenario, terminal, imgDir, tmp);
      sections.push(scenarioSection(r, scenario, png ? rel(png) : null));
    }
    const tputImgs = {};
    for (const scenario of Object.keys(r.throughput ?? {})) {
      const png = throughputPlot(r, scenario, terminal, imgDir, tmp);
      if (png) tputImgs[scenario] = rel(png);
    }
    sections.push(throughputSection(r, tputImgs), scaleSection(r), failuresSection(r));
    const generated = sections.filter(Boolean).join("\n\n");
    const doc = fs.existsSync(docFile) ? fs.readFileSync(docFile, "utf8") : DEFAULT_DOC;
    fs.writeFileSync(docFile, spliceBetween(doc, generated, BEGIN, END));
    process.stderr.write(`report: ${docFile} and plots in ${imgDir}\n`);
  } finally {
    if (!process.env.PQB_REPORT_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  }
  return 0;
}

try {
  process.exitCode = main();
} catch (e) {
  process.stderr.write(`report: ${e.message}\n`);
  process.exitCode = 1;
}

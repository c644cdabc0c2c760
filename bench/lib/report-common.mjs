// What the benchmark reports share (bench/report.mjs, bench/trip-report.mjs): number formats, a
// Markdown table, gnuplot's PNG terminal and runner, and replacing a document's text between two
// markers.

import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** Microseconds as µs, ms or s with three significant digits or so; "–" for none. */
export function fmtUs(us) {
  if (us === null || us === undefined || !Number.isFinite(us)) return "–";
  if (us >= 1_000_000) return `${(us / 1e6).toFixed(2)} s`;
  if (us >= 10_000) return `${(us / 1000).toFixed(1)} ms`;
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`;
  if (us >= 100) return `${us.toFixed(0)} µs`;
  return `${us.toFixed(1)} µs`;
}

/** A Markdown table; `align[i]` "r" right-aligns column i. */
export function table(header, rows, align) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  const sep = header.map((_, i) => (align?.[i] === "r" ? "---:" : "---"));
  return [line(header), line(sep), ...rows.map(line)].join("\n");
}

/** gnuplot's PNG terminal line (pngcairo if it has it); throws if gnuplot or PNG is missing. */
export function pngTerminal() {
  const res = spawnSync("gnuplot", ["-e", "set terminal"], { encoding: "utf8" });
  if (res.error) throw new Error("gnuplot not found (apt-get install gnuplot-nox)");
  const text = `${res.stdout}${res.stderr}`;
  if (/\bpngcairo\b/.test(text)) return 'pngcairo size 960,540 font "sans,10"';
  if (/\bpng\b/.test(text)) return "png size 960,540";
  throw new Error("gnuplot has no png terminal");
}

/** A gnuplot string literal. */
export const gnuplotQuote = (s) => `"${String(s).replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

/** Runs a gnuplot script (kept as tmp/NAME.gp for inspection). */
export function runGnuplot(script, tmp, name) {
  const file = path.join(tmp, `${name}.gp`);
  fs.writeFileSync(file, script);
  execFileSync("gnuplot", [file], { stdio: ["ignore", "inherit", "inherit"] });
}

/**
 * `doc` with the text between the markers `begin` and `end` replaced by `generated`; if it has no
 * such markers, they are appended (after `heading`, when given) with `generated` between them.
 */
export function spliceBetween(doc, generated, begin, end, heading = "") {
  const at = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (at === -1 || to === -1 || to < at) return `${doc.trimEnd()}\n\n${heading}${begin}\n${generated}\n${end}\n`;
  return `${doc.slice(0, at + begin.length)}\n${generated}\n${doc.slice(to)}`;
}

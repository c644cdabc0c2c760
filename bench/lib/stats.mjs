// Statistics over latency samples, and the checks that a bench client's output is usable
// (bench/README.md, "The bench-client contract").
//
// Percentiles use the nearest-rank method: the p-th percentile of n sorted samples is the sample at
// rank ceil(p/100 * n) (1-based). It always returns a measured value, never an interpolated one; for
// an even n the median is the lower of the two middle samples.

/** The p-th percentile (0 < p <= 100) of `sorted` (ascending), nearest rank; null if empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export function mean(values) {
  if (values.length === 0) return null;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

export function sortedCopy(values) {
  return [...values].sort((a, b) => a - b);
}

/** Rounds to `digits` decimals (for the JSON: microsecond figures do not need 15 digits). */
export function round(x, digits = 2) {
  if (x === null || x === undefined || !Number.isFinite(x)) return x ?? null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * Summary of one operation (connect, read or write) of one protocol over all rounds.
 * `phases` is the list of the client outputs' phase objects, one per round:
 * {samples_us, bytes, cpu_client_us, cpu_server_us}.
 */
export function summarizePhases(phases) {
  const all = phases.flatMap((ph) => ph.samples_us);
  const sorted = sortedCopy(all);
  const n = sorted.length;
  const sum = (key) => phases.reduce((acc, ph) => acc + ph[key], 0);
  // Server CPU is null when the client could not read it; then no per-op figure is given.
  const serverKnown = phases.every((ph) => typeof ph.cpu_server_us === "number");
  return {
    mean_us: round(mean(all)),
    p50_us: round(percentile(sorted, 50)),
    p99_us: round(percentile(sorted, 99)),
    min_us: round(sorted[0] ?? null),
    max_us: round(sorted[n - 1] ?? null),
    n,
    round_p50_us: phases.map((ph) => round(percentile(sortedCopy(ph.samples_us), 50))),
    bytes_per_op: n ? round(sum("bytes") / n, 1) : null,
    cpu_client_us_per_op: n ? round(sum("cpu_client_us") / n) : null,
    cpu_server_us_per_op: n && serverKnown ? round(sum("cpu_server_us") / n) : null,
  };
}

// ---- validation of client outputs ---------------------------------------------------------------

const isNum = (x) => typeof x === "number" && Number.isFinite(x);

function checkPhase(problems, name, phase, expectedCount) {
  if (!phase || typeof phase !== "object") {
    problems.push(`${name}: missing`);
    return;
  }
  const s = phase.samples_us;
  if (!Array.isArray(s)) {
    problems.push(`${name}.samples_us: not a list`);
  } else {
    if (s.length !== expectedCount) problems.push(`${name}: ${s.length} samples, expected ${expectedCount}`);
    const bad = s.filter((x) => !isNum(x) || x <= 0).length;
    if (bad) problems.push(`${name}: ${bad} samples not finite positive numbers`);
  }
  if (!isNum(phase.bytes) || phase.bytes <= 0) problems.push(`${name}.bytes: ${phase.bytes} (expected > 0)`);
  if (!isNum(phase.cpu_client_us) || phase.cpu_client_us < 0) {
    problems.push(`${name}.cpu_client_us: ${phase.cpu_client_us}`);
  }
  // The harness always passes --server-pid, so the server CPU must be known.
  if (!isNum(phase.cpu_server_us) || phase.cpu_server_us < 0) {
    problems.push(`${name}.cpu_server_us: ${phase.cpu_server_us}`);
  }
}

/** Problems with a latency-mode output (empty list = valid). */
export function validateLatency(out, { n, connects }) {
  const problems = [];
  if (!out || typeof out !== "object") return ["output is not a JSON object"];
  checkPhase(problems, "connect", out.connect, connects);
  if (out.connect_control !== undefined) checkPhase(problems, "connect_control", out.connect_control, connects);
  checkPhase(problems, "read", out.read, n);
  checkPhase(problems, "write", out.write, n);
  if (out.readback_ok !== true) problems.push(`readback_ok: ${out.readback_ok}`);
  if (out.errors !== 0) problems.push(`errors: ${out.errors}`);
  return problems;
}

/** Problems with a throughput-mode output. */
export function validateThroughput(out, { clients }) {
  const problems = [];
  if (!out || typeof out !== "object") return ["output is not a JSON object"];
  if (out.clients !== clients) problems.push(`clients: ${out.clients}, expected ${clients}`);
  if (!isNum(out.ops) || out.ops <= 0) problems.push(`ops: ${out.ops}`);
  if (!isNum(out.seconds) || out.seconds <= 0) problems.push(`seconds: ${out.seconds}`);
  if (!isNum(out.ops_per_s) || out.ops_per_s <= 0) problems.push(`ops_per_s: ${out.ops_per_s}`);
  if (!isNum(out.cpu_server_us) || out.cpu_server_us < 0) problems.push(`cpu_server_us: ${out.cpu_server_us}`);
  if (out.errors !== 0) problems.push(`errors: ${out.errors}`);
  return problems;
}

/** Problems with a hold-mode (scale) output. */
export function validateHold(out, { sessions }) {
  const problems = [];
  if (!out || typeof out !== "object") return ["output is not a JSON object"];
  if (out.opened !== sessions) problems.push(`opened: ${out.opened}, expected ${sessions}`);
  for (const key of ["rss_before_kib", "rss_after_kib", "rss_per_session_kib"]) {
    if (!isNum(out[key])) problems.push(`${key}: ${out[key]}`);
  }
  if (out.errors !== 0) problems.push(`errors: ${out.errors}`);
  return problems;
}

#!/usr/bin/env node
// OPC UA bench client on node-opcua: the bench-client contract of bench/README.md.
//
// Latency mode:
//   node bench/opcua/client.mjs --host H --port P [--n N] [--connects C] [--warmup W]
//        [--server-pid PID] [--security none|secure] [--pki-dir DIR] [--verbose]
// Throughput mode:
//   node bench/opcua/client.mjs throughput --host H --port P --clients K --seconds S
//        [--pipeline D] [--server-pid PID] [--security none|secure] [--pki-dir DIR] [--verbose]
//
// --security none   = SecurityPolicy None, MessageSecurityMode None (protocol "opcua-none");
// --security secure = Basic256Sha256, SignAndEncrypt (protocol "opcua-secure").
// --pki-dir is the client's certificate store (own certificate and key generated on first use;
// server certificates are trusted automatically).
//
// One JSON object on stdout; everything else on stderr. Exit 0 on success; 1 with one line on
// stderr when the run cannot be done (bad arguments, server unreachable, warm-up failure); 2 when
// it was done but some reads or writes failed (the JSON is printed, "errors" counts them).

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import process from "node:process";

// node-opcua prints its warnings with console.log, some at import time: stdout is for the JSON
// object alone, so console output goes to stderr, and node-opcua is kept below warning level
// unless --verbose (the level is read from the environment when node-opcua is loaded).
const writeErr = (...a) => process.stderr.write(`${a.map(String).join(" ")}\n`);
console.log = writeErr;
console.info = writeErr;
console.warn = writeErr;
console.debug = writeErr;

const USAGE =
  "usage: node bench/opcua/client.mjs [latency] --host H --port P [--n N] [--connects C] [--warmup W]\n" +
  "         [--server-pid PID] [--security none|secure] [--pki-dir DIR] [--verbose]\n" +
  "       node bench/opcua/client.mjs throughput --host H --port P [--clients K] [--seconds S] [--pipeline D]\n" +
  "         [--server-pid PID] [--security none|secure] [--pki-dir DIR] [--verbose]\n";

function usage(msg) {
  if (!msg) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  process.stderr.write(`client.mjs: error: ${msg} (see --help)\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const o = {
    mode: "latency",
    host: "127.0.0.1",
    port: 4840,
    n: 1000,
    connects: 20,
    warmup: 20,
    clients: 1,
    seconds: 5,
    pipeline: 1,
    serverPid: null,
    security: "none",
    pkiDir: path.join(os.tmpdir(), "pqot-opcua-client-pki"),
    verbose: false,
  };
  let i = 0;
  if (argv[0] === "throughput" || argv[0] === "latency") o.mode = argv[i++];
  const int = (a, v, min) => {
    const x = Number(v);
    if (!Number.isInteger(x) || x < min) usage(`bad value for ${a}: ${v}`);
    return x;
  };
  for (; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case "--host": o.host = val(); break;
      case "--port": o.port = int(a, val(), 1); break;
      case "--n": o.n = int(a, val(), 1); break;
      case "--connects": o.connects = int(a, val(), 0); break;
      case "--warmup": o.warmup = int(a, val(), 0); break;
      case "--clients": o.clients = int(a, val(), 1); break;
      case "--seconds": {
        o.seconds = Number(val());
        if (!(o.seconds > 0)) usage("bad value for --seconds");
        break;
      }
      case "--pipeline": o.pipeline = int(a, val(), 1); break;
      case "--server-pid": o.serverPid = int(a, val(), 1); break;
      case "--security": {
        o.security = val();
        if (o.security !== "none" && o.security !== "secure") usage("--security is none or secure");
        break;
      }
      case "--pki-dir": o.pkiDir = path.resolve(val()); break;
      case "--verbose": o.verbose = true; break;
      case "--help": case "-h": usage(); break;
      default: usage(`unknown argument ${a}`);
    }
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
if (!opts.verbose && process.env.NODEOPCUA_LOG_LEVEL === undefined) process.env.NODEOPCUA_LOG_LEVEL = "3"; // Error

const require = createRequire(import.meta.url);
const opcuaVersion = require("node-opcua/package.json").version;

// ---------------------------------------------------------------- measurements (bench contract)

const nowNs = () => process.hrtime.bigint();
const usSince = (t0) => Number(nowNs() - t0) / 1000;

function selfCpuUs() {
  const u = process.cpuUsage();
  return u.user + u.system;
}

let clkTck = null;
function clockTicksPerSecond() {
  if (clkTck === null) {
    try {
      clkTck = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    } catch {
      clkTck = NaN;
    }
    if (!(clkTck > 0)) clkTck = 100;
  }
  return clkTck;
}

/** utime+stime of process `pid` from /proc/PID/stat (fields 14 and 15), in µs; null if unreadable. */
function processCpuUs(pid) {
  if (pid === null) return null;
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const close = stat.lastIndexOf(")");
  if (close < 0) return null;
  const f = stat.slice(close + 2).trim().split(/\s+/); // f[0] is field 3
  const utime = Number(f[14 - 3]);
  const stime = Number(f[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return ((utime + stime) * 1e6) / clockTicksPerSecond();
}

/** /proc/net/dev: tx bytes of lo plus rx+tx bytes of every other interface. */
function wireBytes() {
  const text = fs.readFileSync("/proc/net/dev", "utf8");
  let total = 0;
  for (const line of text.split("\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const v = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    const rx = v[0] || 0;
    const tx = v[8] || 0;
    total += name === "lo" ? tx : rx + tx;
  }
  return total;
}

class Phase {
  constructor(serverPid) {
    this.serverPid = serverPid;
    this.samples = [];
    this.bytes0 = wireBytes();
    this.cpu0 = selfCpuUs();
    this.serverCpu0 = processCpuUs(serverPid);
  }
  add(us) {
    this.samples.push(us);
  }
  finish() {
    const bytes1 = wireBytes();
    const cpu1 = selfCpuUs();
    const serverCpu1 = processCpuUs(this.serverPid);
    return {
      samples_us: this.samples,
      bytes: bytes1 - this.bytes0,
      cpu_client_us: cpu1 - this.cpu0,
      cpu_server_us: this.serverCpu0 !== null && serverCpu1 !== null ? serverCpu1 - this.serverCpu0 : null,
    };
  }
}

const writeValue = (i) => (i * 7 + 1) % 30000;

// ---------------------------------------------------------------- OPC UA

function fail(err) {
  const msg = err instanceof Error ? err.message : String(err);
  process.stderr.write(`client.mjs: ${msg}`.replace(/\s*\n\s*/g, " ") + "\n");
  process.exit(1);
}

async function main() {
  const opcua = await import("node-opcua");
  const { OPCUAClient, OPCUACertificateManager, SecurityPolicy, MessageSecurityMode, AttributeIds, DataType, StatusCodes } =
    opcua;
  opcua.setErrorLogger((_ctx, ...args) => writeErr("[node-opcua E]", ...args));
  opcua.setWarningLogger(opts.verbose ? (_ctx, ...args) => writeErr("[node-opcua W]", ...args) : () => {});

  const secure = opts.security === "secure";
  const protocol = secure ? "opcua-secure" : "opcua-none";
  const hostInUrl = opts.host.includes(":") && !opts.host.startsWith("[") ? `[${opts.host}]` : opts.host;
  const endpointUrl = `opc.tcp://${hostInUrl}:${opts.port}`;

  // One certificate store for every client of this process, as an application would have. Each
  // OPCUAClient disposes its manager on disconnect unless it is shared (referenceCounter > 0).
  const certificateManager = new OPCUACertificateManager({
    rootFolder: opts.pkiDir,
    automaticallyAcceptUnknownCertificate: true,
    disableFileWatchers: true,
  });
  await certificateManager.initialize();
  certificateManager.referenceCounter = 1e9;

  const clientOptions = {
    applicationName: "pqot-opcua-bench-client",
    clientCertificateManager: certificateManager,
    securityMode: secure ? MessageSecurityMode.SignAndEncrypt : MessageSecurityMode.None,
    securityPolicy: secure ? SecurityPolicy.Basic256Sha256 : SecurityPolicy.None,
    endpointMustExist: false,
    keepSessionAlive: false,
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    requestedSessionTimeout: 120000,
  };

  /** From nothing to a usable session: new client, connect (secure channel), create+activate session. */
  async function openSession() {
    const client = OPCUAClient.create(clientOptions);
    try {
      await client.connect(endpointUrl);
      const session = await client.createSession();
      return { client, session };
    } catch (err) {
      await client.disconnect().catch(() => {});
      throw err;
    }
  }
  async function closeSession(s) {
    try {
      await s.session.close();
    } finally {
      await s.client.disconnect();
    }
  }

  const readRequest = Array.from({ length: 10 }, (_, i) => ({
    nodeId: `ns=1;s=r${i}`,
    attributeId: AttributeIds.Value,
  }));
  const isGood = (sc) => sc === StatusCodes.Good || sc?.value === 0;
  const isGoodInt = (dv) =>
    dv && isGood(dv.statusCode) && dv.value?.dataType === DataType.Int32 && Number.isInteger(dv.value.value);
  async function readAll(session) {
    const dvs = await session.read(readRequest, 0);
    return Array.isArray(dvs) && dvs.length === 10 && dvs.every(isGoodInt) ? dvs : null;
  }
  async function writeR0(session, value) {
    const sc = await session.write({
      nodeId: "ns=1;s=r0",
      attributeId: AttributeIds.Value,
      value: { value: { dataType: DataType.Int32, value } },
    });
    return isGood(sc);
  }

  let failed = 0;
  if (opts.mode === "latency") {
    let errors = 0;
    // 1. warm-up: connect + read + write cycles, not recorded (the first one generates or loads
    //    the client certificate, compiles the code paths, resolves the host name...).
    for (let w = 0; w < opts.warmup; w++) {
      const s = await openSession();
      if (!(await readAll(s.session))) throw new Error("warm-up read failed");
      if (!(await writeR0(s.session, 100))) throw new Error("warm-up write failed");
      await closeSession(s);
    }

    // 2. connect phase.
    const connect = new Phase(opts.serverPid);
    for (let c = 0; c < opts.connects; c++) {
      const t0 = nowNs();
      const s = await openSession();
      connect.add(usSince(t0));
      await closeSession(s);
    }
    const connectResult = connect.finish();

    // 3. one kept session.
    const s = await openSession();

    // 4. read phase.
    let readsOk = true;
    const read = new Phase(opts.serverPid);
    for (let i = 0; i < opts.n; i++) {
      const t0 = nowNs();
      let ok = false;
      try {
        ok = (await readAll(s.session)) !== null;
      } catch (err) {
        if (opts.verbose) writeErr(`read ${i}: ${err.message}`);
      }
      read.add(usSince(t0));
      if (!ok) {
        errors++;
        readsOk = false;
      }
    }
    const readResult = read.finish();

    // 5. write phase.
    let writesOk = true;
    const write = new Phase(opts.serverPid);
    for (let i = 0; i < opts.n; i++) {
      const t0 = nowNs();
      let ok = false;
      try {
        ok = await writeR0(s.session, writeValue(i));
      } catch (err) {
        if (opts.verbose) writeErr(`write ${i}: ${err.message}`);
      }
      write.add(usSince(t0));
      if (!ok) {
        errors++;
        writesOk = false;
      }
    }
    const writeResult = write.finish();

    // 6. read-back: one read of r0.
    let readbackOk = false;
    try {
      const dv = await s.session.read({ nodeId: "ns=1;s=r0", attributeId: AttributeIds.Value }, 0);
      readbackOk = isGoodInt(dv) && dv.value.value === writeValue(opts.n - 1);
      if (!readbackOk) writeErr(`client.mjs: read-back: r0 is ${dv?.value?.value} (${dv?.statusCode?.name}), expected ${writeValue(opts.n - 1)}`);
    } catch (err) {
      writeErr(`client.mjs: read-back: ${err.message}`.replace(/\s*\n\s*/g, " "));
    }
    if (!readbackOk) errors++;
    await closeSession(s).catch(() => {});

    process.stdout.write(
      JSON.stringify({
        protocol,
        connect: connectResult,
        read: readResult,
        write: writeResult,
        readback_ok: readbackOk && readsOk && writesOk && errors === 0,
        errors,
        version: `node-opcua ${opcuaVersion}`,
      }) + "\n",
    );
    failed = errors;
  } else {
    // Throughput: K sessions (one connection each) in this process; each keeps D reads of the ten
    // variables outstanding for S seconds.
    const sessions = [];
    for (let k = 0; k < opts.clients; k++) sessions.push(await openSession());
    for (const s of sessions) if (!(await readAll(s.session))) throw new Error("first read failed");

    let ops = 0;
    let errors = 0;
    let first = null; // start of the first read
    let last = null; // end of the last read
    const bytes0 = wireBytes();
    const cpu0 = selfCpuUs();
    const serverCpu0 = processCpuUs(opts.serverPid);
    const deadline = nowNs() + BigInt(Math.round(opts.seconds * 1e9));
    async function worker(s) {
      let failedInARow = 0;
      for (let now = nowNs(); now < deadline; now = last = nowNs()) {
        if (first === null) first = now;
        try {
          if (await readAll(s.session)) {
            ops++;
            failedInARow = 0;
            continue;
          }
          errors++;
        } catch (err) {
          errors++;
          if (opts.verbose) writeErr(`read: ${err.message}`);
        }
        // A session that only fails (connection lost) stops here instead of spinning till the end.
        if (++failedInARow >= 100) return;
      }
    }
    const workers = [];
    for (const s of sessions) for (let d = 0; d < opts.pipeline; d++) workers.push(worker(s));
    await Promise.all(workers);
    const cpu1 = selfCpuUs();
    const serverCpu1 = processCpuUs(opts.serverPid);
    const bytes1 = wireBytes();
    const seconds = first !== null && last !== null ? Number(last - first) / 1e9 : 0;
    await Promise.all(sessions.map((s) => closeSession(s).catch(() => {})));

    process.stdout.write(
      JSON.stringify({
        protocol,
        clients: opts.clients,
        pipeline: opts.pipeline,
        ops,
        seconds,
        ops_per_s: seconds > 0 ? ops / seconds : 0,
        cpu_client_us: cpu1 - cpu0,
        cpu_server_us: serverCpu0 !== null && serverCpu1 !== null ? serverCpu1 - serverCpu0 : null,
        bytes: bytes1 - bytes0,
        errors,
        version: `node-opcua ${opcuaVersion}`,
      }) + "\n",
    );
    failed = errors;
  }

  certificateManager.referenceCounter = 0;
  await certificateManager.dispose().catch(() => {});
  return failed;
}

main().then(
  (failed) => {
    if (failed > 0) process.stderr.write(`client.mjs: ${failed} operation(s) failed\n`);
    process.exit(failed > 0 ? 2 : 0);
  },
  (err) => fail(err),
);

#!/usr/bin/env node
// OPC UA benchmark peer (bench/README.md, "The data every peer serves"), on node-opcua.
//
//   node bench/opcua/server.mjs --host H --port P --pki-dir DIR [--verbose]
//
// Serves folder Bench under Objects with variables ns=1;s=r0 .. ns=1;s=r9 (Int32, initial value
// 100+i, CurrentRead|CurrentWrite, kept in memory), on two endpoints: SecurityPolicy None /
// MessageSecurityMode None, and Basic256Sha256 / SignAndEncrypt; anonymous users allowed. The
// application certificate and the PKI live in DIR (generated on first start); every client
// certificate is trusted automatically. Prints exactly one line "opcua server ready" on stdout once
// it listens; everything else (node-opcua's own messages included) goes to stderr. Exits 0 on
// SIGTERM/SIGINT.

import os from "node:os";
import path from "node:path";
import process from "node:process";

// node-opcua prints its warnings with console.log, some at import time: keep stdout for the one
// ready line, and keep node-opcua below warning level unless asked (before it is loaded).
const writeErr = (...a) => process.stderr.write(`${a.map(String).join(" ")}\n`);
console.log = writeErr;
console.info = writeErr;
console.warn = writeErr;
console.debug = writeErr;

function usage(msg) {
  if (!msg) {
    process.stdout.write("usage: node bench/opcua/server.mjs --host H --port P --pki-dir DIR [--verbose]\n");
    process.exit(0);
  }
  process.stderr.write(`server.mjs: error: ${msg} (see --help)\n`);
  process.exit(1);
}

const opts = { host: "127.0.0.1", port: 4840, pkiDir: path.join(os.tmpdir(), "pqot-opcua-server-pki"), verbose: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => {
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    return argv[++i];
  };
  if (a === "--host") opts.host = val();
  else if (a === "--port") opts.port = Number(val());
  else if (a === "--pki-dir") opts.pkiDir = path.resolve(val());
  else if (a === "--verbose") opts.verbose = true;
  else if (a === "--help" || a === "-h") usage();
  else usage(`unknown argument ${a}`);
}
if (!Number.isInteger(opts.port) || opts.port <= 0 || opts.port > 65535) usage("bad --port");

if (!opts.verbose && process.env.NODEOPCUA_LOG_LEVEL === undefined) process.env.NODEOPCUA_LOG_LEVEL = "3"; // Error

function fail(err) {
  process.stderr.write(`server.mjs: ${err?.message ?? err}`.replace(/\s*\n\s*/g, " ") + "\n");
  process.exit(1);
}

async function main() {
  const opcua = await import("node-opcua");
  const { OPCUAServer, OPCUACertificateManager, SecurityPolicy, MessageSecurityMode, DataType, Variant } = opcua;
  // node-opcua's loggers: errors to stderr (warnings too with --verbose), never stdout.
  opcua.setErrorLogger((_ctx, ...args) => writeErr("[node-opcua E]", ...args));
  opcua.setWarningLogger(opts.verbose ? (_ctx, ...args) => writeErr("[node-opcua W]", ...args) : () => {});

  const serverCertificateManager = new OPCUACertificateManager({
    rootFolder: path.join(opts.pkiDir, "server"),
    automaticallyAcceptUnknownCertificate: true,
    disableFileWatchers: true,
  });
  const userCertificateManager = new OPCUACertificateManager({
    rootFolder: path.join(opts.pkiDir, "user"),
    automaticallyAcceptUnknownCertificate: true,
    disableFileWatchers: true,
  });

  const server = new OPCUAServer({
    host: opts.host,
    port: opts.port,
    hostname: opts.host,
    securityPolicies: [SecurityPolicy.None, SecurityPolicy.Basic256Sha256],
    securityModes: [MessageSecurityMode.None, MessageSecurityMode.SignAndEncrypt],
    allowAnonymous: true,
    serverCertificateManager,
    userCertificateManager,
    // The throughput mode opens K sessions at once and the connect phase opens and closes many in
    // a row: lift node-opcua's defaults of 10 sessions / 10 connections per endpoint.
    maxConnectionsPerEndpoint: 1000,
    serverCapabilities: { maxSessions: 1000 },
    isAuditing: false,
    registerServerMethod: 1, // RegisterServerMethod.HIDDEN: no LDS, no mDNS
    buildInfo: { productName: "pqot OPC UA bench server" },
  });

  await server.initialize();

  const addressSpace = server.engine.addressSpace;
  const ns = addressSpace.getOwnNamespace();
  if (ns.index !== 1) throw new Error(`own namespace has index ${ns.index}, expected 1`);
  const folder = ns.addFolder(addressSpace.rootFolder.objects, { browseName: "Bench", nodeId: "s=Bench" });
  for (let i = 0; i < 10; i++) {
    // The value lives in the node itself: a client Write replaces it (Int32 only).
    ns.addVariable({
      organizedBy: folder,
      browseName: `r${i}`,
      nodeId: `s=r${i}`,
      dataType: "Int32",
      accessLevel: "CurrentRead | CurrentWrite",
      userAccessLevel: "CurrentRead | CurrentWrite",
      minimumSamplingInterval: 0,
      value: new Variant({ dataType: DataType.Int32, value: 100 + i }),
    });
  }

  await server.start();
  process.stdout.write("opcua server ready\n");

  let stopping = false;
  const stop = async (sig) => {
    if (stopping) return;
    stopping = true;
    if (opts.verbose) writeErr(`server.mjs: ${sig}, shutting down`);
    const force = setTimeout(() => process.exit(0), 3000);
    force.unref();
    try {
      await server.shutdown(0);
      await serverCertificateManager.dispose().catch(() => {});
      await userCertificateManager.dispose().catch(() => {});
    } catch (err) {
      writeErr(`server.mjs: shutdown: ${err?.message ?? err}`);
    }
    process.exit(0);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch(fail);

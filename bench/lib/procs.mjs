// Child processes of the benchmark: long-running servers (and the link emulator) that announce
// readiness with a line on stdout, and clients that print one JSON object and exit.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** Children started here that have not exited yet: killed by killAllChildren() on the way out. */
const live = new Set();

const TAIL_LINES = 40;

/** Keeps the last lines a process printed (for error messages) and copies everything to a log. */
class OutputTail {
  constructor(logFile) {
    this.lines = [];
    this.partial = { stdout: "", stderr: "" };
    this.log = logFile ? fs.openSync(logFile, "a") : null;
    this.listeners = [];
  }

  feed(stream, chunk) {
    if (this.log !== null) fs.writeSync(this.log, chunk);
    const text = this.partial[stream] + chunk.toString("utf8");
    const parts = text.split("\n");
    this.partial[stream] = parts.pop();
    for (const line of parts) {
      this.lines.push(line);
      if (this.lines.length > TAIL_LINES) this.lines.shift();
      for (const listener of this.listeners) listener(line);
    }
  }

  onLine(listener) {
    this.listeners.push(listener);
  }

  close() {
    if (this.log !== null) fs.closeSync(this.log);
    this.log = null;
  }

  text() {
    return this.lines.join("\n");
  }
}

/**
 * A long-running process (server or link emulator). `argv` is the full command line; `readyText`
 * is a substring of the line (stdout or stderr) it prints once it serves.
 */
export class Service {
  constructor(name, argv, { logFile } = {}) {
    this.name = name;
    this.argv = argv;
    this.output = new OutputTail(logFile);
    this.exited = null; // {code, signal} once it exits
    this.exitWaiters = [];
    this.proc = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    this.pid = this.proc.pid;
    live.add(this.proc);
    this.proc.stdout.on("data", (c) => this.output.feed("stdout", c));
    this.proc.stderr.on("data", (c) => this.output.feed("stderr", c));
    this.proc.on("error", (e) => this.markExited({ code: null, signal: null, error: e.message }));
    this.proc.on("exit", (code, signal) => this.markExited({ code, signal }));
  }

  markExited(status) {
    if (this.exited) return;
    this.exited = status;
    live.delete(this.proc);
    this.output.close();
    for (const resolve of this.exitWaiters) resolve(status);
    this.exitWaiters = [];
  }

  waitExit() {
    if (this.exited) return Promise.resolve(this.exited);
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  /** Resolves when a line containing `readyText` appears; rejects on exit or after `timeoutMs`. */
  waitReady(readyText, timeoutMs) {
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (err) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(
        () => finish(new Error(`${this.name}: not ready after ${timeoutMs / 1000} s\n${this.output.text()}`)),
        timeoutMs,
      );
      this.output.onLine((line) => {
        if (line.includes(readyText)) finish(null);
      });
      if (this.output.lines.some((line) => line.includes(readyText))) finish(null);
      this.waitExit().then((st) =>
        finish(new Error(`${this.name} exited before it was ready (${describeExit(st)})\n${this.output.text()}`)),
      );
    });
  }

  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 5000) {
    if (this.exited) return this.exited;
    signalQuietly(this.proc, "SIGTERM");
    const timer = setTimeout(() => signalQuietly(this.proc, "SIGKILL"), graceMs);
    const status = await this.waitExit();
    clearTimeout(timer);
    return status;
  }
}

function signalQuietly(proc, signal) {
  try {
    proc.kill(signal);
  } catch {
    // already gone
  }
}

export function describeExit(st) {
  if (!st) return "running";
  if (st.error) return `could not start: ${st.error}`;
  return st.signal ? `signal ${st.signal}` : `exit code ${st.code}`;
}

/**
 * Checks that `pid` runs the program `program` (an absolute path): `ip netns exec` and `prlimit`
 * both exec what they run, so the pid the harness spawned is the server's own pid. The clients get
 * it as --server-pid to read the server's CPU time; a wrong pid would silently give wrong figures.
 */
export function checkPidRuns(pid, program) {
  const exe = fs.readlinkSync(`/proc/${pid}/exe`);
  const want = fs.realpathSync(program);
  if (exe !== want) {
    throw new Error(`pid ${pid} runs ${exe}, expected ${want}: --server-pid would be wrong`);
  }
}

/**
 * Runs a client to completion. Resolves {code, signal, stdout, stderr, timedOut, ms}; never
 * rejects on a failing client (the caller decides what a failure means).
 */
export function runClient(argv, { timeoutMs, logFile }) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const proc = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    live.add(proc);
    const out = [];
    const err = [];
    let timedOut = false;
    proc.stdout.on("data", (c) => out.push(c));
    proc.stderr.on("data", (c) => err.push(c));
    const timer = setTimeout(() => {
      timedOut = true;
      signalQuietly(proc, "SIGKILL");
    }, timeoutMs);
    let settled = false;
    const settle = (code, signal, error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      live.delete(proc);
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(err).toString("utf8") + (error ? `\n${error}` : "");
      if (logFile) fs.appendFileSync(logFile, `$ ${argv.join(" ")}\n${stderr}\n`);
      resolve({ code, signal, stdout, stderr, timedOut, ms: performance.now() - t0 });
    };
    proc.on("error", (e) => settle(null, null, e.message));
    proc.on("close", (code, signal) => settle(code, signal, null));
  });
}

/**
 * The JSON object a client printed: the last one on stdout (a library may print a stray line
 * before it). Throws if there is none.
 */
export function parseClientJson(stdout) {
  const lines = stdout.trim().split("\n");
  // From the last line that opens an object backwards: the object may span several lines.
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i].trimStart().startsWith("{")) continue;
    try {
      return JSON.parse(lines.slice(i).join("\n"));
    } catch {
      // try an earlier start
    }
  }
  throw new Error(`no JSON object on stdout (${stdout.trim().length} characters)`);
}

/** Kills every child still running (used on the way out, including from signal handlers). */
export function killAllChildren(signal = "SIGKILL") {
  for (const proc of live) signalQuietly(proc, signal);
}

export function liveChildren() {
  return live.size;
}

export function logPath(dir, name) {
  return path.join(dir, `${name.replace(/[^A-Za-z0-9_.-]/g, "_")}.log`);
}

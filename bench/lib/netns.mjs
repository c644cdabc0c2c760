// Network namespaces for the benchmark: created per scenario, named after this process
// (pqb-<pid>-lo, pqb-<pid>-srv, pqb-<pid>-cli) so that a later run can tell its own from the
// leftovers of a run that was killed, and removed on every way out.

import { execFileSync } from "node:child_process";
import fs from "node:fs";

const PREFIX = "pqb";
const OWN_NAME = new RegExp(`^${PREFIX}-(\\d+)-[a-z0-9]+$`);

/** Namespaces this process created and has not deleted yet. */
const created = new Set();

function ip(args) {
  return execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

export function namespaceName(role) {
  return `${PREFIX}-${process.pid}-${role}`;
}

/** Names of all network namespaces on the host. */
export function listNamespaces() {
  // `ip netns list` prints "NAME" or "NAME (id: N)" per line.
  return ip(["netns", "list"])
    .split("\n")
    .map((line) => line.trim().split(/\s+/)[0])
    .filter(Boolean);
}

/** Creates a namespace with its loopback interface up. */
export function createNamespace(name) {
  ip(["netns", "add", name]);
  created.add(name);
  ip(["-n", name, "link", "set", "lo", "up"]);
}

/** The argv prefix that runs a program inside namespace `ns` (`ip netns exec` execs it: same pid). */
export function inNamespace(ns, argv) {
  return ["ip", "netns", "exec", ns, ...argv];
}

function pidsIn(name) {
  try {
    return ip(["netns", "pids", name])
      .split("\n")
      .map((s) => Number(s.trim()))
      .filter((pid) => Number.isInteger(pid) && pid > 0);
  } catch {
    return [];
  }
}

function killQuietly(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Deletes a namespace, first killing what still runs in it. Only namespaces named by this
 * harness reach this function, so whatever runs in them was started by a harness run.
 */
export function deleteNamespace(name) {
  const pids = pidsIn(name);
  for (const pid of pids) killQuietly(pid, "SIGKILL");
  try {
    ip(["netns", "del", name]);
  } catch (e) {
    if (listNamespaces().includes(name)) throw e;
  }
  created.delete(name);
}

/** Deletes every namespace this process created (idempotent; errors are reported, not thrown). */
export function deleteOwnNamespaces() {
  for (const name of [...created]) {
    try {
      deleteNamespace(name);
    } catch (e) {
      process.stderr.write(`bench: could not delete namespace ${name}: ${e.message}\n`);
    }
  }
}

/** True if `pid` is a live harness process (node running bench/run.mjs or bench/trip.mjs). */
export function isLiveHarness(pid) {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return cmdline.includes("run.mjs") || cmdline.includes("trip.mjs") || cmdline.includes("srup.mjs");
  } catch {
    return false;
  }
}

/**
 * Removes the pqb-<pid>-* namespaces of harness runs that no longer exist (killed with SIGKILL,
 * say), with the processes still running in them, and link emulators that were left joining them.
 * Returns the names removed.
 */
export function removeStaleNamespaces() {
  const removed = [];
  const stalePids = new Set();
  for (const name of listNamespaces()) {
    const m = OWN_NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || isLiveHarness(pid)) continue;
    stalePids.add(pid);
    try {
      deleteNamespace(name);
      removed.push(name);
    } catch (e) {
      process.stderr.write(`bench: could not delete stale namespace ${name}: ${e.message}\n`);
    }
  }
  // A link emulator runs in the root namespace; an orphaned one names the dead run's namespaces.
  for (const pid of findOrphanedLinkems(stalePids)) killQuietly(pid, "SIGKILL");
  return removed;
}

function findOrphanedLinkems(stalePids) {
  if (stalePids.size === 0) return [];
  const found = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args;
    try {
      args = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (!args[0] || !args[0].endsWith("linkem")) continue;
    const names = args.filter((a) => OWN_NAME.test(a));
    if (names.some((n) => stalePids.has(Number(OWN_NAME.exec(n)[1])))) found.push(Number(entry));
  }
  return found;
}
